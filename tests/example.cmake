# The shipped example trace (tests/data/example-train.db): its generator and its analysis in CI.
add_executable(make_example_trace make_example_trace.c tracegen.c)
target_include_directories(make_example_trace PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(make_example_trace PRIVATE vtanalysis)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME example_trace COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_example.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
  set_tests_properties(example_trace PROPERTIES LABELS cli)
endif()

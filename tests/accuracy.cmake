# The accuracy suite (tests/accuracy, docs/accuracy.md): realistic PyTorch traces, healthy jobs and
# planted problems, written by accgen with their ground truth and scored against `vramtrace analyze`
# by score.py. The test runs the quick subset and asserts what the analyzer gets right today
# (tests/accuracy/baseline.json); the full suite is the `accuracy` target of bench/.
add_executable(accgen accuracy/accgen.c accuracy/scen.c accuracy/fam.c accuracy/loop.c accuracy/pt.c
  accuracy/ptrec.c accuracy/jobsim.c tracegen.c)
target_include_directories(accgen PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy)
target_link_libraries(accgen PRIVATE vttrace m)
target_compile_definitions(accgen PRIVATE VT_ACC_KERNELS="${CMAKE_CURRENT_SOURCE_DIR}/accuracy/kernels.tsv")
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME accuracy_quick COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score.py
    --selftest --suite quick --accgen $<TARGET_FILE:accgen> --vramtrace $<TARGET_FILE:vramtrace>
    --check ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/baseline.json)
  set_tests_properties(accuracy_quick PROPERTIES LABELS analyzer)
endif()

# Command-line tests of record and info (label cli): they run the built vramtrace command.
vt_add_test(NAME test_info SOURCES test_info.c LIBS vttrace LABELS cli)
target_include_directories(test_info PRIVATE ${PROJECT_SOURCE_DIR}/analyzer)
add_dependencies(test_info vramtrace)

vt_add_test(NAME test_record
  SOURCES test_record.c LIBS vtcli LABELS cli)
target_include_directories(test_record PRIVATE ${PROJECT_SOURCE_DIR}/analyzer)
# The installed-tree test runs `cmake --install` on this build.
target_compile_definitions(test_record PRIVATE VT_CMAKE_COMMAND="${CMAKE_COMMAND}")
add_dependencies(test_record vramtrace)
if(TARGET vramtrace_inject)
  add_dependencies(test_record vramtrace_inject)
endif()

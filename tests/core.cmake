# Tracer core tests: decoding, writer, crash safety (label core; also run under ASan+UBSan).
vt_add_test(NAME test_decode SOURCES test_decode.c LIBS vtcore LABELS core)
# kernel_name rows in a process that has the C++ runtime (a PyTorch process); test_decode runs
# the same test in one that has none
# (globally, and privately as a Python extension module's dependency)
add_test(NAME test_decode_cxx COMMAND test_decode decode_kernel_names)
set_tests_properties(test_decode_cxx PROPERTIES SKIP_RETURN_CODE 77 LABELS core
  ENVIRONMENT "VT_TEST_CXX=1;VT_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR}/data;VT_BUILD_DIR=${PROJECT_BINARY_DIR}")
add_test(NAME test_decode_cxx_local COMMAND test_decode decode_kernel_names)
set_tests_properties(test_decode_cxx_local PROPERTIES SKIP_RETURN_CODE 77 LABELS core
  ENVIRONMENT "VT_TEST_CXX=local;VT_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR}/data;VT_BUILD_DIR=${PROJECT_BINARY_DIR}")
vt_add_test(NAME test_layout SOURCES test_layout.c LIBS vtcore LABELS core)
target_compile_definitions(test_layout PRIVATE VT_LAYOUTS_TSV="${CMAKE_CURRENT_SOURCE_DIR}/data/cupti_layouts.tsv")
vt_add_test(NAME test_writer SOURCES test_writer.c LIBS vtcore LABELS core reliability)
vt_add_test(NAME test_writer_fold SOURCES test_writer_fold.c LIBS vtcore LABELS core)
vt_add_test(NAME test_limit SOURCES test_limit.c LIBS vtcore LABELS core)
vt_add_test(NAME test_ksummary SOURCES test_ksummary.c LIBS vtcore LABELS core)
vt_add_test(NAME test_bufpool SOURCES test_bufpool.c LIBS vtcore LABELS core)
vt_add_test(NAME test_flusher SOURCES test_flusher.c LIBS vtcore LABELS core tsan)
vt_add_test(NAME test_watch SOURCES test_watch.c LIBS vtcore LABELS core)
vt_add_test(NAME test_nvtxctl SOURCES test_nvtxctl.c LIBS vtcore LABELS core)
# 4 trials here; the bench target sigkill runs 10 (bench/reliability.cmake).
vt_add_test(NAME test_sigkill SOURCES test_sigkill.c LIBS vtcore LABELS core reliability)
set_property(TEST test_sigkill APPEND PROPERTY ENVIRONMENT VT_SIGKILL_TRIALS=4)
# ksum_convert: a full trace as the always-on mode would have written it (always_on_test.py, example.cmake)
add_executable(ksum_convert ksum_convert.c)
target_link_libraries(ksum_convert PRIVATE vtcore)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  # The always-on mode: the example as record --kernels summary would have written it: the same
  # findings, peaks and phases, each allocation's first and last use, the mode and what it cannot
  # judge stated.
  add_test(NAME always_on_summary COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/always_on_test.py
    $<TARGET_FILE:vramtrace> $<TARGET_FILE:ksum_convert> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
  set_tests_properties(always_on_summary PROPERTIES LABELS cli)
endif()

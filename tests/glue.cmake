# Tests of the CUPTI glue area: configuration, output file, session lifecycle
# (with fork), and the built injection library itself.
vt_add_test(NAME test_config SOURCES test_config.c LIBS vtcore LABELS core)
vt_add_test(NAME test_outfile SOURCES test_outfile.c LIBS vtcore LABELS core)
vt_add_test(NAME test_session SOURCES test_session.c LIBS vtcore LABELS core)
# The API-call decoder and the kernel-parameter scanner, fed the real CUDA 13 parameter structs.
vt_add_test(NAME test_apicall SOURCES test_apicall.c LIBS vtcore LABELS core)
vt_add_test(NAME test_kparams SOURCES test_kparams.c LIBS vtcore LABELS core)

# Loads the real libvramtrace.so (and the real libcupti): not run under ASan.
vt_add_test(NAME test_inject SOURCES test_inject.c LIBS ${CMAKE_DL_LIBS} LABELS cli)
add_dependencies(test_inject vramtrace_inject)
target_compile_definitions(test_inject PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>")

# Drives the library's CUPTI glue through a scripted CUPTI and driver that the
# test program itself exports (-rdynamic), so callbacks are exercised without a GPU.
# Not in the ASan+UBSan run: LeakSanitizer's at-exit check in the children that exit
# while library threads run (exit_while_threads_call_cuda, late_failure_removes_trace)
# fails depending on the binary's layout (its stop-the-world tracer crashes); see
# docs/reliability.md.
vt_add_test(NAME test_inject_cupti SOURCES test_inject_cupti.c LIBS vt_sqlite3 ${CMAKE_DL_LIBS}
  LABELS cli)
set_target_properties(test_inject_cupti PROPERTIES ENABLE_EXPORTS ON)
target_include_directories(test_inject_cupti PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_dependencies(test_inject_cupti vramtrace_inject)
target_compile_definitions(test_inject_cupti PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>")

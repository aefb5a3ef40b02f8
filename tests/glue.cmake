# Tests of the CUPTI glue area: configuration, output file, session lifecycle
# (with fork), and the built injection library itself.
vt_add_test(NAME test_config SOURCES test_config.c LIBS vtcore LABELS core)
vt_add_test(NAME test_outfile SOURCES test_outfile.c LIBS vtcore LABELS core)
vt_add_test(NAME test_session SOURCES test_session.c LIBS vtcore LABELS core)

# Loads the real libvramtrace.so (and the real libcupti): not run under ASan.
vt_add_test(NAME test_inject SOURCES test_inject.c LIBS ${CMAKE_DL_LIBS} LABELS cli)
add_dependencies(test_inject vramtrace_inject)
target_compile_definitions(test_inject PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>")

# Tracer core tests: decoding, writer, crash safety (label core; also run under ASan+UBSan).
vt_add_test(NAME test_decode SOURCES test_decode.c LIBS vtcore LABELS core)
vt_add_test(NAME test_writer SOURCES test_writer.c LIBS vtcore LABELS core)
vt_add_test(NAME test_limit SOURCES test_limit.c LIBS vtcore LABELS core)
vt_add_test(NAME test_bufpool SOURCES test_bufpool.c LIBS vtcore LABELS core)
vt_add_test(NAME test_flusher SOURCES test_flusher.c LIBS vtcore LABELS core tsan)
vt_add_test(NAME test_watch SOURCES test_watch.c LIBS vtcore LABELS core)
vt_add_test(NAME test_sigkill SOURCES test_sigkill.c LIBS vtcore LABELS core)

# Reliability tests: SIGKILL, exit paths, fork + threads, floods, hostile traces, security.
# core: tracer core (also under ASan+UBSan); analyzer: analysis library; cli: the built command.
# tsan: the programs run by the ThreadSanitizer build (tests/run.sh, build-tsan).
vt_add_test(NAME test_rel_sigkill SOURCES test_rel_sigkill.c LIBS vtcore LABELS core)
vt_add_test(NAME test_rel_exit SOURCES test_rel_exit.c LIBS vtcore LABELS core)
vt_add_test(NAME test_rel_fork SOURCES test_rel_fork.c LIBS vtcore LABELS core tsan)

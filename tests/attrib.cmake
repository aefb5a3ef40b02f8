# Attribution core tests: interval index, call-site capture and dedup, Python frames.
vt_add_test(NAME test_intervals SOURCES test_intervals.c LIBS vtcore LABELS core)
# -rdynamic: the test's own functions must be visible to dladdr.
vt_add_test(NAME test_stack SOURCES test_stack.c LIBS vtcore -rdynamic LABELS core)

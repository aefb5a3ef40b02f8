# Attribution core tests: interval index, call-site capture and dedup, Python frames.
vt_add_test(NAME test_intervals SOURCES test_intervals.c LIBS vtcore LABELS core)

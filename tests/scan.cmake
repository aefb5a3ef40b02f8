# The analyzer's pass over the large tables: impossible-row counts, rowid-order reads, fallbacks.
vt_add_test(NAME test_scan SOURCES test_scan.c LIBS vtanalysis vt_tracegen LABELS analyzer)

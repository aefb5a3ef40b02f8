# Analyzer tests: synthetic traces with planted problems and non-problems, reports, the CLI.
foreach(t test_lifetime test_detect_leak test_detect_oom test_detect_spike
    test_detect_retained test_detect_transfer test_report test_analyze_cli)
  vt_add_test(NAME ${t} SOURCES ${t}.c tracegen.c LIBS vtanalysis LABELS analyzer)
endforeach()

# Analyzer tests: synthetic traces with planted problems and non-problems, reports, the CLI.
foreach(t test_lifetime)
  vt_add_test(NAME ${t} SOURCES ${t}.c tracegen.c LIBS vtanalysis LABELS analyzer)
endforeach()

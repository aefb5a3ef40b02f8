# Attribution core tests: interval index, call-site capture and dedup, Python frames.
vt_add_test(NAME test_intervals SOURCES test_intervals.c LIBS vtcore LABELS core)
# -rdynamic: the test's own functions must be visible to dladdr.
vt_add_test(NAME test_stack SOURCES test_stack.c LIBS vtcore -rdynamic LABELS core)
# The Python-frame test embeds CPython: libpython is linked into this test only
# (the tracer itself finds Python at run time).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(VT_PYEMBED QUIET IMPORTED_TARGET python3-embed)
endif()
if(VT_PYEMBED_FOUND)
  vt_add_test(NAME test_pyframes SOURCES test_pyframes.c LIBS vtcore PkgConfig::VT_PYEMBED -rdynamic
              LABELS core)
else()
  message(WARNING "python3-embed not found (install libpython3-dev): test_pyframes is not built")
endif()

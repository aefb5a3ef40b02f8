# Attribution core tests: interval index, call-site capture and dedup, Python frames.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(VT_PYEMBED QUIET IMPORTED_TARGET python3-embed)
endif()

vt_add_test(NAME test_intervals SOURCES test_intervals.c LIBS vtcore LABELS core)
# -rdynamic: the test's own functions must be visible to dladdr.
vt_add_test(NAME test_stack SOURCES test_stack.c LIBS vtcore -rdynamic LABELS core)
# The file:line check symbolizes this program offline with addr2line: it needs debug
# information whatever the build type.
target_compile_options(test_stack PRIVATE -g)
if(VT_PYEMBED_FOUND)
  # Not linked: test_stack loads it with dlopen to check that a late Python is noticed.
  list(GET VT_PYEMBED_LINK_LIBRARIES 0 VT_LIBPYTHON_PATH)
  target_compile_definitions(test_stack PRIVATE VT_TEST_LIBPYTHON="${VT_LIBPYTHON_PATH}")
endif()

# The Python-frame test embeds CPython: libpython is linked into this test only
# (the tracer itself finds Python at run time).
if(VT_PYEMBED_FOUND)
  vt_add_test(NAME test_pyframes SOURCES test_pyframes.c LIBS vtcore PkgConfig::VT_PYEMBED -rdynamic
              LABELS core)
  # The same reader inside a real `python3` process (not embedded), through ctypes.
  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_library(vt_attrib_probe SHARED attrib_probe.c)
    target_link_libraries(vt_attrib_probe PRIVATE vtcore)
    target_compile_definitions(test_pyframes PRIVATE VT_TEST_PYTHON_EXE="${Python3_EXECUTABLE}"
                               VT_TEST_PROBE_LIB="$<TARGET_FILE:vt_attrib_probe>")
    add_dependencies(test_pyframes vt_attrib_probe)
  endif()
else()
  vt_without("Python's headers (libpython3-dev, pkg-config)"
             "test_pyframes and test_pyframes_raw are not built (the tracer finds Python at run time)")
endif()

vt_add_test(NAME test_unwind SOURCES test_unwind.c LIBS vtcore LABELS core)

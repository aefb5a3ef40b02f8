# GIL-free Python frame reader: compared frame for frame with the C-API reader
# inside an embedded CPython (the python3-embed found by tests/attrib.cmake),
# and its layout table checked with offsetof() against the CPython headers.

# test_pyframes_raw_layout includes tracer/pyframes_raw.c itself (to read its
# static table) with the internal CPython headers, so it does not link vtcore.
function(vt_pyraw_layout_test NAME)
  cmake_parse_arguments(L "" "" "LIBS;INCLUDES" ${ARGN})
  vt_add_test(NAME ${NAME} SOURCES test_pyframes_raw_layout.c LIBS ${L_LIBS} ${CMAKE_DL_LIBS}
              LABELS core)
  target_include_directories(${NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tracer ${L_INCLUDES})
endfunction()

# A real interpreter executable of the test's CPython runs the probe library
# (tests/attrib.cmake builds vt_attrib_probe) through ctypes.
function(vt_pyraw_real_interpreter NAME EXE)
  if(TARGET vt_attrib_probe AND EXISTS "${EXE}")
    target_compile_definitions(${NAME} PRIVATE VT_TEST_PYRAW_EXE="${EXE}"
                               VT_TEST_PROBE_LIB="$<TARGET_FILE:vt_attrib_probe>")
    add_dependencies(${NAME} vt_attrib_probe)
  endif()
endfunction()

if(VT_PYEMBED_FOUND)
  vt_add_test(NAME test_pyframes_raw SOURCES test_pyframes_raw.c
              LIBS vtcore PkgConfig::VT_PYEMBED -rdynamic LABELS core)
  vt_pyraw_layout_test(test_pyframes_raw_layout LIBS PkgConfig::VT_PYEMBED)
  # An interpreter of python3-embed's minor version (the test's expectations follow it).
  string(REGEX MATCH "^[0-9]+[.][0-9]+" VT_PYRAW_EMBED_MINOR "${VT_PYEMBED_VERSION}")
  if(VT_PYRAW_EMBED_MINOR)
    find_program(VT_PYRAW_EMBED_EXE NAMES python${VT_PYRAW_EMBED_MINOR})
    if(VT_PYRAW_EMBED_EXE)
      vt_pyraw_real_interpreter(test_pyframes_raw "${VT_PYRAW_EMBED_EXE}")
    endif()
  endif()
endif()

# The same tests against other CPython installations, two programs each:
#   -DVT_PYRAW_TEST_PYTHONS="/opt/py312;/root/.pyenv/versions/3.13.0"
# Each prefix needs include/python3.X/Python.h (with internal/) and a shared
# lib/libpython3.X.so.
set(VT_PYRAW_TEST_PYTHONS "" CACHE STRING "Extra CPython prefixes test_pyframes_raw is built against")
foreach(prefix ${VT_PYRAW_TEST_PYTHONS})
  file(GLOB VT_PYRAW_INC "${prefix}/include/python3.*")
  list(FILTER VT_PYRAW_INC EXCLUDE REGEX "[dmu]$")
  list(LENGTH VT_PYRAW_INC VT_PYRAW_NINC)
  if(NOT VT_PYRAW_NINC EQUAL 1)
    message(WARNING "VT_PYRAW_TEST_PYTHONS: no single include/python3.X under ${prefix}")
    continue()
  endif()
  get_filename_component(VT_PYRAW_VER "${VT_PYRAW_INC}" NAME) # python3.X
  set(VT_PYRAW_LIB "${prefix}/lib/lib${VT_PYRAW_VER}.so")
  if(NOT EXISTS "${VT_PYRAW_LIB}")
    message(WARNING "VT_PYRAW_TEST_PYTHONS: ${VT_PYRAW_LIB} not found")
    continue()
  endif()
  string(REPLACE "python" "" VT_PYRAW_SUFFIX "${VT_PYRAW_VER}")
  string(REPLACE "." "" VT_PYRAW_SUFFIX "${VT_PYRAW_SUFFIX}")
  set(VT_PYRAW_NAME test_pyframes_raw_py${VT_PYRAW_SUFFIX})
  vt_add_test(NAME ${VT_PYRAW_NAME} SOURCES test_pyframes_raw.c
              LIBS vtcore "${VT_PYRAW_LIB}" -rdynamic "-Wl,-rpath,${prefix}/lib" LABELS core)
  target_include_directories(${VT_PYRAW_NAME} PRIVATE "${VT_PYRAW_INC}")
  vt_pyraw_real_interpreter(${VT_PYRAW_NAME} "${prefix}/bin/${VT_PYRAW_VER}")
  vt_pyraw_layout_test(${VT_PYRAW_NAME}_layout LIBS "${VT_PYRAW_LIB}" "-Wl,-rpath,${prefix}/lib"
                       INCLUDES "${VT_PYRAW_INC}")
  # The interpreter must find its own standard library, not the system one.
  set_property(TEST ${VT_PYRAW_NAME} ${VT_PYRAW_NAME}_layout APPEND PROPERTY ENVIRONMENT
               "PYTHONHOME=${prefix}")
endforeach()

# bench_attrib: cost of site capture (native, and with Python frames when
# python3-embed is found) and of kernel-parameter scans over the interval index.
add_executable(bench_attrib bench_attrib.c)
target_link_libraries(bench_attrib PRIVATE vtcore)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(VT_PYEMBED_BENCH QUIET IMPORTED_TARGET python3-embed)
endif()
if(VT_PYEMBED_BENCH_FOUND)
  target_compile_definitions(bench_attrib PRIVATE VT_BENCH_PYTHON)
  target_link_libraries(bench_attrib PRIVATE PkgConfig::VT_PYEMBED_BENCH)
endif()

# The floor CUPTI client of the overhead harness (bench/overhead/run_overhead.py): a
# shared library used as CUDA_INJECTION64_PATH, built beside the benchmarks, never
# installed. Exports only InitializeInjection; needs libcupti by soname, like libvramtrace.so.
add_library(vt_cupti_floor SHARED ${CMAKE_CURRENT_LIST_DIR}/cupti_floor.c)
set_target_properties(vt_cupti_floor PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench
  C_VISIBILITY_PRESET hidden
  SKIP_BUILD_RPATH ON
  BUILD_WITH_INSTALL_RPATH ON
  INSTALL_RPATH "$ORIGIN;${CUDAToolkit_LIBRARY_DIR}")
target_link_libraries(vt_cupti_floor PRIVATE CUDA::cupti Threads::Threads)
target_link_options(vt_cupti_floor PRIVATE -Wl,--enable-new-dtags)

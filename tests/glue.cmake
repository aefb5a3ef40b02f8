# Tests of the CUPTI glue area: configuration, output file, session lifecycle
# (with fork), and the built injection library itself.
vt_add_test(NAME test_config SOURCES test_config.c LIBS vtcore LABELS core)
vt_add_test(NAME test_outfile SOURCES test_outfile.c LIBS vtcore LABELS core)
vt_add_test(NAME test_session SOURCES test_session.c LIBS vtcore LABELS core)
# The API-call decoder and the kernel-parameter scanner, fed the real CUDA 13 parameter structs.
vt_add_test(NAME test_apicall SOURCES test_apicall.c LIBS vtcore LABELS core)
# test_apicall reads the callback-id headers to check that every copy, set and launch is traced.
find_path(VT_CUPTI_CBID_DIR cupti_runtime_cbid.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
if(VT_CUPTI_CBID_DIR)
  target_compile_definitions(test_apicall PRIVATE VT_CUPTI_CBID_DIR="${VT_CUPTI_CBID_DIR}")
endif()
vt_add_test(NAME test_kparams SOURCES test_kparams.c LIBS vtcore LABELS core)

# Loads the real libvramtrace.so (and the real libcupti): not run under ASan.
vt_add_test(NAME test_inject SOURCES test_inject.c LIBS ${CMAKE_DL_LIBS} LABELS cli)
add_dependencies(test_inject vramtrace_inject)
target_compile_definitions(test_inject PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>")

# Drives the library's CUPTI glue through a scripted CUPTI and driver that the
# test program itself exports (-rdynamic), so callbacks are exercised without a GPU.
# Label asan: also run by the ASan+UBSan build (tests/run.sh); the program turns off the
# sanitizer's __tls_get_addr interception, whose bug crashed LeakSanitizer's at-exit scan
# depending on the heap's layout (see the test and docs/reliability.md).
vt_add_test(NAME test_inject_cupti SOURCES test_inject_cupti.c LIBS vt_sqlite3 ${CMAKE_DL_LIBS}
  LABELS cli asan)
set_target_properties(test_inject_cupti PROPERTIES ENABLE_EXPORTS ON)
target_include_directories(test_inject_cupti PRIVATE ${CUDAToolkit_INCLUDE_DIRS}
  ${PROJECT_SOURCE_DIR}/tracer)
add_dependencies(test_inject_cupti vramtrace_inject)
target_compile_definitions(test_inject_cupti PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>")
# The library as one of several CUPTI subscribers (CUPTI 13.3+): the same scripted CUPTI, with the
# per-subscriber (V2) entry points exported (VT_HARNESS_V2).
vt_add_test(NAME test_subscribers SOURCES test_subscribers.c LIBS vt_sqlite3 ${CMAKE_DL_LIBS} LABELS cli)
set_target_properties(test_subscribers PROPERTIES ENABLE_EXPORTS ON)
target_include_directories(test_subscribers PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${PROJECT_SOURCE_DIR}/tracer)
add_dependencies(test_subscribers vramtrace_inject)
target_compile_definitions(test_subscribers PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>")
# A CUDA 12 job's runtime library, for the test that the tracer refuses such a job.
add_library(fake_cudart12 SHARED fake_cudart.c)
set_target_properties(fake_cudart12 PROPERTIES OUTPUT_NAME cudart SUFFIX ".so.12"
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda12)
add_dependencies(test_inject_cupti fake_cudart12)
target_compile_definitions(test_inject_cupti PRIVATE VT_FAKE_CUDART12="$<TARGET_FILE:fake_cudart12>")

# torch.profiler inside a traced Python job, end to end: the same scripted CUPTI (and its Kineto)
# under an embedded CPython that runs the record hook and the stand-in torch of tests/pyhook.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(VT_PYEMBED QUIET IMPORTED_TARGET python3-embed)
endif()
if(VT_PYEMBED_FOUND)
  vt_add_test(NAME test_lend_py SOURCES test_lend_py.c LIBS vt_sqlite3 PkgConfig::VT_PYEMBED ${CMAKE_DL_LIBS}
    LABELS cli asan)
  # (the ASan stage runs it: the interpreter's own objects at exit are not the tracer's leaks)
  set_property(TEST test_lend_py APPEND PROPERTY ENVIRONMENT
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan-python.supp:print_suppressions=0")
  set_target_properties(test_lend_py PROPERTIES ENABLE_EXPORTS ON)
  target_include_directories(test_lend_py PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${PROJECT_SOURCE_DIR}/tracer)
  add_dependencies(test_lend_py vramtrace_inject)
  target_compile_definitions(test_lend_py PRIVATE VT_INJECT_SO="$<TARGET_FILE:vramtrace_inject>"
    VT_PYHOOK_DIR="${PROJECT_SOURCE_DIR}/analyzer/pyhook" VT_FAKE_TORCH_DIR="${CMAKE_CURRENT_SOURCE_DIR}/pyhook/fake_torch")
else()
  message(WARNING "python3-embed not found (install libpython3-dev): test_lend_py is not built")
endif()

# CUDA C launches as nvcc compiles them (kernel<<<...>>> -> __cudaLaunchKernel), for
# test_inject_cupti: nvcc_launches.cu built twice with the toolkit's nvcc, for the legacy
# and the per-thread default stream, into libraries that link no CUDA runtime (the test
# answers the runtime's calls). Without nvcc the test skips.
if(VT_BUILD_SAMPLES AND CMAKE_CUDA_COMPILER)
  set(VT_NVCC_LAUNCHES "")
  foreach(variant legacy ptsz)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/nvcc_launches_${variant}.so)
    set(flags "")
    if(VT_WERROR)
      list(APPEND flags -Werror all-warnings)
    endif()
    if(variant STREQUAL "ptsz")
      list(APPEND flags --default-stream per-thread)
    endif()
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_CUDA_COMPILER} -shared -Xcompiler=-fPIC -cudart none -arch=sm_90
        -Xcompiler=-Wall,-Wextra ${flags}
        -o ${out} ${CMAKE_CURRENT_SOURCE_DIR}/nvcc_launches.cu
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/nvcc_launches.cu
      COMMENT "nvcc: nvcc_launches.cu (${variant} default stream)" VERBATIM)
    list(APPEND VT_NVCC_LAUNCHES ${out})
  endforeach()
  add_custom_target(nvcc_launches DEPENDS ${VT_NVCC_LAUNCHES})
  add_dependencies(test_inject_cupti nvcc_launches)
  target_compile_definitions(test_inject_cupti PRIVATE
    VT_NVCC_LAUNCHES_SO="${CMAKE_CURRENT_BINARY_DIR}/nvcc_launches_legacy.so"
    VT_NVCC_LAUNCHES_PTSZ_SO="${CMAKE_CURRENT_BINARY_DIR}/nvcc_launches_ptsz.so")
elseif(NOT VT_BUILD_SAMPLES)
  target_compile_definitions(test_inject_cupti PRIVATE
    VT_NVCC_LAUNCHES_WHY="built with VT_BUILD_SAMPLES=OFF: no CUDA C launches to replay")
else()
  target_compile_definitions(test_inject_cupti PRIVATE
    VT_NVCC_LAUNCHES_WHY="nvcc was not found when this test was built: no CUDA C launches to replay")
endif()

# A CUDA job without a GPU for `vramtrace record` end to end (tests/fake_job.c): the scripted
# CUPTI and driver of cupti_harness.h, exported, and the tracer loaded from CUDA_INJECTION64_PATH.
add_executable(fake_job fake_job.c)
target_link_libraries(fake_job PRIVATE vt_sqlite3 ${CMAKE_DL_LIBS})
set_target_properties(fake_job PROPERTIES ENABLE_EXPORTS ON)
target_include_directories(fake_job PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS}
  ${PROJECT_SOURCE_DIR}/tracer)
add_dependencies(test_record fake_job)
target_compile_definitions(test_record PRIVATE VT_FAKE_JOB="$<TARGET_FILE:fake_job>")

# GPU tests: each CUDA sample run under libvramtrace.so, its trace checked against
# the sample's known answer (tests/gpu_verify.c). Without a GPU they report skipped.

# The driver: probes for a GPU (dlopen libcuda.so.1: no link to the driver), runs
# one sample with the injection environment, checks the trace it left.
add_executable(gpu_check gpu_check.c gpu_verify.c)
target_include_directories(gpu_check PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(gpu_check PRIVATE vttrace ${CMAKE_DL_LIBS})

# Test doubles of the driver (a libcuda.so.1 with cuInit and cuDeviceGetCount) and of
# a sample (writes the trace a real run would), so that gpu_check itself runs here.
add_library(gpu_fake_cuda SHARED gpu_fake_cuda.c)
set_target_properties(gpu_fake_cuda PROPERTIES OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fakecuda)
add_executable(gpu_fake_sample gpu_fake_sample.c gpu_fake_trace.c gpu_verify.c)
target_include_directories(gpu_fake_sample PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(gpu_fake_sample PRIVATE vttrace)

# The known-answer checks on hand-made traces, and gpu_check run end to end on the
# test doubles: runs everywhere (and under ASan/UBSan), so neither can rot unseen.
vt_add_test(NAME gpu_verify_test SOURCES gpu_verify_test.c gpu_verify.c gpu_fake_trace.c
  LIBS vttrace LABELS core)
add_dependencies(gpu_verify_test gpu_check gpu_fake_cuda gpu_fake_sample)
set_property(TEST gpu_verify_test APPEND PROPERTY ENVIRONMENT
  "VT_GPU_CHECK=$<TARGET_FILE:gpu_check>"
  "VT_FAKE_SAMPLE_BIN=$<TARGET_FILE:gpu_fake_sample>"
  "VT_FAKE_CUDA=$<TARGET_FILE:gpu_fake_cuda>")

if(TARGET vramtrace_inject AND VT_BUILD_SAMPLES)
  # NVTX_INJECTION64_PATH must name libcupti; gpu_check also puts its directory
  # first on the sample's LD_LIBRARY_PATH. VT_CUPTI_LIB in the test's environment
  # overrides it where the GPU machine keeps libcupti elsewhere.
  get_target_property(VT_CUPTI_LOCATION CUDA::cupti IMPORTED_LOCATION)
  if(VT_CUPTI_LOCATION)
    file(REAL_PATH "${VT_CUPTI_LOCATION}" VT_CUPTI_LOCATION)
  else()
    set(VT_CUPTI_LOCATION "$<TARGET_FILE:CUDA::cupti>")
  endif()
  foreach(name ${VT_SAMPLES})
    add_test(NAME gpu_${name}
      COMMAND gpu_check ${name} $<TARGET_FILE:sample_${name}> $<TARGET_FILE:vramtrace_inject>
        ${VT_CUPTI_LOCATION})
    set_tests_properties(gpu_${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu TIMEOUT 300)
  endforeach()
endif()


# The GPU run's rehearsal and what it leaves (docs/validation.md): tests/gpu/device-run.sh on
# stand-ins, its driver on steps of its own, and the analyzer's verdicts on the traces kept
# from real GPU runs in tests/data/gpu (skipped while there are none).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME gpu_data_verdicts
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/data_verdicts.py $<TARGET_FILE:vramtrace>)
  add_test(NAME gpu_data_verdicts_check
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/data_verdicts_test.py $<TARGET_FILE:vramtrace>)
  set_tests_properties(gpu_data_verdicts gpu_data_verdicts_check PROPERTIES LABELS analyzer SKIP_RETURN_CODE 77)
endif()
if(TARGET vramtrace_inject AND VT_BUILD_SAMPLES AND Python3_Interpreter_FOUND)
  # cmake --build BUILD --target gpu-carry: the folder a GPU machine needs, SOURCE/build-carry.
  set(VT_CARRY_DEPENDS vramtrace vramtrace_inject gpu_check)
  foreach(name ${VT_SAMPLES})
    list(APPEND VT_CARRY_DEPENDS sample_${name})
  endforeach()
  if(VT_BUILD_BENCH)
    list(APPEND VT_CARRY_DEPENDS vt_cupti_floor)
  endif()
  add_custom_target(gpu-carry
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/carry.py ${CMAKE_BINARY_DIR}
      ${PROJECT_SOURCE_DIR}/build-carry
    DEPENDS ${VT_CARRY_DEPENDS} USES_TERMINAL
    COMMENT "Assembling build-carry for the GPU machine (tests/gpu/carry.py)")
  # rehearsal: every step on stand-ins, about a minute on an idle machine (label rehearsal);
  # driver: timeouts, missing results, the size cap and the budget on steps of its own.
  foreach(group rehearsal driver)
    add_test(NAME device_run_${group}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/device_run_test.py ${CMAKE_BINARY_DIR} ${group})
  endforeach()
  set_tests_properties(device_run_rehearsal PROPERTIES LABELS rehearsal SKIP_RETURN_CODE 77 TIMEOUT 1800)
  set_tests_properties(device_run_driver PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

# Analyzer tests: synthetic traces with planted problems and non-problems, reports, the CLI.
foreach(t test_lifetime test_detect_leak test_detect_oom test_detect_spike test_group
    test_detect_retained test_detect_transfer test_report test_analyze_cli)
  vt_add_test(NAME ${t} SOURCES ${t}.c LIBS vtreport vt_tracegen LABELS analyzer)
endforeach()
# The peak's breakdown, what would fit, and diff, on synthetic jobs of known make-up (bdjob.c).
foreach(t test_breakdown test_diff)
  vt_add_test(NAME ${t} SOURCES ${t}.c bdjob.c LIBS vtreport vt_tracegen LABELS analyzer)
endforeach()
target_compile_definitions(test_breakdown PRIVATE VT_REAL_TESTS="${CMAKE_CURRENT_SOURCE_DIR}/data/real")

# The allocator replayed at a batch scale (allocsim.c), on request streams worked out by hand.
vt_add_test(NAME test_allocsim SOURCES test_allocsim.c LIBS vtanalysis LABELS analyzer)
target_include_directories(test_allocsim PRIVATE ${PROJECT_SOURCE_DIR}/analyzer)

# Kernel roles by name, on the real kernel names the accuracy suite's generator uses.
vt_add_test(NAME test_kernel_role SOURCES test_kernel_role.c LIBS vtanalysis LABELS analyzer)
target_include_directories(test_kernel_role PRIVATE ${PROJECT_SOURCE_DIR}/analyzer)
target_compile_definitions(test_kernel_role PRIVATE VT_KERNELS_TSV="${CMAKE_CURRENT_SOURCE_DIR}/accuracy/kernels.tsv")

# The traces the GPU tests' fixture builds for each CUDA sample, analyzed as docs/samples.md says.
vt_add_test(NAME test_analyze_samples SOURCES test_analyze_samples.c gpu_fake_trace.c
  LIBS vtreport vt_tracegen LABELS analyzer)

# Shared text (formats, escapers, UTF-8, caps) and the option parser.
vt_add_test(NAME test_text SOURCES test_text.c LIBS vtutil LABELS analyzer)
vt_add_test(NAME test_opts SOURCES test_opts.c LIBS vtutil LABELS analyzer)
# The files removed on a termination signal (util/cleanup.c).
vt_add_test(NAME test_cleanup SOURCES test_cleanup.c LIBS vtutil LABELS analyzer)
vt_add_test(NAME test_demangle SOURCES test_demangle.c LIBS vttrace LABELS core)

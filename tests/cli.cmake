# Command-line tests of record and info (label cli): they run the built vramtrace command.
vt_add_test(NAME test_info SOURCES test_info.c LIBS vtutil vttrace LABELS cli)
add_dependencies(test_info vramtrace)
vt_add_test(NAME test_upgrade SOURCES test_upgrade.c LIBS vtutil vttrace LABELS cli)
add_dependencies(test_upgrade vramtrace)

vt_add_test(NAME test_record
  SOURCES test_record.c LIBS vtcli LABELS cli)
# The installed-tree test runs `cmake --install` on this build.
target_compile_definitions(test_record PRIVATE VT_CMAKE_COMMAND="${CMAKE_COMMAND}")
add_dependencies(test_record vramtrace)
if(TARGET vramtrace_inject)
  add_dependencies(test_record vramtrace_inject)
endif()

# The Debian package (cpack -G DEB) installed into a scratch root: the installed command runs
# and finds its tracer and Python hook (tests/package_test.sh; skipped without dpkg-deb).
add_test(NAME package_deb COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/package_test.sh ${PROJECT_BINARY_DIR}
  ${CMAKE_CPACK_COMMAND})
set_tests_properties(package_deb PROPERTIES LABELS cli SKIP_RETURN_CODE 77)

# A scripted libnvidia-ml (tests/fake_nvml.c) that record loads in its own process through
# VRAMTRACE_NVML: other processes' memory without a GPU.
add_library(fake_nvml SHARED fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES OUTPUT_NAME nvidia-ml SUFFIX ".so.1" PREFIX "lib"
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_nvml)
add_dependencies(test_record fake_nvml)
target_compile_definitions(test_record PRIVATE VT_FAKE_NVML="$<TARGET_FILE:fake_nvml>")

# export's usage names every form and option: --help's first line, and the line a bare call prints.
add_test(NAME export_usage_help COMMAND vramtrace export --help)
set_tests_properties(export_usage_help PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "usage: vramtrace export \\[--from T\\] \\[--to T\\] \\[--gzip\\] \\[--debug-dir DIR\\] --perfetto OUT.json TRACE")
# ... and --csv's list of tables is the one it writes (tensor_event was missing from it).
add_test(NAME export_usage_csv_tables COMMAND vramtrace export --help)
set_tests_properties(export_usage_csv_tables PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "\\(memory_event, tensor_event\n *where a trace has tensor rows, kernel, memcpy, memset, nvtx_range,\n *api_call, oom_event, device, meta\\)")
# export --snapshot of a trace without one allocation of known address and size (an Nsight export recorded
# without --cuda-memory-usage): said, not an empty file in silence.
add_test(NAME export_snapshot_empty_said COMMAND vramtrace export --snapshot -
  ${CMAKE_CURRENT_SOURCE_DIR}/data/real/fuser_h200_test_matmul_nsys2024.sqlite)
set_tests_properties(export_snapshot_empty_said PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION
  "vramtrace: - is empty, memory_viz has nothing to draw: allocations and frees unknown \\(the imported file records none")
add_test(NAME export_usage_bare COMMAND vramtrace export ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
set_tests_properties(export_usage_bare PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "or --csv DIR TRACE\\.\\.\\., or --snapshot OUT\\.pickle TRACE")

# SQL that begins with a comment reads as an option: the message says how to pass it (it said "unknown option").
add_test(NAME sql_comment_first COMMAND vramtrace sql ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
  "-- the sites allocating the most device memory, first")
set_tests_properties(sql_comment_first PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION
  "vramtrace: sql: '-- the sites allocating the most device ?\\.\\.\\.' is no option \\(an argument that starts with '-': put -- before it\\)")
# diff names an input it reads as another (here the same file given twice) as analyze does, not dropped in silence.
add_test(NAME diff_counted_once COMMAND vramtrace diff --base ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
  --new ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db --new ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
set_tests_properties(diff_counted_once PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "vramtrace: diff: note: [^\n]*example-train\\.db was given again as [^\n]*: the same file, analyzed and counted once")

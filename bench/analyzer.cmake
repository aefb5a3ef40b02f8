# bench_analyzer: `vramtrace analyze` end to end on generated 1 M / 10 M event traces
# (events/s, peak RSS) against a raw SQLite scan of the same tables.
add_executable(bench_analyzer bench_analyzer.c)
target_link_libraries(bench_analyzer PRIVATE vttrace)
target_compile_definitions(bench_analyzer PRIVATE VT_BENCH_VRAMTRACE="$<TARGET_FILE:vramtrace>")
add_dependencies(bench_analyzer vramtrace)
# The overhead harness for GPU jobs (floor CUPTI client and PyTorch scripts).
if(VT_HAVE_CUDA)
  include(${CMAKE_CURRENT_LIST_DIR}/overhead/overhead.cmake)
endif()
# bench_export: `vramtrace export` plain and --gzip on one trace (bytes/event, events/s).
add_executable(bench_export bench_export.c)
target_compile_definitions(bench_export PRIVATE VT_BENCH_VRAMTRACE="$<TARGET_FILE:vramtrace>")
add_dependencies(bench_export vramtrace)
# bench_allocsim: what would fit's allocator replay (allocsim.c) bisected over 1 M and 4 M lifetimes.
add_executable(bench_allocsim bench_allocsim.c)
target_link_libraries(bench_allocsim PRIVATE vtanalysis)
target_include_directories(bench_allocsim PRIVATE ${PROJECT_SOURCE_DIR}/analyzer)

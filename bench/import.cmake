# bench_import: `vramtrace import` on a generated PyTorch snapshot and Kineto trace (events/s,
# peak RSS) against the unpickler and the JSON reader alone.
add_executable(bench_import bench_import.c)
target_link_libraries(bench_import PRIVATE vtcli)
# bench_bigsnap: `vramtrace import` of a generated 1 GiB PyTorch snapshot (bench/gen_snapshot.c, one and
# four devices) and of the real snapshots: events per CPU second and peak RSS against the file's size.
# The generated files are kept in DIR (default /tmp) and reused; `bench_bigsnap -h` for the options.
if(NOT TARGET gen_snapshot)
  add_executable(gen_snapshot gen_snapshot.c)
endif()
add_executable(bench_bigsnap bench_bigsnap.c)
target_link_libraries(bench_bigsnap PRIVATE vtcli)
target_compile_definitions(bench_bigsnap PRIVATE VT_BENCH_GEN="$<TARGET_FILE:gen_snapshot>"
  VT_BENCH_REAL_DATA="${VT_REAL_DATA}")
add_dependencies(bench_bigsnap gen_snapshot)

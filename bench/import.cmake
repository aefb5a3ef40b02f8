# bench_import: `vramtrace import` on a generated PyTorch snapshot and Kineto trace (events/s,
# peak RSS) against the unpickler and the JSON reader alone.
add_executable(bench_import bench_import.c)
target_link_libraries(bench_import PRIVATE vtcli)

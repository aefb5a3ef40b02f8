# bench_writer: decode + insert of a realistic CUPTI record mix through the real writer, vs raw SQLite.
add_executable(bench_writer bench_writer.c)
target_link_libraries(bench_writer PRIVATE vtcore)
target_include_directories(bench_writer PRIVATE ${PROJECT_SOURCE_DIR}/tests) # core_rec.h: the test record layout

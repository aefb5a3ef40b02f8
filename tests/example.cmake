# The shipped example trace (tests/data/example-train.db): its generator and its analysis in CI.
# (the job is written by the accuracy suite's process model: tests/accuracy/jobsim.c and pt.c)
add_executable(make_example_trace make_example_trace.c)
target_include_directories(make_example_trace PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(make_example_trace PRIVATE
  VT_EXAMPLE_KERNELS="${CMAKE_CURRENT_SOURCE_DIR}/accuracy/kernels.tsv")
target_link_libraries(make_example_trace PRIVATE vt_jobsim)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  # (--gen: the shipped file is what make_example_trace writes today, at the current schema)
  add_test(NAME example_trace COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_example.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db --gen $<TARGET_FILE:make_example_trace>)
  set_tests_properties(example_trace PROPERTIES LABELS cli)
  # The same story as written by schema version 1 (times stored absolute): still read, same findings.
  add_test(NAME example_trace_v1 COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_example.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db)
  set_tests_properties(example_trace_v1 PROPERTIES LABELS cli)
  # redact: names and paths replaced, the same findings, refusals with their exit codes.
  add_test(NAME redact COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_redact.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
  set_tests_properties(redact PROPERTIES LABELS cli)
endif()
if(Python3_Interpreter_FOUND)
  # docs/queries.md's DuckDB recipe on 64 ranks (export --csv, DuckDB from npm): skipped when
  # Node.js or @duckdb/node-api is not installed (.ci/run installs it).
  add_test(NAME duckdb_ranks COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/duckdb/duckdb_test.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
  set_tests_properties(duckdb_ranks PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
endif()
if(Python3_Interpreter_FOUND)
  # The HTML report of the example, of 8, 64 and 1000 ranks (copies of the example trace), of a
  # file without memory data and of one with an OOM (the example as schema version 1 wrote it): bounded
  # size, one scale, the figures the script draws, the imbalance (html_ranks); the same reports (but 1000 ranks) in headless Chromium through puppeteer-core from
  # npm, driven as a person would, screenshots compared (html_browser): skipped when either is not
  # installed (.ci/run installs both).
  add_test(NAME html_ranks COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/html/html_test.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
    ${CMAKE_CURRENT_SOURCE_DIR}/data/import/kineto_noaddr.json.gz ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db)
  add_test(NAME html_browser COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/html/html_test.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
    ${CMAKE_CURRENT_SOURCE_DIR}/data/import/kineto_noaddr.json.gz ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db
    --browser)
  # What the page's script draws as the text report says it (a phase's span, an OOM of unknown size), in headless
  # Chromium (--dump-dom): skipped without Chromium.
  add_test(NAME html_windows COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/html/html_windows_test.py
    $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
    ${CMAKE_CURRENT_SOURCE_DIR}/data/import/nsys2022_two_processes.sqlite)
  set_tests_properties(html_windows PROPERTIES LABELS analyzer SKIP_RETURN_CODE 77 TIMEOUT 300)
  # slow (tests/README.md): about 20 s of CPU each, most of it the 1000-rank report.
  set_tests_properties(html_ranks html_browser PROPERTIES LABELS "analyzer;slow" SKIP_RETURN_CODE 77 TIMEOUT 900)
  get_property(VT_HAVE_ZLIB GLOBAL PROPERTY VT_HAVE_ZLIB)
  if(NOT VT_HAVE_ZLIB)
    set_property(TEST html_ranks html_browser APPEND PROPERTY ENVIRONMENT VT_HAVE_ZLIB=0)
  endif()
  # Said at configure time too (the tests say it again when they skip).
  if(DEFINED ENV{VT_NPM_PREFIX})
    set(VT_NPM_PREFIX "$ENV{VT_NPM_PREFIX}")
  else()
    set(VT_NPM_PREFIX "$ENV{HOME}/.cache/vramtrace-npm")
  endif()
  find_program(VT_NODE_EXECUTABLE node)
  find_program(VT_CHROMIUM_EXECUTABLE NAMES chromium chromium-browser)
  if(NOT VT_NODE_EXECUTABLE OR NOT EXISTS "${VT_NPM_PREFIX}/node_modules/@duckdb/node-api")
    vt_without("Node.js or @duckdb/node-api (npm, under ${VT_NPM_PREFIX})" "duckdb_ranks skips")
  endif()
  if(NOT VT_NODE_EXECUTABLE OR NOT VT_CHROMIUM_EXECUTABLE OR NOT EXISTS "${VT_NPM_PREFIX}/node_modules/puppeteer-core")
    vt_without("Node.js, Chromium or puppeteer-core (npm, under ${VT_NPM_PREFIX})" "html_browser skips")
  endif()
endif()
if(Python3_Interpreter_FOUND)
  # export --perfetto: the "memory by category" tracks at each device's peak are its breakdown (analyze),
  # on the examples, on a snapshot whose history starts late (memory of unknown time allocated before it
  # stands on the curves from the start) and, with VT_REAL_DATA (tests/import.cmake), on real files imported.
  add_test(NAME export_perfetto_breakdown COMMAND ${Python3_EXECUTABLE}
    ${CMAKE_CURRENT_SOURCE_DIR}/perfetto_breakdown_test.py $<TARGET_FILE:vramtrace>
    ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db
    ${CMAKE_CURRENT_SOURCE_DIR}/data/import/snap_small.pickle)
  set_tests_properties(export_perfetto_breakdown PROPERTIES LABELS cli TIMEOUT 600)
  # export --snapshot: a PyTorch memory snapshot of a trace, of Nsight, Kineto and snapshot imports, and
  # of a generated job with expandable segments (its trace and its history's snapshot); its structure as
  # PyTorch's memory_viz reads it, and round-tripped through import.
  set(_imp ${CMAKE_CURRENT_SOURCE_DIR}/data/import)
  add_test(NAME export_snapshot COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_export_test.py
    $<TARGET_FILE:vramtrace> --fitgen $<TARGET_FILE:fitgen> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
    ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db ${_imp}/nsys2024_enums.sqlite
    ${_imp}/kineto_small.json ${_imp}/snap_small.pickle)
  set_tests_properties(export_snapshot PROPERTIES LABELS cli TIMEOUT 300)
  # The same snapshots opened in PyTorch's memory_viz (tests/third_party/memory_viz) in headless Chromium,
  # d3@5 served from npm: skipped when Chromium, puppeteer-core or d3@5 is not installed (.ci/run installs them).
  add_test(NAME memory_viz_browser COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_export_test.py
    $<TARGET_FILE:vramtrace> --browser --fitgen $<TARGET_FILE:fitgen> ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db
    ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db ${_imp}/nsys2024_enums.sqlite
    ${_imp}/kineto_small.json ${_imp}/snap_small.pickle)
  set_tests_properties(memory_viz_browser PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

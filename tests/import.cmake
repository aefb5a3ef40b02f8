# Importers (analyzer/import): the unpickler, the JSON reader, the trace builder, each format's
# importer on small fixtures of our own and on the real files in shared/real-data when present
# (beside the checkout, or one level further up for a worktree; -DVT_REAL_DATA=DIR overrides).
if(NOT VT_REAL_DATA)
  foreach(d ${PROJECT_SOURCE_DIR}/../shared/real-data ${PROJECT_SOURCE_DIR}/../../shared/real-data)
    if(NOT VT_REAL_DATA AND EXISTS ${d})
      get_filename_component(VT_REAL_DATA ${d} ABSOLUTE)
    endif()
  endforeach()
endif()
if(NOT VT_REAL_DATA)
  vt_without("the real files (-DVT_REAL_DATA=DIR)" "realdata_verdicts, snapshot_merge and the real-file cases of "
             "test_pickle, test_json and test_import skip")
endif()
foreach(t test_pickle test_json)
  vt_add_test(NAME ${t} SOURCES ${t}.c LIBS vtimport LABELS analyzer)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "VT_REAL_DATA=${VT_REAL_DATA}")
endforeach()
# The peak's breakdown on the real files (test_breakdown: analyzer.cmake).
set_property(TEST test_breakdown APPEND PROPERTY ENVIRONMENT "VT_REAL_DATA=${VT_REAL_DATA}")
if(TEST export_perfetto_breakdown) # the category tracks against the breakdown (example.cmake)
  set_property(TEST export_perfetto_breakdown APPEND PROPERTY ENVIRONMENT "VT_REAL_DATA=${VT_REAL_DATA}")
endif()

# Fuzzing the readers (tests/fuzz/run.sh builds fuzz_pickle and fuzz_json with libFuzzer),
# one input in eight (sizes divisible by 8) through the whole importer too (vt_fuzz_common: reliability.cmake);
# every build replays their stored inputs as plain tests (under ASan+UBSan as test_rel_fuzz_trace).
foreach(t pickle json)
  set(dirs ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${t})
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress/${t})
    set(dirs "${dirs}:${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress/${t}")
  endif()
  vt_add_test(NAME test_rel_fuzz_${t} SOURCES fuzz/fuzz_${t}.c fuzz/fuzz_replay.c LIBS vt_fuzz_common LABELS analyzer)
  target_compile_definitions(test_rel_fuzz_${t} PRIVATE VT_FUZZ_DIRS="${dirs}")
  if(VT_FUZZ)
    add_executable(fuzz_${t} fuzz/fuzz_${t}.c)
    target_link_libraries(fuzz_${t} PRIVATE vt_fuzz_common)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()

# The importer's range set (mapped pages of expandable segments).
vt_add_test(NAME test_rangeset SOURCES test_rangeset.c LIBS vtimport LABELS analyzer)
target_include_directories(test_rangeset PRIVATE ${PROJECT_SOURCE_DIR}/analyzer/import)

# The importers end to end (and the import subcommand, in-process).
vt_add_test(NAME test_import SOURCES test_import.c LIBS vtcli LABELS analyzer)
set_property(TEST test_import APPEND PROPERTY ENVIRONMENT "VT_REAL_DATA=${VT_REAL_DATA}")

# analyze --snapshot: a real snapshot merged into a matching synthetic trace (skipped without real-data).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME snapshot_merge
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_merge_test.py $<TARGET_FILE:vramtrace>
      "${VT_REAL_DATA}")
  set_tests_properties(snapshot_merge PROPERTIES LABELS analyzer SKIP_RETURN_CODE 77)
endif()

# The PyTorch snapshot generator of the import bench (bench/gen_snapshot.c): a small generated file is
# what Python's pickler writes for it, and its import holds exactly the counts and peaks it wrote.
add_executable(gen_snapshot ${PROJECT_SOURCE_DIR}/bench/gen_snapshot.c)
if(Python3_Interpreter_FOUND)
  add_test(NAME snapshot_generated
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gen_snapshot_test.py $<TARGET_FILE:gen_snapshot>
      $<TARGET_FILE:vramtrace>)
  set_tests_properties(snapshot_generated PROPERTIES LABELS analyzer)
endif()

# Temporary traces of imported inputs and half-written outputs are removed when the command dies
# of SIGPIPE or SIGTERM (util/cleanup.c), and at a normal exit.
if(Python3_Interpreter_FOUND)
  add_test(NAME import_temp_signal
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/import_temp_signal.py $<TARGET_FILE:vramtrace>
      ${CMAKE_CURRENT_SOURCE_DIR}/data)
  set_tests_properties(import_temp_signal PROPERTIES LABELS analyzer)
endif()

# The real files analyzed: each file's verdict (kinds, severities, the site named, no false finding),
# as docs/import.md "The real files, analyzed" gives it (skipped without real-data; the shipped ones always run).
if(Python3_Interpreter_FOUND)
  add_test(NAME realdata_verdicts
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/realdata_verdicts.py $<TARGET_FILE:vramtrace>
      "${VT_REAL_DATA}")
  set_tests_properties(realdata_verdicts PROPERTIES LABELS analyzer SKIP_RETURN_CODE 77)
  # The real files shipped in tests/data/real (their provenance and licenses in its README): never skipped.
  add_test(NAME realdata_verdicts_shipped
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/realdata_verdicts.py --shipped
      $<TARGET_FILE:vramtrace> ${CMAKE_CURRENT_SOURCE_DIR}/data/real)
  set_tests_properties(realdata_verdicts_shipped PROPERTIES LABELS analyzer SKIP_RETURN_CODE 77)
  get_property(VT_HAVE_ZLIB GLOBAL PROPERTY VT_HAVE_ZLIB)
  if(NOT VT_HAVE_ZLIB)
    set_property(TEST realdata_verdicts realdata_verdicts_shipped APPEND PROPERTY ENVIRONMENT VT_HAVE_ZLIB=0)
  endif()
endif()

# export --snapshot of real PyTorch snapshots (imported: the allocator's blocks in their segments) round-tripped,
# and opened in PyTorch's memory_viz (skipped without Chromium, puppeteer-core or d3@5): when real-data is there.
set(_real_snaps cs336_niu_fwd_bwd_200.pickle flexgen_yiyi_oom_snapshot_v1format.pickle
    cs336_silmont2000_mem_snapshot_small.pickle)
list(TRANSFORM _real_snaps PREPEND "${VT_REAL_DATA}/")
if(Python3_Interpreter_FOUND AND VT_REAL_DATA AND EXISTS "${VT_REAL_DATA}/cs336_niu_fwd_bwd_200.pickle")
  add_test(NAME export_snapshot_real COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_export_test.py
    $<TARGET_FILE:vramtrace> ${_real_snaps})
  add_test(NAME memory_viz_real COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_export_test.py
    $<TARGET_FILE:vramtrace> --browser ${_real_snaps})
  set_tests_properties(export_snapshot_real memory_viz_real PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

# Every kind of input gets an answer (tests/check_inputs.py): standard input, a terminal, a pipe
# (/dev/fd/N), a FIFO with and without a writer, a directory of traces, an Nsight export whose view
# never ends, temporary files a killed run left.
if(Python3_Interpreter_FOUND)
  add_test(NAME inputs
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_inputs.py $<TARGET_FILE:vramtrace>
      ${CMAKE_CURRENT_SOURCE_DIR}/data)
  set_tests_properties(inputs PROPERTIES LABELS analyzer)
endif()

# Every command and format reports the same figures from one time origin (tests/check_agree.py): info
# (text, JSON), analyze (text, JSON, Markdown, HTML), export (Perfetto, CSV), and each phase's window
# from the report given to export --from/--to holds the phase's events; the stored traces, the import
# fixtures and the shipped real files, and the real-data files when the build names them.
if(Python3_Interpreter_FOUND)
  add_test(NAME agree
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_agree.py $<TARGET_FILE:vramtrace>
      ${CMAKE_CURRENT_SOURCE_DIR}/data ${CMAKE_CURRENT_SOURCE_DIR}/data/import ${CMAKE_CURRENT_SOURCE_DIR}/data/real)
  add_test(NAME agree_realdata
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_agree.py $<TARGET_FILE:vramtrace> "${VT_REAL_DATA}")
  set_tests_properties(agree agree_realdata PROPERTIES LABELS analyzer SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

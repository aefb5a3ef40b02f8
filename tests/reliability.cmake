# Reliability tests: SIGKILL, exit paths, file-size limit, fork + threads, floods, hostile traces, security.
# core: tracer core (also under ASan+UBSan); analyzer: analysis library; cli: the built command.
# tsan: the programs run by the ThreadSanitizer build (tests/run.sh, build-tsan).
if(VT_HAVE_CUDA)
  vt_add_test(NAME test_rel_sigkill SOURCES test_rel_sigkill.c LIBS vtcore LABELS core)
  vt_add_test(NAME test_rel_exit SOURCES test_rel_exit.c LIBS vtcore LABELS core)
  vt_add_test(NAME test_rel_fsize SOURCES test_rel_fsize.c LIBS vtcore LABELS core)
  vt_add_test(NAME test_rel_fork SOURCES test_rel_fork.c LIBS vtcore LABELS core tsan)
  # Runs the built command too (info, analyze on the flooded trace).
  vt_add_test(NAME test_rel_flood SOURCES test_rel_flood.c LIBS vtcore LABELS core cli)
  add_dependencies(test_rel_flood vramtrace)
  # Security: file mode, symlinks, foreign files, environment allow-list, read-only `sql`.
  vt_add_test(NAME test_rel_security SOURCES test_rel_security.c LIBS vtcore LABELS core cli)
  add_dependencies(test_rel_security vramtrace)
endif()

# Fuzzing (tests/fuzz). The targets' shared part drives the real subcommands
# (analyze, info, export, sql) in-process on a trace built from the fuzz input.
add_library(vt_fuzz_common STATIC fuzz/fuzz_common.c)
target_include_directories(vt_fuzz_common PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
target_link_libraries(vt_fuzz_common PUBLIC vtcli)

# Regression tests for each class of hostile input the fuzzers found.
vt_add_test(NAME test_rel_hostile SOURCES test_rel_hostile.c tracegen.c LIBS vt_fuzz_common LABELS analyzer)

# Every build replays the stored inputs (seed corpus + one file per crash class
# found, tests/fuzz/regress) as plain tests; under ASan+UBSan in tests/run.sh.
foreach(t trace tracedb)
  vt_add_test(NAME test_rel_fuzz_${t} SOURCES fuzz/fuzz_${t}.c fuzz/fuzz_replay.c
    LIBS vt_fuzz_common LABELS analyzer)
  target_compile_definitions(test_rel_fuzz_${t} PRIVATE
    VT_FUZZ_DIRS="${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${t}:${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress/${t}")
endforeach()

# libFuzzer targets: clang, configured by tests/fuzz/run.sh (-DVT_FUZZ=ON and
# -fsanitize=fuzzer-no-link,address,undefined for everything).
option(VT_FUZZ "Build the libFuzzer targets fuzz_trace and fuzz_tracedb (clang)" OFF)
if(VT_FUZZ)
  foreach(t trace tracedb)
    add_executable(fuzz_${t} fuzz/fuzz_${t}.c)
    target_link_libraries(fuzz_${t} PRIVATE vt_fuzz_common)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  endforeach()
  add_executable(fuzz_mkseed fuzz/fuzz_mkseed.c)
  target_link_libraries(fuzz_mkseed PRIVATE vt_fuzz_common)
endif()

# The damaged-trace campaign: 300 seeded damaged variants of the example trace (schema 2) and of
# one made by make_example_trace (the current schema); analyze (text, JSON), info --json, export
# and sql run on each: no signal, no hang, documented exit codes, valid JSON. About 20 s on the
# loaded 2-core machine; a larger count is the bench target damage_campaign (bench/damage.cmake).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME damage_campaign COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/damage_campaign.py
    --vramtrace $<TARGET_FILE:vramtrace> --gen $<TARGET_FILE:make_example_trace> --count 300
    ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
  set_tests_properties(damage_campaign PROPERTIES LABELS cli TIMEOUT 600)
  # A shorter run labelled asan, so that the ASan+UBSan build (tests/run.sh) runs it too: a
  # leak or sanitizer report makes a command exit 1, which no command may answer here (it found
  # the analysis pipeline's leak of a trace that could not be read).
  add_test(NAME damage_campaign_quick COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/damage_campaign.py
    --vramtrace $<TARGET_FILE:vramtrace> --gen $<TARGET_FILE:make_example_trace> --count 70 --seed 1818
    ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train.db)
  set_tests_properties(damage_campaign_quick PROPERTIES LABELS "cli;asan" TIMEOUT 900)
endif()

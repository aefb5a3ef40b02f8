# Reliability tests: SIGKILL, exit paths, file-size limit, fork + threads, floods, hostile traces, security.
# core: tracer core (also under ASan+UBSan); analyzer: analysis library; cli: the built command.
# tsan: the programs run by the ThreadSanitizer build (tests/run.sh, build-tsan).
# reliability: run again with the machine loaded (tests/run.sh, stage loaded; tests/README.md).
if(VT_HAVE_CUDA)
  # 12 trials here (about 8 s of CPU); the bench target sigkill runs 50 (bench/reliability.cmake).
  vt_add_test(NAME test_rel_sigkill SOURCES test_rel_sigkill.c LIBS vtcore LABELS core reliability)
  set_property(TEST test_rel_sigkill APPEND PROPERTY ENVIRONMENT VT_REL_SIGKILL_TRIALS=12)
  vt_add_test(NAME test_rel_exit SOURCES test_rel_exit.c LIBS vtcore LABELS core reliability)
  vt_add_test(NAME test_rel_fsize SOURCES test_rel_fsize.c LIBS vtcore LABELS core reliability)
  vt_add_test(NAME test_rel_fork SOURCES test_rel_fork.c LIBS vtcore LABELS core tsan reliability)
  # Runs the built command too (info, analyze on the flooded trace).
  vt_add_test(NAME test_rel_flood SOURCES test_rel_flood.c LIBS vtcore LABELS core cli reliability)
  add_dependencies(test_rel_flood vramtrace)
  # Security: file mode, symlinks, foreign files, environment allow-list, read-only `sql`.
  vt_add_test(NAME test_rel_security SOURCES test_rel_security.c LIBS vtcore LABELS core cli reliability)
  add_dependencies(test_rel_security vramtrace)
endif()

# Fuzzing (tests/fuzz). The targets' shared part drives the real subcommands
# (analyze, info, export, sql) in-process on a trace built from the fuzz input.
add_library(vt_fuzz_common STATIC fuzz/fuzz_common.c)
target_include_directories(vt_fuzz_common PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
target_link_libraries(vt_fuzz_common PUBLIC vtcli)

# Regression tests for each class of hostile input the fuzzers found.
vt_add_test(NAME test_rel_hostile SOURCES test_rel_hostile.c LIBS vt_fuzz_common vt_tracegen LABELS analyzer reliability)

# Every build replays the stored inputs (seed corpus + one file per crash class
# found, tests/fuzz/regress) as plain tests; under ASan+UBSan the fuzz stage of tests/run.sh
# runs them (libFuzzer runs every stored input first), else its ASan+UBSan stage. Not labelled
# reliability: one process replaying files, nothing a loaded machine could change.
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

# The damaged-trace campaign (tests/damage_campaign.py): 70 seeded damaged variants of the example
# as schema version 1 wrote it (example-train-v1.db: an older layout, absolute times) and of one made by
# make_example_trace (the current schema, as the shipped example-train.db); analyze (text, JSON),
# info --json, export and sql run on each: no signal, no hang (judged by CPU time), documented exit
# codes, valid JSON. About 20 s of CPU (more under ASan+UBSan, where it also runs: a leak or
# sanitizer report makes a command exit 1, which no command may answer here; it found the analysis
# pipeline's leak of a trace that could not be read). The full campaign, 3000 variants, is the
# bench target damage_campaign (bench/damage.cmake).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME damage_campaign_quick COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/damage_campaign.py
    --vramtrace $<TARGET_FILE:vramtrace> --gen $<TARGET_FILE:make_example_trace> --count 70 --seed 1818
    ${CMAKE_CURRENT_SOURCE_DIR}/data/example-train-v1.db)
  set_tests_properties(damage_campaign_quick PROPERTIES LABELS "cli;asan;reliability" TIMEOUT 1800)
endif()

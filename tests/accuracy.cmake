# The accuracy suite (tests/accuracy, docs/accuracy.md): realistic PyTorch traces, healthy jobs and
# planted problems, written by accgen with their ground truth and scored against `vramtrace analyze`
# by score.py: the recorded scenarios and the job shapes drawn from families (dev and blind splits).
# The tests run quick subsets and assert what the analyzer gets right today (baseline.json,
# baseline_dev.json); the full runs are the `accuracy` and `accuracy_dev` targets of bench/.
add_executable(accgen accuracy/accgen.c accuracy/scen.c accuracy/fam.c accuracy/loop.c accuracy/ptrec.c)
target_include_directories(accgen PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy)
target_link_libraries(accgen PRIVATE vt_jobsim)
target_compile_definitions(accgen PRIVATE VT_ACC_KERNELS="${CMAKE_CURRENT_SOURCE_DIR}/accuracy/kernels.tsv")
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME accuracy_quick COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score.py
    --selftest --suite quick --accgen $<TARGET_FILE:accgen> --vramtrace $<TARGET_FILE:vramtrace>
    --check ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/baseline.json)
  set_tests_properties(accuracy_quick PROPERTIES LABELS "analyzer;accuracy")
  # the quick subset of the dev split (drawn job shapes, tests/accuracy/splits.json): fails when it scores
  # worse than tests/accuracy/baseline_dev.json (docs/accuracy.md says how to record an improvement)
  add_test(NAME accuracy_dev_quick COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score.py
    --selftest --split dev --suite quick --accgen $<TARGET_FILE:accgen> --vramtrace $<TARGET_FILE:vramtrace>
    --check ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/baseline_dev.json)
  set_tests_properties(accuracy_dev_quick PROPERTIES LABELS "analyzer;accuracy")
  # the blind split is refused without --i-am-done (nothing is generated)
  add_test(NAME accuracy_blind_guard COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score.py
    --split blind --accgen $<TARGET_FILE:accgen> --vramtrace $<TARGET_FILE:vramtrace>)
  set_tests_properties(accuracy_blind_guard PROPERTIES LABELS accuracy
    PASS_REGULAR_EXPRESSION "blind split is scored only when the detector work is done")
endif()

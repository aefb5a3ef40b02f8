# What would fit (docs/analysis.md "What would fit", docs/accuracy.md "Largest batch"): fitgen writes
# training jobs whose largest batch is known by running them at each size; score_fit.py compares what
# 'analyze --batch N' predicts. The tests score the dev split and drawn look-alike jobs; the blind split is the
# fit_blind target.
add_executable(fitgen accuracy/fitgen.c accuracy/ptrec.c)
target_include_directories(fitgen PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy)
target_link_libraries(fitgen PRIVATE vt_jobsim)
target_compile_definitions(fitgen PRIVATE VT_ACC_KERNELS="${CMAKE_CURRENT_SOURCE_DIR}/accuracy/kernels.tsv")
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME fit_accuracy COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score_fit.py
    --split dev --fitgen $<TARGET_FILE:fitgen> --vramtrace $<TARGET_FILE:vramtrace> --min-within 17 --max-error 0.05)
  set_tests_properties(fit_accuracy PROPERTIES LABELS analyzer)
  # look-alike jobs drawn at random (fitgen --split look): points within 5 % or segment-level ranges holding
  add_test(NAME fit_lookalike COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score_fit.py
    --split look --seed 1 --fitgen $<TARGET_FILE:fitgen> --vramtrace $<TARGET_FILE:vramtrace> --min-within 12
    --max-error 0.05)
  set_tests_properties(fit_lookalike PROPERTIES LABELS analyzer)
  # the jobs' shapes as the tracer records real ones (AccumulateGrad gradients, expandable segments' pages)
  # and the breakdown on them
  add_test(NAME fit_shapes COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/fit_shapes_test.py
    $<TARGET_FILE:fitgen> $<TARGET_FILE:vramtrace>)
  set_tests_properties(fit_shapes PROPERTIES LABELS analyzer)
  add_custom_target(fit_blind
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/score_fit.py --split blind
      --fitgen $<TARGET_FILE:fitgen> --vramtrace $<TARGET_FILE:vramtrace> --out ${PROJECT_BINARY_DIR}/fit-blind
      --json ${PROJECT_BINARY_DIR}/fit-blind.json
    DEPENDS fitgen vramtrace USES_TERMINAL COMMENT "what would fit: the blind split")
endif()

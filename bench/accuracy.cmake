# accuracy: the full accuracy suite (tests/accuracy, docs/accuracy.md). Generates every
# scenario and variant, analyzes each with `vramtrace analyze`, prints recall and precision
# per detector, per scenario and per variant axis, and the misses and false findings by
# defect class. `cmake --build build --target accuracy`; the scores also go to
# build/accuracy.json and the traces with their reports to build/accuracy/.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_custom_target(accuracy
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/accuracy/score.py --suite full
      --accgen $<TARGET_FILE:accgen> --vramtrace $<TARGET_FILE:vramtrace>
      --out ${PROJECT_BINARY_DIR}/accuracy --json ${PROJECT_BINARY_DIR}/accuracy.json
    DEPENDS accgen vramtrace
    USES_TERMINAL
    COMMENT "accuracy suite: recall and precision of vramtrace analyze")
  # accuracy_dev: the dev split of the drawn families (the blind split is scored by hand, once:
  # docs/accuracy.md); traces and reports in build/accuracy_dev/, scores in build/accuracy_dev.json
  add_custom_target(accuracy_dev
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/accuracy/score.py --split dev
      --accgen $<TARGET_FILE:accgen> --vramtrace $<TARGET_FILE:vramtrace>
      --out ${PROJECT_BINARY_DIR}/accuracy_dev --json ${PROJECT_BINARY_DIR}/accuracy_dev.json
    DEPENDS accgen vramtrace
    USES_TERMINAL
    COMMENT "accuracy suite, dev split: recall, strict recall, precision and longest list of vramtrace analyze")
endif()

# damage_campaign: the damaged-trace campaign of tests/damage_campaign.py at 3000 variants
# (ctest damage_campaign_quick runs 70): figures for docs/reliability.md, section 5.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_custom_target(damage_campaign
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/damage_campaign.py
      --vramtrace $<TARGET_FILE:vramtrace> --gen $<TARGET_FILE:make_example_trace> --count 3000
      ${PROJECT_SOURCE_DIR}/tests/data/example-train-v1.db
    DEPENDS vramtrace make_example_trace
    USES_TERMINAL
    COMMENT "damaged-trace campaign: 3000 variants, every reader on each")
endif()

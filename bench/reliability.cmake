# sigkill: the SIGKILL trials at full length, seeds printed (ctest runs 12 of test_rel_sigkill and
# 4 of test_sigkill): figures for docs/reliability.md, section 1. Not a speed: a pass or a failure.
add_custom_target(sigkill
  COMMAND ${CMAKE_COMMAND} -E env VT_REL_SIGKILL_TRIALS=50 $<TARGET_FILE:test_rel_sigkill>
  COMMAND ${CMAKE_COMMAND} -E env VT_SIGKILL_TRIALS=10 $<TARGET_FILE:test_sigkill>
  DEPENDS test_rel_sigkill test_sigkill
  USES_TERMINAL
  COMMENT "SIGKILL trials: 50 of test_rel_sigkill, 10 of test_sigkill")

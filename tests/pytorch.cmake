# PyTorch scenarios (samples/pytorch/) and their GPU checker (tests/gpu/pytorch_check.py):
# the scenarios need a GPU and PyTorch, so here they are compiled, and the checker's logic is
# tested on generated traces, stats and reports, the harness script with a test double of
# vramtrace, and the scripts on a shape-only stand-in of PyTorch (label cli). The GPU run itself is
# tests/gpu/pytorch-run.sh (docs/samples.md, "PyTorch scenarios").
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(VT_PYTORCH_SCRIPTS)
  foreach(script common dataloader_pinned healthy loss_no_item oom_in_validation val_no_grad
                 val_outputs_list)
    list(APPEND VT_PYTORCH_SCRIPTS ${PROJECT_SOURCE_DIR}/samples/pytorch/${script}.py)
  endforeach()
  set(VT_PYTORCH_ENV PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache)
  add_test(NAME pytorch_scripts_compile
    COMMAND ${CMAKE_COMMAND} -E env ${VT_PYTORCH_ENV} ${Python3_EXECUTABLE} -m py_compile
      ${VT_PYTORCH_SCRIPTS} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/pytorch_check.py
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/pytorch_check_test.py
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/pytorch_fake_vramtrace.py ${CMAKE_CURRENT_SOURCE_DIR}/gpu/testlib.py
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/carry.py ${CMAKE_CURRENT_SOURCE_DIR}/gpu/promote.py
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/data_verdicts.py ${CMAKE_CURRENT_SOURCE_DIR}/gpu/data_verdicts_test.py
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/device_run_test.py ${CMAKE_CURRENT_SOURCE_DIR}/gpu/dry/workload.py
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/profiler_lend_job.py ${CMAKE_CURRENT_SOURCE_DIR}/gpu/profiler_lend_check.py)
  # logic: the checker on generated runs; harness: pytorch-run.sh with a test double of
  # vramtrace; scenarios: every script on a shape-only stand-in of PyTorch.
  foreach(group logic harness scenarios)
    add_test(NAME pytorch_check_${group}
      COMMAND ${CMAKE_COMMAND} -E env ${VT_PYTORCH_ENV} ${Python3_EXECUTABLE}
        ${CMAKE_CURRENT_SOURCE_DIR}/gpu/pytorch_check_test.py ${group})
    set_tests_properties(pytorch_check_${group} PROPERTIES LABELS cli)
  endforeach()
  # analyzer: the checker on reports of the real `vramtrace analyze`.
  add_test(NAME pytorch_check_analyzer
    COMMAND ${CMAKE_COMMAND} -E env ${VT_PYTORCH_ENV} VT_VRAMTRACE=$<TARGET_FILE:vramtrace>
      ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/pytorch_check_test.py analyzer)
  set_tests_properties(pytorch_scripts_compile pytorch_check_analyzer PROPERTIES LABELS cli)
  # the history hook `record` puts on PYTHONPATH, on a stand-in torch that logs its calls
  add_test(NAME pyhook
    COMMAND ${CMAKE_COMMAND} -E env ${VT_PYTORCH_ENV} PYTHONDONTWRITEBYTECODE=1 ${Python3_EXECUTABLE}
      ${CMAKE_CURRENT_SOURCE_DIR}/pyhook/pyhook_test.py ${PROJECT_SOURCE_DIR}/analyzer/pyhook
      ${CMAKE_CURRENT_SOURCE_DIR}/pyhook/fake_torch)
  set_tests_properties(pyhook PROPERTIES LABELS cli)
  # torch.profiler inside a traced PyTorch job (docs/tracer.md, "Beside torch.profiler"): the
  # checker on made-up runs everywhere; the real run on a GPU with PyTorch (skipped elsewhere).
  add_test(NAME profiler_lend_check_selftest
    COMMAND ${CMAKE_COMMAND} -E env ${VT_PYTORCH_ENV} ${Python3_EXECUTABLE}
      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/profiler_lend_check.py --self-test)
  set_tests_properties(profiler_lend_check_selftest PROPERTIES LABELS cli)
  add_test(NAME gpu_profiler_lend
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/profiler_lend_check.sh ${PROJECT_BINARY_DIR})
  # (python3 from PATH, or PYTHON: the one that has PyTorch)
  set_tests_properties(gpu_profiler_lend PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

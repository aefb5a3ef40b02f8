#!/usr/bin/env bash
# (b) the gpu-labelled ctest tests of the carried build: each CUDA sample under the tracer, its trace's known answer.
# timeout: 150
# min: 30
# ctest runs the carried CTestTestfile.cmake (tests/gpu/carry.py) with VT_CUPTI_LIB set, all but
# gpu_profiler_lend, which step (g) versions runs with its own checks;
# gpu_check keeps the run folder (trace, stdout, stderr) of every failing test under runs/.
. "$VT_TREE/tests/gpu/steps/lib.sh"
mkdir -p "$VT_STEP_DIR/runs"
export TMPDIR="$VT_STEP_DIR/runs" VT_GPU_TIMEOUT=90
vt_run 145 "$VT_STEP_DIR/ctest.log" ctest --test-dir "$VT_CARRY" -L '^gpu$' -E '^gpu_profiler_lend$' \
  --output-on-failure --timeout 120 -j "$VT_JOBS"
rc=$?
line=$(grep -E '^[0-9]+% tests passed' "$VT_STEP_DIR/ctest.log" | tail -n 1)
total=$(echo "$line" | sed -n 's/.* out of \([0-9]*\).*/\1/p')
nfail=$(echo "$line" | sed -n 's/.* \([0-9]*\) tests* failed.*/\1/p')
failing=$(sed -n 's/^[[:space:]]*[0-9]* - \(gpu_[a-z_]*\) (\(.*\))$/\1 (\2)/p' "$VT_STEP_DIR/ctest.log" | grep -v "(Skipped)\|(Not Run)" | tr '\n' ' ')
skipping=$(grep -E 'Test +#[0-9]+: gpu_[a-z_]+ .*(Skipped|Not Run)' "$VT_STEP_DIR/ctest.log" |
             sed 's/.*: \(gpu_[a-z_]*\) .*/\1/' | tr '\n' ' ')
nskip=$(echo "$skipping" | wc -w)
passed=$(( ${total:-0} - ${nfail:-0} - nskip ))
vt_row "gpu tests passed" "$passed" "${total:-0}"
vt_summary "$passed of ${total:-0} gpu tests passed${failing:+; failed: $failing}${skipping:+; skipped: $skipping}"
if [ "$rc" = 0 ] && [ "${total:-0}" -gt 0 ] && [ "$nskip" = 0 ]; then
  vt_status pass
else
  [ "$rc" = 124 ] && vt_summary "ctest ran out of time"
  vt_status fail
fi

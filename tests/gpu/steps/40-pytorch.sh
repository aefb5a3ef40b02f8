#!/usr/bin/env bash
# (d) the PyTorch scenarios: default mode (with PyTorch's history), --tensors and untraced, checked against torch.cuda.memory_stats().
# timeout: 200
# min: 60
# tests/gpu/pytorch-run.sh on the carried build, VT_JOBS runs at a time, within this step's
# deadline; its traces stay in scratch, what is kept here: every run's log, exit status,
# stats, reports, the checker's check.txt and summary.md, traces.txt (every trace's size),
# and keep/pytorch/ (traces of at most 2 MB with their findings and PyTorch's snapshot).
. "$VT_TREE/tests/gpu/steps/lib.sh"
scratch="$VT_SCRATCH/pytorch-run"
mkdir -p "$scratch"
fake=()
[ "$VT_DRY_RUN" = 1 ] && fake=(VT_VRAMTRACE="$VT_TREE/tests/gpu/dry/vramtrace")
(cd "$VT_TREE" && env OUT="$scratch" PYTHON="$VT_PYTHON" VT_PYTORCH_JOBS="$VT_JOBS" VT_PYTORCH_TIMEOUT=150 \
   VT_PYTORCH_DEADLINE=$((VT_STEP_DEADLINE - 20)) "${fake[@]}" bash tests/gpu/pytorch-run.sh "$VT_CARRY") \
  > "$VT_STEP_DIR/run.log" 2>&1 < /dev/null
rc=$?
p="$scratch/pytorch"
for f in "$p"/*.log "$p"/*.exit "$p"/*.stats.json "$p"/*.report.json "$p"/*.report.txt "$p"/*.analyze.err \
         "$p"/summary.md "$p"/check.txt "$p"/environment.txt "$p"/not-run.txt; do
  [ -f "$f" ] && cp "$f" "$VT_STEP_DIR/"
done
(cd "$p" && ls -l -- *.db *.pickle 2>/dev/null) > "$VT_STEP_DIR/traces.txt"
if [ -d "$p/keep" ]; then
  mkdir -p "$VT_KEEP/pytorch"
  cp "$p"/keep/* "$VT_KEEP/pytorch/"
  # PyTorch's snapshot of each kept default-mode run, under the name analyze looks for
  for kept in "$p"/keep/*-default.db; do
    [ -f "$kept" ] || continue
    pid=$("$VT_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' \
          "$p/$(basename "$kept" .db).stats.json" 2>/dev/null)
    for snap in "$p"/vramtrace-*-"$pid".snapshot.pickle; do
      [ -f "$snap" ] && [ "$(stat -c %s "$snap")" -le 2000000 ] && cp "$snap" "$VT_KEEP/pytorch/"
    done
  done
fi
runs=$(grep -cE '^[a-z_]+ \[[a-z]+.*\]: (PASS|FAIL)' "$VT_STEP_DIR/check.txt" 2>/dev/null)
npass=$(grep -cE '^[a-z_]+ \[[a-z]+.*\]: PASS' "$VT_STEP_DIR/check.txt" 2>/dev/null)
touch "$VT_STEP_DIR/not-run.txt"
notrun=$(tr '\n' ' ' < "$VT_STEP_DIR/not-run.txt" 2>/dev/null)
failing=$(grep -E '^[a-z_]+ \[[a-z]+.*\]: FAIL' "$VT_STEP_DIR/check.txt" 2>/dev/null | sed 's/ \[\([a-z]*\).*/-\1/' |
            grep -vxF -f "$VT_STEP_DIR/not-run.txt" | tr '\n' ' ')
vt_summary "${npass:-0} of ${runs:-0} runs pass (default, --tensors, untraced)${failing:+; failed: $failing}${notrun:+; not run (time): $notrun}"
vt_row "PyTorch runs passing" "${npass:-0}" "${runs:-0}"
if [ "$rc" = 0 ] && [ "${runs:-0}" -gt 0 ]; then vt_status pass; else vt_status fail; fi

#!/usr/bin/env bash
# (e) overhead: the same PyTorch training loop untraced, with the floor CUPTI client and under vramtrace record (medians of 5).
# timeout: 150
# min: 60
# bench/overhead/run_overhead.py on the carried build: overhead.log (every run),
# overhead.json (rewritten after each repetition: a stopped step keeps what it measured).
# VT_OVERHEAD_MODELS (default resnet), VT_OVERHEAD_ITERS (default 40) change the workload.
. "$VT_TREE/tests/gpu/steps/lib.sh"
workload=()
[ "$VT_DRY_RUN" = 1 ] && workload=(--workload "$VT_TREE/tests/gpu/dry/workload.py")
mkdir -p "$VT_SCRATCH/overhead"
vt_run 145 "$VT_STEP_DIR/overhead.log" "$VT_PYTHON" "$VT_TREE/bench/overhead/run_overhead.py" \
  --build "$VT_CARRY" --python "$VT_PYTHON" --models "${VT_OVERHEAD_MODELS:-resnet}" --configs none,floor,vt \
  --repeats 5 --warmup 10 --iters "${VT_OVERHEAD_ITERS:-40}" --timeout 60 --tmp "$VT_SCRATCH/overhead" \
  --json "$VT_STEP_DIR/overhead.json" "${workload[@]}"
rc=$?
"$VT_PYTHON" - "$VT_STEP_DIR/overhead.json" > "$VT_STEP_DIR/figures.txt" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for model in sorted({r["model"] for r in doc["summary"]}):
    rows = {r["config"]: r for r in doc["summary"] if r["model"] == model}
    none, floor, vt = rows.get("none"), rows.get("floor"), rows.get("vt")
    part = " (partial)" if doc.get("partial") else ""
    print(f"{model}: untraced {none['iter_ms']:.2f} ms/iter; floor x{floor['x_none']:.3f}; "
          f"vramtrace x{vt['x_none']:.3f} (x{vt['x_floor']:.3f} the floor), trace {vt['trace_bytes'] / 1e6:.1f} MB; "
          f"medians of {min(r['repeats'] for r in rows.values())}{part}")
PY
while read -r line; do vt_summary "$line"; done < "$VT_STEP_DIR/figures.txt"
if [ "$rc" = 0 ] && grep -q 'medians of [5-9]' "$VT_STEP_DIR/figures.txt"; then
  vt_status info
else
  vt_summary "run_overhead.py: exit $rc (overhead.log)"
  vt_status fail
fi

#!/usr/bin/env bash
# (g) what would fit: the largest batch 'analyze --batch' predicts from a traced run, against the batch at which a real PyTorch run first runs out of memory.
# timeout: 150
# min: 60
# tests/gpu/fit_boundary.py: the boundary found by running the job at each batch tried (PyTorch's
# allocator capped at CAP_GIB so that it is reached in seconds), then the job traced at batch 64
# ('vramtrace record', default mode with PyTorch's history), 'analyze --batch 64 --fit-memory'
# (the cap plus the 512 MiB context the estimate assumes), and the two compared: a measurement
# (docs/accuracy.md, "Largest batch"); the step fails only when a part of it did not run.
. "$VT_TREE/tests/gpu/steps/lib.sh"
CAP_GIB=20
BATCH=64
py="$VT_TREE/tests/gpu/fit_boundary.py"
scratch="$VT_SCRATCH/fit"
mkdir -p "$scratch"
if [ "$VT_DRY_RUN" = 1 ]; then # no GPU: the script's arguments and help only
  vt_run 20 "$VT_STEP_DIR/run.log" "$VT_PYTHON" "$py" --help
  vt_row "fit_boundary.py --help exit status" "$?" 0
  vt_summary "dry run: fit_boundary.py present (the boundary needs a GPU)"
  vt_status info
  exit 0
fi
vt_run 70 "$VT_STEP_DIR/probe.log" "$VT_PYTHON" "$py" --probe --cap-gib "$CAP_GIB" --out "$VT_STEP_DIR/truth.json"
vt_row "boundary probe exit status" "$?" 0
vt_run 40 "$VT_STEP_DIR/record.log" "$vt" record -o "$scratch" -- "$VT_PYTHON" "$py" --run --batch "$BATCH" --cap-gib "$CAP_GIB"
vt_row "traced run exit status" "$?" 0
traces=("$scratch"/*.db)
vt_run 30 "$VT_STEP_DIR/analyze.err" "$vt" analyze --batch "$BATCH" --fit-memory "$((CAP_GIB * 1024 + 512))M" \
  --format json -o "$VT_STEP_DIR/report.json" "${traces[@]}"
vt_row "analyze exit status" "$?" 0
"$vt" analyze --batch "$BATCH" --fit-memory "$((CAP_GIB * 1024 + 512))M" "${traces[@]}" > "$VT_STEP_DIR/report.txt" 2>&1
line=$("$VT_PYTHON" "$py" --compare --truth "$VT_STEP_DIR/truth.json" --report "$VT_STEP_DIR/report.json" \
         --out "$VT_STEP_DIR/result.json" 2> "$VT_STEP_DIR/compare.err")
vt_row "compare exit status" "$?" 0
vt_summary "${line:-no comparison} (traced at batch $BATCH, allocator capped at $CAP_GIB GiB)"
vt_status info

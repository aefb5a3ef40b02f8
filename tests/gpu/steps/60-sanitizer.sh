#!/usr/bin/env bash
# (f) compute-sanitizer --leak-check full on the leak sample: its LEAK SUMMARY against the known answer and vramtrace's leak finding.
# timeout: 90
# min: 20
# leak.sanitizer.txt is the tool's output. Where the runtime refuses the device (gVisor) the
# step says so and does not fail; the analyzer's side is the samples step's leak.analyze.json.
. "$VT_TREE/tests/gpu/steps/lib.sh"
if ! command -v compute-sanitizer > /dev/null; then
  vt_summary "compute-sanitizer not found: no leak ground truth"
  vt_status info
  exit 0
fi
vt_run 85 "$VT_STEP_DIR/leak.sanitizer.txt" compute-sanitizer --leak-check full "$VT_CARRY/samples/cuda/leak"
rc=$?
read -r bytes allocs < <(sed -n 's/.*LEAK SUMMARY: \([0-9]*\) bytes leaked in \([0-9]*\) allocations.*/\1 \2/p' \
                         "$VT_STEP_DIR/leak.sanitizer.txt" | tail -n 1)
if [ -z "${bytes:-}" ]; then
  if grep -qiE 'not supported|error 999|unknown error' "$VT_STEP_DIR/leak.sanitizer.txt"; then
    vt_summary "compute-sanitizer refused the device on this runtime (exit $rc): no leak ground truth here"
    vt_status info
  else
    vt_summary "no LEAK SUMMARY in compute-sanitizer's output (exit $rc)"
    vt_status fail
  fi
  exit 0
fi
read -r want_bytes want_allocs < <("$gpu_check" --info leak | sed -n 's/^leaked //p')
vt_row "compute-sanitizer leaked bytes vs the known answer" "$bytes" "$want_bytes"
vt_row "compute-sanitizer leaked allocations vs the known answer" "$allocs" "$want_allocs"
report="$VT_RESULTS/samples/leak.analyze.json"
read -r vt_bytes vt_allocs < <("$VT_PYTHON" -c 'import json, sys
fs = [f for f in json.load(open(sys.argv[1])).get("findings", []) if f.get("kind") == "leak"]
print(sum(f.get("bytes") or 0 for f in fs), sum(f.get("count") or 0 for f in fs))' "$report" 2>/dev/null)
vt_row "vramtrace leak finding bytes vs compute-sanitizer" "${vt_bytes:-no report}" "$bytes"
vt_row "vramtrace leak finding allocations vs compute-sanitizer" "${vt_allocs:-no report}" "$allocs"
vt_summary "LEAK SUMMARY $bytes bytes in $allocs allocations (known $want_bytes in $want_allocs); vramtrace's leak finding: ${vt_bytes:-none} bytes in ${vt_allocs:-?}"
vt_status pass

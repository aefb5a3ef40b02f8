# shellcheck shell=bash
# Helpers for the steps of tests/gpu/device-run.sh (sourced by each step; see README.md).
#
# The driver exports: VT_TREE (the source tree), VT_CARRY (the carried build folder),
# VT_DRY_RUN (1 in a rehearsal), VT_STEP (this step's name), VT_STEP_DIR (its results
# folder, archived), VT_STEP_DEADLINE (epoch seconds: the step is killed then), VT_RESULTS
# (all results), VT_KEEP (traces worth shipping to tests/data/gpu, archived), VT_SCRATCH
# (large files, not archived), VT_PYTHON, VT_CUPTI_LIB (the toolkit's libcupti, else the
# Python environment's), VT_CUPTI_PY (the Python environment's, or empty), VT_JOBS (runs a
# step may make at a time).

# shellcheck disable=SC2034  # used by the steps that source this file
vt="$VT_CARRY/analyzer/vramtrace"
# shellcheck disable=SC2034
gpu_check="$VT_CARRY/tests/gpu_check"

# vt_left: seconds left before this step's deadline (0 or less: none).
vt_left() { echo $((VT_STEP_DEADLINE - $(date +%s))); }

# vt_limit N: N seconds, or fewer so that a command started now ends 3 s before the deadline
# (at least 1).
vt_limit() {
  local n=$1 left
  left=$(($(vt_left) - 3))
  [ "$left" -lt "$n" ] && n=$left
  [ "$n" -lt 1 ] && n=1
  echo "$n"
}

# vt_run N LOG CMD...: run CMD for at most vt_limit N seconds, stdout and stderr to LOG;
# returns its status (124: it ran out of time).
vt_run() {
  local n=$1 log=$2
  shift 2
  timeout -k 5 "$(vt_limit "$n")" "$@" > "$log" 2>&1 < /dev/null
}

# vt_status pass|fail|info: the step's result. A failure stays one; pass does not hide info.
vt_status() {
  local now
  now=$(cat "$VT_STEP_DIR/status" 2>/dev/null || true)
  case "$now:$1" in
    fail:*) ;;
    pass:info | :* | info:fail | pass:fail | info:pass | pass:pass | info:info) echo "$1" > "$VT_STEP_DIR/status" ;;
  esac
}

# vt_summary TEXT: one line of the step's summary (the first lines go into summary.txt).
vt_summary() { echo "$*" >> "$VT_STEP_DIR/summary"; }

# vt_row WHAT FOUND EXPECTED [shown]: one comparison in checks.tsv (what, found, expected,
# verdict); unequal fails the step unless "shown" is given. Returns 0 when equal.
vt_row() {
  local verdict=match
  [ "$2" = "$3" ] || verdict=$([ "${4:-}" = shown ] && echo "differ (shown)" || echo DIFFER)
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$verdict" >> "$VT_STEP_DIR/checks.tsv"
  [ "$verdict" = DIFFER ] && vt_status fail
  [ "$verdict" = match ]
}

# vt_keep_trace TRACE NAME: a self-contained copy of TRACE (its write-ahead log folded in)
# as $VT_KEEP/NAME, when it is at most 2 MB; returns 1 when it is larger (not kept).
vt_keep_trace() {
  local size
  size=$(stat -c %s "$1" 2>/dev/null || echo 0)
  [ -f "$1-wal" ] && size=$((size + $(stat -c %s "$1-wal")))
  [ "$size" -le 2000000 ] || return 1
  mkdir -p "$(dirname "$VT_KEEP/$2")"
  "$VT_PYTHON" -c 'import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)
dst.execute("PRAGMA journal_mode=DELETE")
dst.close()' "$1" "$VT_KEEP/$2"
}

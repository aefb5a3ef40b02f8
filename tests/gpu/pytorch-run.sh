#!/usr/bin/env bash
# PyTorch scenarios under vramtrace: each samples/pytorch scenario recorded in default and in
# --tensors mode and run untraced, analyzed, and checked against torch.cuda.memory_stats() by
# pytorch_check.py.
#
# Build where the CUDA toolkit and SQLite headers are (cmake -S . -B build), then run from
# the repository root on the GPU machine, with the python3 that has PyTorch first on PATH:
#   OUT=/some/dir bash tests/gpu/pytorch-run.sh [build-dir] [SCENARIO...]
# The build folder may be the carried one (tests/gpu/carry.py). The report of each run covers
# the scenario's own process (DataLoader workers' traces, if any, are left aside). Results:
# OUT/pytorch/ (traces, stats, reports, logs), OUT/pytorch/summary.md, and traces of at most
# 2 MB with their findings in OUT/pytorch/keep/. Exit status: the checker's.
#
# Environment: PYTHON (default python3); VT_VRAMTRACE (default BUILD/analyzer/vramtrace);
# VT_PYTORCH_TIMEOUT (seconds per run, default 300); VT_PYTORCH_JOBS (runs at a time,
# default 1); VT_PYTORCH_DEADLINE (epoch seconds: no run starts after it, and none runs past
# it; runs not started are listed in OUT/pytorch/not-run.txt and fail the check).
set -uo pipefail
build=${1:-build}
shift || true
out=${OUT:?set OUT to a directory for the results}
dir="$out/pytorch"
mkdir -p "$dir"
vt=${VT_VRAMTRACE:-$build/analyzer/vramtrace}
py=${PYTHON:-python3}
limit=${VT_PYTORCH_TIMEOUT:-300}
jobs=${VT_PYTORCH_JOBS:-1}
deadline=${VT_PYTORCH_DEADLINE:-0}
[ -x "$vt" ] || { echo "pytorch-run: $vt not found (build first)" >&2; exit 3; }

# CMake wrote absolute paths into a build folder; make them resolve when the tree was
# copied elsewhere (a carried folder has none).
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then
  mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"
fi

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  "$py" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  "$vt" --version 2>&1
} > "$dir/environment.txt"

# run_one NAME MODE SCRIPT SCRIPT_ARGS ANALYZE_ARGS SECONDS: one run, recorded (default,
# tensors) or not (untraced), then its analysis; everything in $dir/NAME-MODE.*.
run_one() {
  local name=$1 mode=$2 script=$3 sargs=$4 aargs=$5 secs=$6 run="$1-$2" pid traces flag=()
  rm -f "$dir/$run"-*.db "$dir/$run".*
  echo "== $run: $script $sargs (at most $secs s)"
  if [ "$mode" = untraced ]; then
    # shellcheck disable=SC2086  # script arguments are a word list without spaces
    env -u CUDA_INJECTION64_PATH -u NVTX_INJECTION64_PATH -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF \
      VRAMTRACE_STATS_OUT="$dir/$run.stats.json" timeout -k 5 "$secs" "$py" "$script" $sargs \
      < /dev/null > "$dir/$run.log" 2>&1
    echo "$?" > "$dir/$run.exit"
    tail -n 2 "$dir/$run.log" | sed "s/^/  $run: /"
    return
  fi
  [ "$mode" = tensors ] && flag=(--tensors)
  # shellcheck disable=SC2086
  VRAMTRACE_STATS_OUT="$dir/$run.stats.json" timeout -k 5 "$secs" \
    "$vt" record "${flag[@]}" -o "$dir/$run-%p.db" -- "$py" "$script" $sargs \
    < /dev/null > "$dir/$run.log" 2>&1
  echo "$?" > "$dir/$run.exit"
  tail -n 3 "$dir/$run.log" | sed "s/^/  $run: /"
  # The scenario's own process (its pid is in the stats); every trace of the run otherwise.
  pid=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' \
        "$dir/$run.stats.json" 2>/dev/null)
  if [ -n "$pid" ] && [ -e "$dir/$run-$pid.db" ]; then
    traces=("$dir/$run-$pid.db")
  else
    traces=("$dir/$run"-*.db)
  fi
  if [ -e "${traces[0]}" ]; then
    # shellcheck disable=SC2086
    "$vt" analyze --no-write --format json $aargs -o "$dir/$run.report.json" "${traces[@]}" \
      < /dev/null 2> "$dir/$run.analyze.err"
    # shellcheck disable=SC2086
    "$vt" analyze --no-write $aargs "${traces[@]}" < /dev/null > "$dir/$run.report.txt" 2>&1
  fi
}

wanted=" $* "
: > "$dir/not-run.txt"
while IFS='|' read -r name mode script sargs aargs; do
  [ $# -eq 0 ] || [[ "$wanted" == *" $name "* ]] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  secs=$limit
  if [ "$deadline" -gt 0 ]; then
    left=$((deadline - $(date +%s)))
    if [ "$left" -lt 15 ]; then
      echo "$name-$mode" >> "$dir/not-run.txt"
      echo "== $name-$mode: not run (time budget)"
      continue
    fi
    [ "$left" -lt "$secs" ] && secs=$left
  fi
  run_one "$name" "$mode" "$script" "$sargs" "$aargs" "$secs" &
done < <("$py" tests/gpu/pytorch_check.py --list)
wait

"$py" tests/gpu/pytorch_check.py "$out" "$@" | tee "$dir/check.txt"
exit "${PIPESTATUS[0]}"

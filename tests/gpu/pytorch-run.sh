#!/usr/bin/env bash
# PyTorch scenarios under vramtrace: each samples/pytorch scenario recorded in default and in
# --tensors mode, analyzed, and checked against torch.cuda.memory_stats() by pytorch_check.py.
#
# Build where the CUDA toolkit and SQLite headers are (cmake -S . -B build), then run from
# the repository root on the GPU machine, with the python3 that has PyTorch first on PATH:
#   OUT=/some/dir bash tests/gpu/pytorch-run.sh [build-dir] [SCENARIO...]
# The report of each run covers the scenario's own process (DataLoader workers' traces, if
# any, are left aside). Results: OUT/pytorch/ (traces, stats, reports, logs), OUT/pytorch/summary.md, and traces
# of at most 2 MB with their findings in OUT/pytorch/keep/. Exit status: the checker's.
set -uo pipefail
build=${1:-build}
shift || true
out=${OUT:?set OUT to a directory for the results}
dir="$out/pytorch"
mkdir -p "$dir"
vt="$build/analyzer/vramtrace"
py=${PYTHON:-python3}
limit=${VT_PYTORCH_TIMEOUT:-300}
[ -x "$vt" ] || { echo "pytorch-run: $vt not found (build first)" >&2; exit 3; }

# CMake wrote absolute paths into the build folder; make them resolve when the tree was
# copied elsewhere.
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

wanted=" $* "
"$py" tests/gpu/pytorch_check.py --list | while IFS='|' read -r name mode script sargs aargs; do
  [ $# -eq 0 ] || [[ "$wanted" == *" $name "* ]] || continue
  run="$name-$mode"
  rm -f "$dir/$run"-*.db "$dir/$run".*
  flag=()
  [ "$mode" = tensors ] && flag=(--tensors)
  echo "== $run: $script $sargs"
  # shellcheck disable=SC2086  # script and analyze arguments are word lists without spaces
  VRAMTRACE_STATS_OUT="$dir/$run.stats.json" timeout "$limit" \
    "$vt" record "${flag[@]}" -o "$dir/$run-%p.db" -- "$py" "$script" $sargs \
    < /dev/null > "$dir/$run.log" 2>&1
  echo "$?" > "$dir/$run.exit"
  tail -n 3 "$dir/$run.log"
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
done

"$py" tests/gpu/pytorch_check.py "$out" "$@" | tee "$dir/check.txt"
exit "${PIPESTATUS[0]}"

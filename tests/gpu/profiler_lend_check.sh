#!/usr/bin/env bash
# torch.profiler inside a traced PyTorch job, on a GPU: `vramtrace record` runs
# profiler_lend_job.py (its own torch.profiler, three windows) and profiler_lend_check.py checks
# that the profiler got its kernels and the trace has the job's kernels and allocations before,
# between and after the windows, each window stated in meta (docs/tracer.md, "Beside torch.profiler").
#
# Build where the CUDA toolkit and SQLite headers are (cmake -S . -B build), then run from
# anywhere on the GPU machine, with the python3 that has PyTorch first on PATH (or PYTHON=...):
#   OUT=/some/dir bash tests/gpu/profiler_lend_check.sh [build-dir]
# Results in OUT/profiler_lend/: the job's traces and their `info`, the profiler's chrome
# traces, record.log, check.txt. About 30 s on an H200. Exit: 0 every check passed, 1 one
# failed, 77 no GPU or no PyTorch with CUDA (skipped), 3 no build.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" 2>/dev/null && pwd) || { echo "profiler_lend_check: no build folder" >&2; exit 3; }
out=${OUT:-$build/tests/gpu_profiler_lend}
dir="$out/profiler_lend"
vt="$build/analyzer/vramtrace"
py=${PYTHON:-python3}
[ -x "$vt" ] || { echo "profiler_lend_check: $vt not found (build first)" >&2; exit 3; }
if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' > /dev/null 2>&1; then
  echo "profiler_lend_check: no GPU, or no PyTorch with CUDA for $py: skipped"
  exit 77
fi

# CMake wrote absolute paths into the build folder; make them resolve when the tree was
# copied elsewhere.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
root=$(cd "$here/../.." && pwd)
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
  mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
fi

mkdir -p "$dir"
rm -f "$dir"/lend-*.db* "$dir"/kineto-*.json "$dir"/job.json "$dir"/*.txt
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} > "$dir/environment.txt"
timeout "${VT_LEND_TIMEOUT:-300}" "$vt" record -o "$dir/lend-%p.db" -- \
  "$py" "$here/profiler_lend_job.py" "$dir" < /dev/null > "$dir/record.log" 2>&1
echo "record: exit $?" >> "$dir/record.log"
grep 'vramtrace:' "$dir/record.log" | head -n 20
for t in "$dir"/lend-*.db; do
  [ -f "$t" ] && "$vt" info "$t" > "${t%.db}.info.txt" 2>&1
done
"$py" "$here/profiler_lend_check.py" "$dir" | tee "$dir/check.txt"
exit "${PIPESTATUS[0]}"

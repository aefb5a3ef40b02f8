#!/usr/bin/env bash
# torch.profiler inside a traced PyTorch job, on a GPU: `vramtrace record` runs
# profiler_lend_job.py (its own torch.profiler, three windows) and profiler_lend_check.py checks
# that the profiler got its kernels and the trace has the job's kernels and allocations before,
# between and after the windows, each window stated in meta (docs/tracer.md, "Beside torch.profiler").
#
# ctest runs it as gpu_profiler_lend (label gpu); tests/gpu/device-run.sh runs it in its step
# (g) versions (steps/70-versions.sh) with the carried build; by hand, from anywhere on the GPU machine, with the python3 that
# has PyTorch first on PATH (or PYTHON=..., or the device run's VT_PYTHON):
#   OUT=/some/dir bash tests/gpu/profiler_lend_check.sh [build-or-carried-dir]
# Results in OUT/profiler_lend/ (default: the device run's step folder, else the build's tests
# folder): the job's traces and their `info`, the profiler's chrome traces, record.log,
# check.txt. About 30 s on an H200. In the device run's rehearsal (VT_DRY_RUN=1: a stand-in
# PyTorch, no GPU) it runs the checker's self-test instead. Exit: 0 every check passed, 1 one
# failed, 77 no GPU or no PyTorch with CUDA (skipped), 3 no build.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" 2>/dev/null && pwd) || { echo "profiler_lend_check: no build folder" >&2; exit 3; }
out=${OUT:-${VT_STEP_DIR:-$build/tests}}
dir="$out/profiler_lend"
vt="$build/analyzer/vramtrace"
py=${PYTHON:-${VT_PYTHON:-python3}}
[ -x "$vt" ] || { echo "profiler_lend_check: $vt not found (build first)" >&2; exit 3; }
if [ "${VT_DRY_RUN:-0}" = 1 ]; then
  echo "profiler_lend_check: rehearsal (no GPU, a stand-in PyTorch): the checker's self-test"
  exec "$py" "$here/profiler_lend_check.py" --self-test
fi
if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() and "fake" not in torch.__version__ else 1)' \
     > /dev/null 2>&1; then
  echo "profiler_lend_check: skipped: no GPU, or no PyTorch with CUDA for $py"
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

#!/usr/bin/env bash
# GPU validation run: the gpu-labelled tests, every CUDA sample under the tracer with its
# report, and compute-sanitizer's leak check as ground truth. Everything lands in $OUT.
#
# Build on a machine with the CUDA toolkit and SQLite headers (cmake -S . -B build), then
# run this from the repository root on the GPU machine with the build folder present:
#   OUT=/some/dir bash tests/gpu/device-run.sh [build-dir]
set -uo pipefail
build=${1:-build}
out=${OUT:?set OUT to a directory for the results}
mkdir -p "$out/traces" "$out/reports"
export PATH="/usr/local/cuda/bin:$PATH"

# CMake wrote absolute paths into the build folder; make them resolve when the tree was
# copied elsewhere.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then
  mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"
fi

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  nvcc --version 2>&1 | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
} > "$out/environment.txt"

ctest --test-dir "$build" -L gpu --output-on-failure --timeout 300 > "$out/ctest-gpu.log" 2>&1
echo "ctest gpu: exit $?" >> "$out/environment.txt"

vt="$build/analyzer/vramtrace"
for bin in "$build"/samples/cuda/*; do
  [ -x "$bin" ] && [ -f "$bin" ] || continue
  name=$(basename "$bin")
  "$vt" record -o "$out/traces/$name-%p.db" -- "$bin" > "$out/reports/$name.run.txt" 2>&1
  echo "exit $?" >> "$out/reports/$name.run.txt"
  for t in "$out/traces/$name"-*.db; do
    [ -f "$t" ] || continue
    "$vt" analyze --no-write "$t" > "$out/reports/$name.analyze.txt" 2>&1
    "$vt" info "$t" > "$out/reports/$name.info.txt" 2>&1
  done
done

if [ -x "$build/samples/cuda/leak" ] && command -v compute-sanitizer >/dev/null; then
  compute-sanitizer --leak-check full "$build/samples/cuda/leak" > "$out/reports/leak.sanitizer.txt" 2>&1
fi
ls -la "$out/traces" >> "$out/environment.txt"

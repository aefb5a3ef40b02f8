#!/usr/bin/env bash
# The test command: build (normal and ASan+UBSan) and run every test under ctest.
# GPU tests report "skipped" on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "vramtrace tests: the CUDA toolkit (nvcc, CUPTI) was not found at /usr/local/cuda;" >&2
  echo "install CUDA 13 or put nvcc on PATH" >&2
  exit 2
fi
export PATH="/usr/local/cuda/bin:$PATH"

echo "== build (RelWithDebInfo) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
echo "== tests =="
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 900

echo "== build without the CUDA toolkit (the analyzer alone) =="
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
  -DVT_BUILD_BENCH=OFF
cmake --build build-nocuda -j"$jobs"
ctest --test-dir build-nocuda --output-on-failure -j"$jobs" --timeout 900

echo "== build (ASan+UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVT_SANITIZE=ON -DVT_BUILD_SAMPLES=OFF -DVT_BUILD_BENCH=OFF
cmake --build build-asan -j"$jobs"
echo "== tests under ASan+UBSan (core, analyzer, asan) =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'core|analyzer|asan' --timeout 900

# ---- reliability (tests/reliability.cmake, tests/fuzz, docs/reliability.md) ----
# Fork + threads, the writer and the session under ThreadSanitizer, then bounded
# fuzzing of every trace reader (VT_FUZZ_SECONDS per target, default 60).
echo "== build (ThreadSanitizer) =="
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVT_SANITIZE=OFF -DVT_BUILD_SAMPLES=OFF \
  -DVT_BUILD_BENCH=OFF "-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
cmake --build build-tsan -j"$jobs" --target test_rel_fork test_session test_writer test_flusher vramtrace
echo "== tests under ThreadSanitizer =="
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan --output-on-failure -R '^(test_rel_fork|test_session|test_writer|test_flusher)$' --timeout 600
# analyze reads several traces on several threads (-j): five traces, two schemas, every format
tsan_dir=$(mktemp -d)
for i in 1 2 3 4; do cp tests/data/example-train.db "$tsan_dir/rank$i.db"; done
cp tests/data/example-train-v1.db "$tsan_dir/v1.db"
for fmt in text json html; do
  TSAN_OPTIONS=halt_on_error=1 build-tsan/analyzer/vramtrace analyze -j 4 --format "$fmt" -o /dev/null \
    "$tsan_dir"/rank*.db "$tsan_dir/v1.db"
done
rm -rf "$tsan_dir"
echo "analyze -j 4 under ThreadSanitizer: clean"
echo "== bounded fuzzing =="
bash tests/fuzz/run.sh

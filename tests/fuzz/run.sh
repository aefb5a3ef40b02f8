#!/usr/bin/env bash
# Bounded fuzzing of every trace reader and of the importers' unpickler and JSON reader: builds the libFuzzer targets with clang
# (ASan+UBSan) in build-fuzz, runs each for VT_FUZZ_SECONDS (default 60) from the
# stored corpus, and fails on any crash, hang (> 10 s), leak or sanitizer report.
# The inputs that trip it are left in build-fuzz/artifacts/; add each new class
# to tests/fuzz/regress/<target>/ and to tests/test_rel_hostile.c.
# JOBS (default nproc) bounds the parallel compiles; VT_WERROR=ON makes warnings errors (tests/run.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${VT_FUZZ_SECONDS:-60}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang is required (libFuzzer: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
launcher=""
command -v ccache >/dev/null 2>&1 && launcher=-DCMAKE_C_COMPILER_LAUNCHER=ccache
# -Wno-error=string-concatenation: clang warns about SQL split over adjacent literals.
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVT_FUZZ=ON -DVT_SANITIZE=ON \
  -DVT_BUILD_SAMPLES=OFF -DVT_BUILD_BENCH=OFF -DVT_WERROR="${VT_WERROR:-OFF}" $launcher \
  "-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -Wno-error=string-concatenation" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_trace fuzz_tracedb fuzz_pickle fuzz_json

mkdir -p build-fuzz/artifacts
status=0
for t in trace tracedb pickle json; do
  work=$(mktemp -d)
  cp tests/fuzz/corpus/$t/* "$work"/
  log=build-fuzz/fuzz_$t.log
  echo "== fuzz_$t: ${secs} s =="
  # The readers print one "vramtrace:" line per refused input: the log keeps them.
  if UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
     build-fuzz/tests/fuzz_$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$t-" \
       "$work" $(ls -d tests/fuzz/regress/$t 2>/dev/null) >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE' "$log" || true
    echo "fuzz_$t: $(ls "$work" | wc -l) corpus inputs, no crash, hang, leak or sanitizer report"
  else
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written|timeout' "$log" | head -20 >&2
    echo "fuzz_$t: FAILED (log: $log)" >&2
    status=1
  fi
  rm -rf "$work"
done
exit $status

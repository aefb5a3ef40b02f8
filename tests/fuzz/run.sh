#!/usr/bin/env bash
# Bounded fuzzing of every trace reader and of the importers' unpickler and JSON reader: builds the libFuzzer targets with clang
# (ASan+UBSan) in build-fuzz, replays each one's stored corpus, then fuzzes it for VT_FUZZ_SECONDS (default 60) from the
# stored corpus, and fails on any crash, hang (> 10 s), leak or sanitizer report.
# The inputs that trip it are left in build-fuzz/artifacts/; add each new class
# to tests/fuzz/regress/<target>/ and to tests/test_rel_hostile.c.
# VT_FUZZ_SEED (default 1; 0: a new one each run) seeds libFuzzer, so that a run is repeatable but for
# how far its box lets it get; a failure's log lines (and tests/run.sh's summary) carry the seed
# and, for a small input, the input itself in base64.
# JOBS (default nproc) bounds the parallel compiles and how many targets fuzz at once; VT_WERROR=ON makes warnings errors (tests/run.sh).
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
gen=()
[ -f build-fuzz/CMakeCache.txt ] || ! command -v ninja >/dev/null 2>&1 || [ "${VT_GENERATOR-Ninja}" != Ninja ] ||
  gen=(-G Ninja)
# -g1: line tables, all a report's stack needs, for less compiling than -g.
CC=clang cmake -S . -B build-fuzz "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DVT_FUZZ=ON -DVT_SANITIZE=ON \
  -DVT_BUILD_SAMPLES=OFF -DVT_BUILD_BENCH=OFF -DVT_WERROR="${VT_WERROR:-OFF}" $launcher \
  "-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -Wno-error=string-concatenation" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_trace fuzz_tracedb fuzz_pickle fuzz_json
times >build-fuzz/times # the compile's CPU seconds (children's user + system), for the record
echo "== fuzz: configured and compiled in $(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t }' build-fuzz/times) CPU s"

mkdir -p build-fuzz/artifacts

# fuzz_one T: run target T: every stored input once, then VT_FUZZ_SECONDS of fuzzing; prints its
# figures, returns non-zero on a finding.
# libFuzzer's own box (-max_total_time) counts from its start, replay included, and fuzz_trace's
# replay alone outlasts a short box: so the box is kept here instead. Once libFuzzer says the stored
# inputs ran (its INITED line), it fuzzes for the box and is then told to stop through its stop file
# (-stop_file: it ends its loop, prints its figures and exits 0). Not by SIGINT: a SIGINT that lands
# while LeakSanitizer's leak check holds the allocator deadlocks libFuzzer's handler (it allocates),
# and the stage then hung. Its own -max_total_time stays as a backstop, and a target that has not
# ended 120 s after the stop file is killed and counted as failed. The targets run JOBS at a time
# (one core each): each gets its whole box.
fuzz_one() {
  local t=$1 work log rc=0 pid i=0 i2 stop
  work=$(mktemp -d)
  stop=$(mktemp -u)
  cp tests/fuzz/corpus/$t/* "$work"/
  log=build-fuzz/fuzz_$t.log
  : >"$log" # no INITED line from an earlier run
  # The readers print one "vramtrace:" line per refused input: the log keeps them.
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    build-fuzz/tests/fuzz_$t -seed="${VT_FUZZ_SEED:-1}" -max_total_time="$((secs + 600))" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$t-" -stop_file="$stop" \
    "$work" $(ls -d tests/fuzz/regress/$t 2>/dev/null) >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && ! grep -q 'INITED cov' "$log"; do sleep 1; done
  i=0
  while [ $i -lt "$secs" ] && kill -0 "$pid" 2>/dev/null; do
    sleep 1
    i=$((i + 1))
  done
  echo stop >"$stop"
  i2=0
  while [ $i2 -lt 120 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 1
    i2=$((i2 + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "(still running 120 s after its stop file: killed)" >>"$log"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" || rc=$?
  rm -f "$stop"
  if [ $rc -eq 0 ] && grep -q 'INITED cov' "$log"; then
    echo "== fuzz_$t: $(ls "$work" | wc -l) corpus inputs, replayed, then ${i} s of fuzzing: no crash, hang, leak" \
      "or sanitizer report ($(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs)"
  else
    echo "== fuzz_$t: FAILED (log: $log)" >&2
    # The first lines that say why, kept in build-fuzz/failed-T for tests/run.sh's summary.
    # libFuzzer prints a failing input in base64 when it is small: with it the finding can be
    # reproduced from a log alone (echo B64 | base64 -d >input).
    { grep -E 'INFO: Seed|ERROR|runtime error|SUMMARY|Test unit written|timeout|rss limit|still running|^Base64: ' "$log" | head -12 | cut -c1-3000
      if ! grep -q 'INITED cov' "$log"; then
        echo "(its stored inputs never finished replaying; its last lines:)"
        tail -3 "$log"
      fi; } >"build-fuzz/failed-$t"
    cat "build-fuzz/failed-$t" >&2
    rc=1
  fi
  rm -rf "$work"
  return $rc
}

# A slot is free as soon as any target ends: fuzz_trace, whose stored inputs take longest to replay
# before its box begins, starts first and the short targets take turns on the other slots. Each
# target that fails leaves build-fuzz/failed-T (a status wait -n could miss).
rm -f build-fuzz/failed-*
for t in trace tracedb pickle json; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  { fuzz_one "$t" || [ -e "build-fuzz/failed-$t" ] || : >"build-fuzz/failed-$t"; } &
done
wait
if ls build-fuzz/failed-* >/dev/null 2>&1; then exit 1; fi
exit 0

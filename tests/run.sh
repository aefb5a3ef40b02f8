#!/usr/bin/env bash
# The test command: every stage (builds, ctest, sanitizers, fuzzing, the loaded rerun) runs even
# when an earlier one fails; one summary at the end; exit 1 if anything failed.
#
# usage: bash tests/run.sh [--quick] [--stages LIST] [--list]
#   --quick        everyday work: the default build and its tests without the `slow` label
#                  (about 5 minutes on 2 cores once the build is up to date)
#   --stages LIST  only these stages, comma-separated (see --list)
#   --list         the stages and what each does
# Environment: VT_WERROR=ON makes compiler warnings errors in every build (CI sets it);
# JOBS (default nproc) bounds parallel compiles and tests; new build trees use Ninja where it is
# installed (VT_GENERATOR= for make); VT_FUZZ_SECONDS (default 20) of fuzzing per
# fuzz target, after its stored inputs; VT_REAL_DATA=DIR passes the real files to the default build;
# VT_TEST_TMPFS=0 keeps the tests' scratch files in /tmp: by default they go in a fresh folder on
# /dev/shm (TMPDIR for ctest) where that is a tmpfs with 4 GiB free, removed at the end (a disk's
# fsync waits are not what any test measures), but in stage loaded, which keeps the disk.
# The budget (tests/README.md): the whole command within 20 minutes on a 2-core machine.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
werror=${VT_WERROR:-OFF}
quick=0
only=""

all_stages="build release clang-nocuda minimal asan tsan fuzz loaded"
describe() {
  cat <<'EOF'
build         default build (RelWithDebInfo, gcc) and every ctest test (-LE slow with --quick)
release       Release build without libdw (-O3, what packagers build) and its tests but those
              labelled slow or once
clang-nocuda  clang, without the CUDA toolkit: the analyzer alone and its tests but slow, once
minimal       every optional piece off (no CUDA, libdw, zlib, Python): build, the README's
              example command, the tests that remain (but slow, once)
asan          ASan+UBSan build, tests labelled core, analyzer or asan (but slow, once, and the
              stored fuzz inputs when the fuzz stage runs them)
tsan          ThreadSanitizer build: the writer, session, flusher and fork tests; analyze -j 4
fuzz          libFuzzer targets (clang): each one's stored inputs, then VT_FUZZ_SECONDS of fuzzing
loaded        the reliability and writer tests again with 2 x nproc busy processes running
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --stages) only="${2:-}"; shift ;;
    --stages=*) only="${1#--stages=}" ;;
    --list) describe; exit 0 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tests/run.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$only" ]; then
  stages=${only//,/ }
  for s in $stages; do
    case " $all_stages " in *" $s "*) ;; *) echo "tests/run.sh: unknown stage $s (--list)" >&2; exit 2 ;; esac
  done
elif [ "$quick" = 1 ]; then
  stages="build"
else
  stages=$all_stages
fi

have_cuda=0
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
  have_cuda=1
  export PATH="/usr/local/cuda/bin:$PATH"
fi
have_clang=0
command -v clang >/dev/null 2>&1 && have_clang=1
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
generator=${VT_GENERATOR-$(command -v ninja >/dev/null 2>&1 && echo Ninja)}
real_data=()
[ -n "${VT_REAL_DATA:-}" ] && real_data=("-DVT_REAL_DATA=$VT_REAL_DATA")

# The tests' scratch folder (see the top): test_tmp, exported as TMPDIR to ctest but in stage loaded.
test_tmp=""
if [ "${VT_TEST_TMPFS:-1}" != 0 ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
  [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge $((4 * 1024 * 1024)) ] 2>/dev/null; then
  test_tmp=$(mktemp -d /dev/shm/vt-tests.XXXXXX 2>/dev/null) || test_tmp=""
fi

logdir=build-logs
mkdir -p "$logdir"
summary="$logdir/summary.txt"
: >"$summary"
skips="$logdir/skips.txt"
: >"$skips"
why="$logdir/failures.txt" # what failed, a line each (printed last: a log's tail shows it)
: >"$why"
failed_any=0

# ---- helpers ----

# configure DIR ARGS...: configure a build (every build gets -Wall -Wextra; VT_WERROR from the environment).
# A new tree is made for Ninja where it is installed (it spends less than make around each of the
# hundred targets); a tree that exists keeps its generator; VT_GENERATOR= (empty) keeps CMake's default.
configure() {
  local dir=$1 gen=()
  shift
  if [ ! -f "$dir/CMakeCache.txt" ] && [ -n "$generator" ]; then gen=(-G "$generator"); fi
  cmake -S . -B "$dir" "${gen[@]}" -DVT_WERROR="$werror" "${launcher[@]}" "$@"
}

# build DIR [TARGET...]
build() {
  local dir=$1
  shift
  if [ $# -gt 0 ]; then cmake --build "$dir" -j"$jobs" --target "$@"; else cmake --build "$dir" -j"$jobs"; fi
}

# test_targets DIR CTEST_ARGS...: what the tests ctest selects with CTEST_ARGS need built in DIR: each
# build output that a test's command or environment names (its program, the programs and libraries
# handed to it; a test program not built yet, by its target, the test's name), and vramtrace (tests
# find it through VT_BUILD_DIR); a program's own dependencies come with it. Prints nothing (build everything) where DIR is not a Ninja tree or python3 is missing.
test_targets() {
  local dir=$1
  shift
  [ -f "$dir/build.ninja" ] && command -v ninja >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 || return 0
  ninja -C "$dir" -t targets all >"$logdir/targets.txt" || return 0
  ctest --test-dir "$dir" --show-only=json-v1 "$@" | python3 -c '
import json, os, re, sys
root = os.path.abspath(sys.argv[1]) + "/"
outputs = {line.split(":", 1)[0] for line in open(sys.argv[2])}
want = {"vramtrace"}
for t in json.load(sys.stdin)["tests"]:
    if t["name"] in outputs:  # a test program not built yet (ctest shows no command for it): its target
        want.add(t["name"])
    words = list(t.get("command") or [])
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            words += p["value"]
    for w in words:
        for x in re.split(r"[=:;, ]", w):
            if x.startswith(root) and x[len(root):] in outputs:
                want.add(x[len(root):])
print(" ".join(sorted(want)))' "$dir" "$logdir/targets.txt"
}

# ctest_stage DIR ARGS...: run ctest, then add its counts and skips to the stage's result.
ctest_stage() {
  local dir=$1 console tmp=()
  shift
  if [ -z "$st_cpu_build" ]; then # the stage's CPU before its first ctest: configure and compile
    cpu_now
    st_cpu_build=$((cpu - c0))
  fi
  console="$logdir/$stage.ctest.log"
  [ -n "$test_tmp" ] && [ "$stage" != loaded ] && tmp=(env TMPDIR="$test_tmp")
  "${tmp[@]}" ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 900 "$@" 2>&1 | tee "$console"
  local rc=${PIPESTATUS[0]}
  bash tests/ctest_summary.sh "$dir" "$console" >"$console.summary"
  read -r _ p f s <"$console.summary"
  st_pass=$((st_pass + p)) st_fail=$((st_fail + f)) st_skip=$((st_skip + s))
  grep '^skip ' "$console.summary" | sed "s/^skip /$stage: /" >>"$skips"
  grep '^fail ' "$console.summary" | sed "s/^fail /$stage: test /" >>"$why"
  return "$rc"
}

# skip_stage WHY: the whole stage cannot run here.
skip_stage() {
  st_status=skipped
  echo "$stage: (the whole stage) $1" >>"$skips"
  echo "== $stage: skipped: $1 =="
}

# step DESCRIPTION COMMAND...: one checked step outside ctest (counted as a test).
step() {
  local what=$1
  shift
  if "$@"; then
    st_pass=$((st_pass + 1))
  else
    st_fail=$((st_fail + 1))
    echo "== $stage: FAILED: $what ==" >&2
    echo "$stage: $what" >>"$why"
    return 1
  fi
}

# ---- stages: each returns non-zero when something in it failed ----

stage_build() {
  local label=()
  [ "$quick" = 1 ] && label=(-LE slow)
  configure build "${real_data[@]}" && build build || return 1
  ctest_stage build "${label[@]}"
}

stage_release() {
  configure build-release -DCMAKE_BUILD_TYPE=Release -DVT_WITH_LIBDW=OFF -DVT_BUILD_SAMPLES=OFF \
    -DVT_BUILD_BENCH=OFF && build build-release || return 1
  ctest_stage build-release -LE 'slow|once'
}

stage_clang_nocuda() {
  [ "$have_clang" = 1 ] || { skip_stage "clang not found (apt-get install clang)"; return 0; }
  CC=clang configure build-clang -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DVT_BUILD_BENCH=OFF &&
    build build-clang || return 1
  ctest_stage build-clang -LE 'slow|once'
}

# The README's machine: only what its apt-get line names (make, not Ninja), every optional piece off.
stage_minimal() {
  generator="" configure build-minimal -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DVT_WITH_LIBDW=OFF \
    -DVT_WITH_ZLIB=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Python3=ON \
    -DVT_BUILD_BENCH=OFF && build build-minimal || return 1
  local rc=0
  step "README's example: vramtrace analyze tests/data/example-train.db" \
    sh -c 'build-minimal/analyzer/vramtrace analyze tests/data/example-train.db >/dev/null' || rc=1
  ctest_stage build-minimal -LE 'slow|once' || rc=1
  return $rc
}

stage_asan() {
  # -O1 as the sanitizers' own documentation advises: the tests run about twice as fast as at -O0.
  # -g1: line tables and functions, all a report's stack needs (file:line per frame), and a
  # fifth less compiling than -g (frame pointers stay: VT_SANITIZE keeps them).
  # The stored fuzz inputs (test_rel_fuzz_*) are left to the fuzz stage when it runs: libFuzzer
  # runs every one of them, under ASan+UBSan, before its time box begins.
  local replay=()
  case " $stages " in *" fuzz "*) [ "$have_clang" = 1 ] && replay=(-E '^test_rel_fuzz_') ;; esac
  # Only what those tests run is compiled (test_targets): the programs of the tests left out, and the
  # generators of the once suites, are not.
  local select=(-L 'core|analyzer|asan' -LE 'slow|once' "${replay[@]}") targets
  configure build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" -DVT_SANITIZE=ON -DVT_BUILD_SAMPLES=OFF -DVT_BUILD_BENCH=OFF &&
    targets=$(test_targets build-asan "${select[@]}") &&
    build build-asan $targets || return 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest_stage build-asan "${select[@]}"
}

# Fork + threads, the writer and the session under ThreadSanitizer; analyze -j on several threads.
stage_tsan() {
  local tsan_dir rc=0 fmt i
  [ "$have_cuda" = 1 ] || { skip_stage "no CUDA toolkit: the tracer's tests are not built"; return 0; }
  configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVT_SANITIZE=OFF -DVT_BUILD_SAMPLES=OFF \
    -DVT_BUILD_BENCH=OFF "-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread &&
    build build-tsan test_rel_fork test_session test_writer test_flusher vramtrace || return 1
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest_stage build-tsan -R '^(test_rel_fork|test_session|test_writer|test_flusher)$' || rc=1
  # analyze reads several traces on several threads (-j): five traces, two schemas, every format
  tsan_dir=$(mktemp -d)
  for i in 1 2 3 4; do cp tests/data/example-train.db "$tsan_dir/rank$i.db"; done
  cp tests/data/example-train-v1.db "$tsan_dir/v1.db"
  for fmt in text json html; do
    step "analyze -j 4 --format $fmt under ThreadSanitizer" env TSAN_OPTIONS=halt_on_error=1 \
      build-tsan/analyzer/vramtrace analyze -j 4 --format "$fmt" -o /dev/null "$tsan_dir"/rank*.db "$tsan_dir/v1.db" ||
      rc=1
  done
  rm -rf "$tsan_dir"
  return $rc
}

stage_fuzz() {
  [ "$have_clang" = 1 ] || { skip_stage "clang not found (apt-get install clang libclang-rt-14-dev)"; return 0; }
  local f
  step "bounded fuzzing, ${VT_FUZZ_SECONDS:-20} s per target" env VT_FUZZ_SECONDS="${VT_FUZZ_SECONDS:-20}" \
    bash tests/fuzz/run.sh && return 0
  for f in build-fuzz/failed-*; do # each failed target's first lines that say why
    [ -e "$f" ] && sed "s|^|fuzz: ${f#build-fuzz/failed-}: |" "$f" >>"$why"
  done
  return 1
}

# The tests that once failed only on a loaded machine (label reliability), again with
# 2 x nproc busy processes running beside them.
# The busy processes are started from a subshell that exits at once, so they are not this
# script's children and their CPU time is not counted as the stage's.
loaders=()
stop_load() {
  [ ${#loaders[@]} -gt 0 ] && kill "${loaders[@]}" 2>/dev/null
  loaders=()
}
at_exit() {
  stop_load
  [ -n "$test_tmp" ] && rm -rf "$test_tmp"
}
trap at_exit EXIT
stage_loaded() {
  local i rc
  [ -f build/CTestTestfile.cmake ] || { skip_stage "the build stage's tree is missing"; return 0; }
  for ((i = 0; i < 2 * jobs; i++)); do
    loaders+=("$( (while :; do :; done) >/dev/null 2>&1 </dev/null & echo $!)")
  done
  echo "== $stage: ${#loaders[@]} busy processes running =="
  ctest_stage build -L reliability
  rc=$?
  stop_load
  return $rc
}

# cpu_now: set cpu to the CPU seconds (user + system) of every finished child of this script so
# far (called in this shell: a subshell has no children of its own). A stage's CPU time is the
# budget's measure: a shared machine's wall clock says little, and on a dedicated 2-core machine
# a stage takes at least half its CPU time.
cpu_now() {
  times >"$logdir/times"
  cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d\n", t }' "$logdir/times")
}

# ---- run every stage, then the summary ----

t_all=$SECONDS
cpu_now
cpu_all=$cpu
for stage in $stages; do
  st_pass=0 st_fail=0 st_skip=0 st_status=ok st_cpu_build=""
  echo
  echo "======== $stage ========"
  t0=$SECONDS
  cpu_now
  c0=$cpu
  "stage_${stage//-/_}"
  rc=$?
  if [ $rc -ne 0 ]; then
    st_status=FAILED
    failed_any=1
    if [ $st_fail -eq 0 ]; then # a build or configure step failed: count it
      st_fail=1
      echo "$stage: configure or build (its log above)" >>"$why"
    fi
  fi
  cpu_now
  printf '%-13s %-8s %6d %6d %7d %6dm%02ds %7d %7s\n' "$stage" "$st_status" $st_pass $st_fail $st_skip \
    $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) $((cpu - c0)) "${st_cpu_build:--}" >>"$summary"
done

cpu_now
echo
echo "======== summary ($(((SECONDS - t_all) / 60)) min $(((SECONDS - t_all) % 60)) s, $((cpu - cpu_all)) CPU s; logs in $logdir/) ========"
printf '%-13s %-8s %6s %6s %7s %9s %7s %7s\n' stage result passed failed skipped time 'CPU s' 'build'
cat "$summary"
if [ -s "$skips" ]; then
  echo "skipped, and why:"
  sed 's/^/  /' "$skips"
fi
if [ $failed_any -ne 0 ]; then
  echo "what failed:"
  sed 's/^/  /' "$why"
  echo "FAILED: $(awk '$2 == "FAILED" {printf "%s ", $1}' "$summary")"
  exit 1
fi
echo "all stages passed"

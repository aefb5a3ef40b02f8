#!/usr/bin/env bash
# The whole GPU validation in one call, within a time budget: every step of tests/gpu/steps,
# its results in one archive gpu-results.tar.gz and a short summary.txt (docs/validation.md).
#
#   bash tests/gpu/device-run.sh [--dry-run] [--carry DIR] [--out DIR] [--budget SECONDS]
#                                [--only STEP,...] [--time-scale N] [--rebuild] [--list]
#
# Run from anywhere; it works in the repository it belongs to. DIR of --carry (default
# build-carry in the repository) is what tests/gpu/carry.py assembled from a build; --out
# (default $OUT) receives gpu-results.tar.gz (at most 16 MiB: the largest traces are dropped
# until it fits, and listed) and summary.txt. --budget (default $VT_GPU_BUDGET or 420) is
# the whole run's time: each step runs with its own timeout, never past the budget, and the
# steps that no longer fit are skipped and listed. --dry-run rehearses every step on a
# machine without a GPU: a folder from `carry.py --dry-run`, the test doubles of the samples
# and of the driver, the stand-in PyTorch (tests/gpu/fake_torch) and the stand-ins in
# tests/gpu/dry. --only runs the named steps alone; --list prints the steps; --rebuild
# rebuilds as below even when the carried folder runs (to rehearse the fallback);
# --time-scale N multiplies the budget and every step's times by N (a rehearsal on a slow or
# loaded machine). VT_GPU_STEPS names another steps folder and VT_GPU_ARCHIVE_LIMIT another
# archive limit in bytes (the driver's own tests).
#
# Steps are the files tests/gpu/steps/NN-NAME.sh, run in order of NN; see steps/README.md
# for adding one. If the carried binaries do not run here, or were built from other
# sources than this tree's (the manifest's source digest), the tracer, the command, the
# samples and gpu_check are rebuilt from this tree (needs cmake, nvcc and the SQLite the
# carried folder brings) before the steps, within the same budget; the summary says so.
# Exit status: 0 every step ran and passed, 1 a step failed, timed out or was skipped, or
# no build runs here (then only the environment step runs), 2 usage.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
tree=$(cd "$here/../.." && pwd -P)
dry=0 carry="" out=${OUT:-} budget=${VT_GPU_BUDGET:-420} only="" list=0 force_rebuild=0 scale=1 nobuild=""
usage() { sed -n '4,5p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --carry) carry=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --budget) budget=${2:-}; shift ;;
    --only) only=${2:-}; shift ;;
    --time-scale) scale=${2:-}; shift ;;
    --list) list=1 ;;
    --rebuild) force_rebuild=1 ;;
    -h|--help) usage ;;
    *) echo "device-run: unknown argument $1" >&2; usage ;;
  esac
  shift
done
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "device-run: --budget takes seconds" >&2; exit 2; }
[[ "$scale" =~ ^[1-9][0-9]*$ ]] || { echo "device-run: --time-scale takes a whole factor" >&2; exit 2; }
budget=$((budget * scale))
[ "$dry" = 1 ] && [ "$force_rebuild" = 1 ] && { echo "device-run: --rebuild makes real samples: not with --dry-run" >&2; exit 2; }

# header FILE KEY: the value of the "# KEY: VALUE" line of a step file.
header() { sed -n "s/^# $2: *\\([0-9]*\\).*/\\1/p" "$1" | head -n 1; }
steps=()
for f in "${VT_GPU_STEPS:-$here/steps}"/[0-9][0-9]-*.sh; do [ -f "$f" ] && steps+=("$f"); done
step_name() { local b; b=$(basename "$1" .sh); echo "${b#[0-9][0-9]-}"; }
if [ "$list" = 1 ]; then
  for f in "${steps[@]}"; do
    printf '%-12s timeout %4s s, min %3s s  %s\n' "$(step_name "$f")" "$(header "$f" timeout)" \
      "$(header "$f" min)" "$(sed -n '2s/^# //p' "$f")"
  done
  exit 0
fi
[ -n "$out" ] || { echo "device-run: set OUT or give --out" >&2; exit 2; }

t0=$(date +%s)
reserve=20 # seconds kept for the summary and the archive
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
work=$(mktemp -d "${TMPDIR:-/tmp}/vt-device-run.XXXXXX")
results="$work/gpu-results"
mkdir -p "$results/keep" "$work/scratch"
log="$results/driver.log"
say() { echo "device-run: $*" | tee -a "$log"; }
elapsed() { echo $(($(date +%s) - t0)); }

export VT_TREE="$tree" VT_DRY_RUN=$dry VT_RESULTS="$results" VT_KEEP="$results/keep" \
  VT_SCRATCH="$work/scratch" VT_PYTHON=${PYTHON:-python3}
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
[ -n "$carry" ] || carry="$tree/build-carry"

# ---- the carried folder: check it runs here, else rebuild it from this tree ----
rebuild() {
  local b="$work/build" c="$work/carry" s="$carry/sqlite"
  if ! command -v cmake >/dev/null || ! command -v nvcc >/dev/null; then
    say "cannot rebuild: cmake or nvcc missing"; return 1
  fi
  local sq=()
  [ -f "$s/include/sqlite3.h" ] && sq=(-DVT_SQLITE3_INCLUDE_DIR="$s/include" -DVT_SQLITE3_STATIC="$s/lib/libsqlite3.a")
  say "rebuilding from $tree in $b (at most $((240 * scale)) s)"
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  local targets=(vramtrace vramtrace_inject gpu_check vt_cupti_floor) f
  for f in "$tree"/samples/cuda/*.cu; do f=${f##*/}; targets+=("sample_${f%.cu}"); done
  timeout $((60 * scale)) cmake -S "$tree" -B "$b" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVT_BUILD_BENCH=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 "${sq[@]}" >> "$log" 2>&1 &&
    timeout $((180 * scale)) cmake --build "$b" -j "$(nproc)" --target "${targets[@]}" >> "$log" 2>&1 &&
    python3 "$tree/tests/gpu/carry.py" "$b" "$c" >> "$log" 2>&1 || { say "rebuild failed (see driver.log)"; return 1; }
  carry=$c
}
if [ "$dry" = 1 ] && ! grep -q "DRY RUN" "$carry/manifest.txt" 2>/dev/null; then
  echo "device-run: --dry-run needs a folder from tests/gpu/carry.py --dry-run (--carry DIR)" >&2; exit 2
fi
if [ "$dry" = 0 ] && grep -q "DRY RUN" "$carry/manifest.txt" 2>/dev/null; then
  echo "device-run: $carry holds stand-in samples: use it with --dry-run only" >&2; exit 2
fi
if [ "$force_rebuild" = 1 ] || ! "$carry/analyzer/vramtrace" --version >> "$log" 2>&1 ||
   ! "$carry/tests/gpu_check" --info leak >> "$log" 2>&1; then
  say "the carried folder $carry is missing, does not run here, or --rebuild was given"
  if ! { [ "$dry" = 0 ] && rebuild; }; then
    nobuild="no usable vramtrace build (driver.log): only the environment step ran"
    say "$nobuild"
    only="env"
  fi
fi
# A folder built from other sources than this tree's is stale: rebuild (a rehearsal only warns).
stale=""
want=$(sed -n 's/^source digest: //p' "$carry/manifest.txt" 2>/dev/null)
have=$(python3 "$here/carry.py" --digest "$tree" 2>/dev/null)
if [ -n "$want" ] && [ "$want" != "$have" ]; then
  stale="the carried folder was built from other sources than this tree's"
  say "$stale"
  if [ "$dry" = 0 ] && [ "$force_rebuild" = 0 ]; then
    if rebuild; then stale="$stale: rebuilt here"; else stale="$stale: the rebuild failed, the carried one runs"; fi
  fi
fi
carry=$(cd "$carry" 2>/dev/null && pwd -P || echo "$carry")
export VT_CARRY="$carry"

# ---- libcupti: the toolkit's, else the Python environment's (realpath) ----
first_file() { local f; for f in "$@"; do [ -f "$f" ] && { readlink -f "$f"; return; }; done; }
cupti_tk=$(first_file /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/lib/libcupti.so.13 \
  /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 /usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13)
# shellcheck disable=SC2046  # one path per line, without spaces
cupti_py=$(first_file $("$VT_PYTHON" -c 'import site, glob, os
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcupti.so.13"))) + sorted(glob.glob(os.path.join(d, "nvidia", "cuda_cupti", "lib", "libcupti.so.13"))):
        print(p)' 2>/dev/null))
export VT_CUPTI_LIB=${VT_CUPTI_LIB:-${cupti_tk:-$cupti_py}} VT_CUPTI_PY=${cupti_py:-}
if [ "$dry" = 1 ]; then
  export PATH="$here/dry:$PATH" PYTHONPATH="$here/fake_torch${PYTHONPATH:+:$PYTHONPATH}" \
    LD_LIBRARY_PATH="$carry/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" VT_JOBS=${VT_JOBS:-2}
else
  export VT_JOBS=${VT_JOBS:-3}
fi

{
  echo "vramtrace GPU validation: $([ "$dry" = 1 ] && echo "DRY RUN (stand-ins, no GPU)" || echo "real run")"
  echo "started: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget $budget s$([ "$scale" != 1 ] && echo " (times x$scale)"), host $(hostname)"
  echo "tree: $tree; carry: $carry"
  echo "libcupti: toolkit ${cupti_tk:-none}, Python environment ${cupti_py:-none}; VT_CUPTI_LIB=$VT_CUPTI_LIB"
  echo "--- carried folder's manifest"
  cat "$carry/manifest.txt" 2>&1
} > "$results/manifest.txt"

# ---- the steps ----
summary="$work/steps.txt"
: > "$summary"
skipped=() failed=0
for f in "${steps[@]}"; do
  name=$(step_name "$f")
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then
    continue
  fi
  tmax=$(header "$f" timeout) tmin=$(header "$f" min)
  tmax=$((${tmax:-60} * scale)) tmin=$((${tmin:-10} * scale))
  left=$((budget - $(elapsed) - reserve))
  if [ "$left" -lt "$tmin" ]; then
    skipped+=("$name")
    printf '%-12s %-8s %5s s  %s\n' "$name" SKIPPED - "budget: ${left} s left, needs ${tmin}" >> "$summary"
    say "$name: skipped (${left} s left of the budget, the step needs ${tmin})"
    continue
  fi
  t=$tmax
  [ "$left" -lt "$t" ] && t=$left
  dir="$results/$name"
  mkdir -p "$dir"
  say "$name: started (at most $t s; $(elapsed) s used of $budget)"
  s0=$(date +%s)
  VT_STEP="$name" VT_STEP_DIR="$dir" VT_STEP_DEADLINE=$((s0 + t)) \
    timeout -k 10 "$t" bash "$f" > "$dir/step.log" 2>&1 < /dev/null
  rc=$?
  secs=$(($(date +%s) - s0))
  status=$(cat "$dir/status" 2>/dev/null || true)
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    status="TIMEOUT"
  elif [ -z "$status" ]; then
    status="ERROR"
    echo "the step ended with status $rc without a result" >> "$dir/summary"
  elif [ "$rc" != 0 ] && [ "$status" != fail ]; then
    status="ERROR"
    echo "the step ended with status $rc" >> "$dir/summary"
  fi
  status=$(echo "$status" | tr '[:lower:]' '[:upper:]')
  case "$status" in PASS|INFO) ;; *) failed=1 ;; esac
  printf '%-12s %-8s %5s s  %s\n' "$name" "$status" "$secs" "$(head -n 1 "$dir/summary" 2>/dev/null)" >> "$summary"
  tail -n +2 "$dir/summary" 2>/dev/null | head -n 4 | sed 's/^/                            /' >> "$summary"
  say "$name: $status in $secs s"
done

# ---- summary and archive ----
write_summary() {
  {
    head -n 2 "$results/manifest.txt"
    echo "carried: $(sed -n 's/^commit: //p' "$carry/manifest.txt"), $(sed -n 's/^assembled: //p' "$carry/manifest.txt")"
    [ -n "$stale" ] && echo "WARNING: $stale"
    [ -n "$nobuild" ] && echo "WARNING: $nobuild"
    echo
    printf '%-12s %-8s %7s  %s\n' step result time notes
    cat "$summary"
    echo
    if [ ${#skipped[@]} -gt 0 ]; then echo "skipped for the budget: ${skipped[*]}"; else echo "skipped for the budget: none"; fi
    echo "time: $(elapsed) s of $budget s"
    echo "overall: $([ "$failed" = 0 ] && [ ${#skipped[@]} = 0 ] && [ -z "$nobuild" ] && echo PASS || echo FAIL)"
    [ -n "${1:-}" ] && echo "$1"
  } > "$results/summary.txt"
}
write_summary
limit=${VT_GPU_ARCHIVE_LIMIT:-$((16 << 20))}
archive="$out/gpu-results.tar.gz"
make_archive() { tar -czf "$archive" -C "$work" gpu-results 2>> "$log"; stat -c %s "$archive"; }
size=$(make_archive)
trimmed=0
# Too large: drop the largest traces and pickles outside keep/ (then anything but the
# summaries, manifests and logs) until it fits, and say which.
while [ "$size" -gt "$limit" ]; do
  victim=$(find "$results" -type f ! -path "$results/keep/*" \( -name '*.db' -o -name '*.db-wal' -o -name '*.pickle' \) \
             -printf '%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
  [ -n "$victim" ] || victim=$(find "$results" -type f ! -name summary.txt ! -name manifest.txt ! -name '*.log' \
             -printf '%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
  [ -n "$victim" ] || break
  echo "$(stat -c %s "$victim") ${victim#"$results"/}" >> "$results/trimmed.txt"
  rm -f "$victim"
  trimmed=$((trimmed + 1))
  size=$(make_archive)
done
note="archive: gpu-results.tar.gz, $((size / 1024)) KiB; trimmed to fit $((limit >> 10)) KiB: $trimmed file(s)$([ "$trimmed" -gt 0 ] && echo ' (trimmed.txt)')"
write_summary "$note"
size=$(make_archive)
cp "$results/summary.txt" "$out/summary.txt"
cat "$results/summary.txt"
rm -rf "$work"
[ "$failed" = 0 ] && [ ${#skipped[@]} = 0 ] && [ -z "$nobuild" ]

#!/bin/bash
# Reports byte for byte: `analyze` of two builds of vramtrace on the same files, for a change that must not move them.
#
# bench/cmpreports.sh OLD NEW FILE...
# Runs `OLD analyze --no-write FILE` and `NEW analyze --no-write FILE`, as text and with --format json, in a
# scratch directory, and compares stdout, stderr (the scratch directory's name removed) and the exit status.
# Prints one line per difference and a count; exits 1 when any differs. The inputs used for a change to the
# analyzer's reading: the bench traces (bench_analyzer's DIR, with -j's copies out of time order),
# tests/data, tests/fuzz/corpus, the real files, and the traces of accgen --suite quick and fitgen --split dev.
OLD=$1 NEW=$2
shift 2
case $OLD in /*) ;; *) OLD=$PWD/$OLD ;; esac
case $NEW in /*) ;; *) NEW=$PWD/$NEW ;; esac
if [ ! -x "$OLD" ] || [ ! -x "$NEW" ]; then
  echo "usage: cmpreports.sh OLD NEW FILE..." >&2
  exit 2
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/cmpreports.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
nd=0 n=0
for f in "$@"; do
  case $f in /*) ;; *) f=$PWD/$f ;; esac # the runs are made in the scratch directory
  for mode in text json; do
    args=(analyze --no-write)
    [ $mode = json ] && args+=(--format json)
    for b in old new; do
      bin=$OLD
      [ $b = new ] && bin=$NEW
      (cd "$W" && timeout 600 "$bin" "${args[@]}" "$f" >"$W/$b.out" 2>"$W/$b.err"; echo $? >"$W/$b.rc")
      sed -i "s#$W##g" "$W/$b.err"
    done
    n=$((n + 1))
    for x in out err rc; do
      cmp -s "$W/old.$x" "$W/new.$x" || { echo "DIFF $mode $x: $f"; nd=$((nd + 1)); }
    done
  done
done
echo "compared $n runs, $nd differences"
[ $nd = 0 ]

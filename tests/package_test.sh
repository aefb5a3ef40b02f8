#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` of this build, installed into a scratch root (dpkg --root,
# else dpkg-deb -x); the installed command runs `record --help`, analyzes the installed example
# trace, and `record` finds the installed tracer and Python hook relative to its own path.
#
# usage: tests/package_test.sh BUILD_DIR CPACK_COMMAND
# Exit 0 when every check holds, 1 otherwise, 77 (skipped) without dpkg-deb.
set -u
build=$1
cpack=$2
command -v dpkg-deb >/dev/null 2>&1 || { echo "skipped: dpkg-deb not found (not a Debian system)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nfail=0
fail() {
  echo "FAIL   $*"
  nfail=$((nfail + 1))
}
ok() { echo "ok     $*"; }

if ! "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log"
  echo "FAIL   cpack -G DEB"
  exit 1
fi
deb=$(ls "$tmp"/pkg/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL   cpack wrote no .deb"; exit 1; }
ok "cpack -G DEB: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -f "$deb" Package Version Architecture Depends >"$tmp/fields"
grep -q '^Package: vramtrace$' "$tmp/fields" && grep -q '^Depends: libc6' "$tmp/fields" &&
  ok "control fields: $(tr '\n' ' ' <"$tmp/fields")" || fail "control fields: $(cat "$tmp/fields")"

# Install: dpkg itself into a scratch root where it can run, else the files unpacked.
root="$tmp/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
if dpkg --force-not-root --force-depends --root="$root" --log=/dev/null -i "$deb" >"$tmp/dpkg.log" 2>&1 &&
  dpkg --root="$root" -s vramtrace 2>/dev/null | grep -q '^Status: install ok installed'; then
  ok "dpkg -i into a scratch root"
else
  sed 's/^/  /' "$tmp/dpkg.log"
  echo "       (dpkg cannot install into a scratch root here: the files unpacked with dpkg-deb -x instead)"
  dpkg-deb -x "$deb" "$root" || { echo "FAIL   dpkg-deb -x"; exit 1; }
fi
usr="$root/usr"
vt="$usr/bin/vramtrace"
for f in bin/vramtrace share/man/man1/vramtrace.1 share/doc/vramtrace/README.md share/doc/vramtrace/cli.md \
  share/doc/vramtrace/examples/example-train.db share/vramtrace/pyhook/sitecustomize.py include/vramtrace/schema.h; do
  [ -e "$usr/$f" ] || fail "not installed: /usr/$f"
done
lib=$(ls "$build"/libvramtrace.so 2>/dev/null)
if [ -n "$lib" ]; then
  [ -f "$usr/lib/vramtrace/libvramtrace.so" ] || fail "not installed: /usr/lib/vramtrace/libvramtrace.so"
fi
[ $nfail -eq 0 ] && ok "installed: the command, the tracer, the Python hook, the man page, the docs and example"

out=$("$vt" record --help 2>&1)
rc=$?
[ $rc -eq 0 ] && case "$out" in *"usage: vramtrace record"*) true ;; *) false ;; esac &&
  ok "vramtrace record --help" || fail "vramtrace record --help: exit $rc: $out"
"$vt" analyze "$usr/share/doc/vramtrace/examples/example-train.db" >"$tmp/analyze.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'train.py:97' "$tmp/analyze.txt" &&
  ok "vramtrace analyze on the installed example: $(head -1 "$tmp/analyze.txt")" ||
  fail "vramtrace analyze on the installed example: exit $rc: $(head -5 "$tmp/analyze.txt")"
if command -v man >/dev/null 2>&1; then
  man -l "$usr/share/man/man1/vramtrace.1" 2>/dev/null | grep -q 'vramtrace' && ok "man page renders" ||
    fail "man -l vramtrace.1"
fi

# record finds what it needs relative to its own installed path (nothing set)
if [ -n "$lib" ]; then
  env -u VRAMTRACE_LIB -u PYTHONPATH "$vt" record -o "$tmp/traces/" -- /bin/sh -c \
    'printf "%s\n%s\n" "$CUDA_INJECTION64_PATH" "$PYTHONPATH" > "$0"' "$tmp/env.txt" >"$tmp/record.log" 2>&1
  rc=$?
  want_lib=$(realpath "$usr/lib/vramtrace/libvramtrace.so")
  got_lib=$(sed -n 1p "$tmp/env.txt" 2>/dev/null)
  got_py=$(sed -n 2p "$tmp/env.txt" 2>/dev/null)
  [ $rc -eq 0 ] && [ "$got_lib" = "$want_lib" ] && ok "record injects the installed tracer ($got_lib)" ||
    fail "record: exit $rc, CUDA_INJECTION64_PATH=$got_lib (expected $want_lib): $(cat "$tmp/record.log")"
  case "$got_py" in
    "$(realpath "$usr/share/vramtrace/pyhook")"*) ok "record puts the installed Python hook on PYTHONPATH" ;;
    *) fail "record: PYTHONPATH=$got_py (expected the installed hook first)" ;;
  esac
fi
[ $nfail -eq 0 ] || { echo "$nfail check(s) failed"; exit 1; }
echo "every check passed"

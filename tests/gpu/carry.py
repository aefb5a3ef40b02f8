#!/usr/bin/env python3
"""Assemble the folder a GPU machine needs from a build: what tests/gpu/device-run.sh runs.

    python3 tests/gpu/carry.py BUILD [DEST] [--dry-run] [--no-strip]
    python3 tests/gpu/carry.py --digest [SOURCE]

DEST (default SOURCE/build-carry, which .gitignore's /build*/ ignores) is a small build
folder with the build's layout, so every script that takes a build folder takes it too:

    analyzer/vramtrace, analyzer/pyhook/     the command and its PyTorch history hook
    libvramtrace.so                          the tracer (record finds it beside analyzer/..)
    tests/gpu_check                          the GPU test driver (run and --verify)
    samples/cuda/*                           the CUDA samples
    bench/libvt_cupti_floor.so               the floor CUPTI client of the overhead step
    every other file under BUILD that a gpu-labelled ctest test names
    CTestTestfile.cmake                      the gpu-labelled tests, paths written as
                                             $ENV{VT_CARRY} (this folder) and $ENV{VT_TREE}
                                             (the source tree): ctest runs from any path
    sqlite/include, sqlite/lib               SQLite's header and static library, for a
                                             rebuild on a machine without them
    manifest.txt                             commit, build type, date, the source digest,
                                             every file and size

Executables and libraries are stripped (strip --strip-unneeded) unless --no-strip.
--dry-run makes the rehearsal's folder: each sample is a stand-in script running the test
double tests/gpu_fake_sample as that sample, and the test double of the CUDA driver
(tests/fakecuda/libcuda.so.1) comes along. The sizes of the folder and of the working tree
that travels with it are printed; the two must stay under 64 MiB together.
--digest prints the digest of the sources the carried files are built from (SOURCE default:
this tree): device-run.sh compares it with the manifest's to tell a stale folder.
Exit status: 0, 1 when something needed is missing (said on stderr), 2 usage.
"""
import hashlib
import datetime
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

LIMIT = 64 << 20
REQUIRED = ("analyzer/vramtrace", "analyzer/pyhook/sitecustomize.py", "libvramtrace.so", "tests/gpu_check")
OPTIONAL = ("bench/libvt_cupti_floor.so",)
DRY = ("tests/gpu_fake_sample", "tests/fakecuda/libcuda.so.1")
MARK = "manifest.txt"
# What the carried files are built from (folders, or files), relative to the source tree.
BUILT_FROM = ("CMakeLists.txt", "include", "tracer", "analyzer", "samples/cuda", "bench/overhead/cupti_floor.c",
              "tests/gpu_check.c", "tests/gpu_verify.c", "tests/gpu_verify.h", "tests/gpu_fake_sample.c",
              "tests/gpu_fake_trace.c", "tests/gpu_fake_trace.h", "tests/gpu_fake_cuda.c", "tests/gpu.cmake")

STAND_IN = """#!/bin/sh
# Rehearsal stand-in for the CUDA sample {name} (tests/gpu/carry.py --dry-run): the test
# double tests/gpu_fake_sample imitates it, expecting the injection settings that
# gpu_check and `vramtrace record` give a sample (this folder's tracer, VT_CUPTI_LIB's folder).
carry=$(cd "$(dirname "$0")/../.." && pwd -P)
VT_FAKE_SAMPLE={name}
VT_FAKE_EXPECT_LIB=${{VT_FAKE_EXPECT_LIB:-$carry/libvramtrace.so}}
VT_FAKE_EXPECT_CUPTI=${{VT_FAKE_EXPECT_CUPTI:-$VT_CUPTI_LIB}}
export VT_FAKE_SAMPLE VT_FAKE_EXPECT_LIB VT_FAKE_EXPECT_CUPTI
exec "$carry/tests/gpu_fake_sample" "$@"
"""


def die(msg, code=1):
    sys.stderr.write(f"carry: {msg}\n")
    sys.exit(code)


def cache_vars(build):
    """The CMakeCache.txt entries of build as a dict (NAME -> value)."""
    out = {}
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if ":" in line and "=" in line and not line.startswith(("#", "//")):
                    key, _, value = line.rstrip("\n").partition("=")
                    out[key.split(":")[0]] = value
    except OSError as e:
        die(f"{build} is not a configured build folder: {e}")
    return out


def gpu_tests(build):
    """The gpu-labelled tests of build, as ctest --show-only=json-v1 describes them.

    ctest reads a copy of build's CTestTestfile.cmake tree (the tests' commands and folders are
    absolute): even --show-only rewrites the folder's Testing/Temporary/LastTest.log, which a
    ctest running in build at the same time (this script runs inside one) is writing.
    """
    with tempfile.TemporaryDirectory(prefix="vt-carry-tests-") as tmp:
        for root, dirs, files in os.walk(build):
            dirs[:] = [d for d in dirs if d not in ("Testing", "CMakeFiles")]
            if "CTestTestfile.cmake" in files:
                dest = os.path.join(tmp, os.path.relpath(root, build))
                os.makedirs(dest, exist_ok=True)
                shutil.copy(os.path.join(root, "CTestTestfile.cmake"), dest)
        try:
            p = subprocess.run(["ctest", "--test-dir", tmp, "-L", "^gpu$", "--show-only=json-v1"],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            die(f"ctest: {e}")
    if p.returncode != 0:
        die(f"ctest --show-only failed: {p.stderr.strip()}")
    tests = json.loads(p.stdout).get("tests", [])
    for t in tests:  # a test's default folder is its CTestTestfile's: the copy's, back to build's
        for prop in t.get("properties", []):
            v = prop.get("value")
            if prop.get("name") == "WORKING_DIRECTORY" and isinstance(v, str) and (v == tmp or v.startswith(tmp + os.sep)):
                prop["value"] = os.path.normpath(os.path.join(os.path.abspath(build), os.path.relpath(v, tmp)))
    return tests


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def copy(src, dst, do_strip):
    """Copy src to dst (folders made), stripped when it is an ELF file and do_strip; keeps the mode."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(src, dst)
    if do_strip and is_elf(dst):
        subprocess.run(["strip", "--strip-unneeded", dst], check=True)


def cmake_quote(text, build, source):
    """text as a quoted CMake argument, with the build and source paths as $ENV{VT_CARRY} and $ENV{VT_TREE}."""
    def esc(s):
        return s.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    out, i = [], 0
    while i < len(text):
        for prefix, var in ((build, "$ENV{VT_CARRY}"), (source, "$ENV{VT_TREE}")):
            if text.startswith(prefix, i) and (len(text) == i + len(prefix) or text[i + len(prefix)] in "/;:"):
                out.append(var)
                i += len(prefix)
                break
        else:
            out.append(esc(text[i]))
            i += 1
    return '"' + "".join(out) + '"'


def ctest_file(tests, build, source):
    """The text of a CTestTestfile.cmake running tests from the carried folder."""
    q = lambda v: cmake_quote(";".join(map(str, v)) if isinstance(v, list) else str(v), build, source)
    lines = ["# The gpu-labelled tests of the build this folder was carried from (tests/gpu/carry.py).",
             "# Paths: $ENV{VT_CARRY} is this folder, $ENV{VT_TREE} the source tree; both absolute.",
             "if(NOT DEFINED ENV{VT_CARRY} OR NOT DEFINED ENV{VT_TREE})",
             '  message(FATAL_ERROR "set VT_CARRY (this folder) and VT_TREE (the source tree), as tests/gpu/device-run.sh does")',
             "endif()"]
    for t in tests:
        lines.append(f"add_test({t['name']} " + " ".join(q(a) for a in t["command"]) + ")")
        props = " ".join(f"{p['name']} {q(p['value'])}" for p in t.get("properties", [])
                         if p["name"] in ("LABELS", "SKIP_RETURN_CODE", "TIMEOUT", "WORKING_DIRECTORY",
                                          "ENVIRONMENT", "WILL_FAIL", "PASS_REGULAR_EXPRESSION",
                                          "FAIL_REGULAR_EXPRESSION"))
        if props:
            lines.append(f"set_tests_properties({t['name']} PROPERTIES {props})")
    return "\n".join(lines) + "\n"


def under(path, root):
    return os.path.abspath(path).startswith(os.path.abspath(root) + os.sep)


def tree_bytes(source):
    """Bytes of the working tree that travels: tracked and untracked files git does not ignore."""
    try:
        p = subprocess.run(["git", "-C", source, "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode != 0:
        return None
    total = 0
    for name in p.stdout.decode("utf-8", "replace").split("\0"):
        path = os.path.join(source, name)
        if name and os.path.isfile(path) and not os.path.islink(path):
            total += os.path.getsize(path)
    return total


def git_describe(source):
    """'COMMIT' or 'COMMIT + N changed files' of the source tree, or 'unknown'."""
    try:
        head = subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", source, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (f" + {len(dirty)} changed files" if dirty else "")


def source_digest(source):
    """SHA-256 over the path and content of every file the carried folder is built from."""
    h = hashlib.sha256()
    for item in BUILT_FROM:
        top = os.path.join(source, item)
        paths = [top] if os.path.isfile(top) else sorted(
            os.path.join(d, n) for d, _, names in os.walk(top) for n in names if "__pycache__" not in d)
        for path in sorted(paths):
            h.update(os.path.relpath(path, source).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()


def main(argv):
    if len(argv) in (2, 3) and argv[1] == "--digest":
        here = os.path.dirname(os.path.abspath(__file__))
        print(source_digest(argv[2] if len(argv) == 3 else os.path.join(here, "..", "..")))
        return 0
    args = [a for a in argv[1:] if not a.startswith("--")]
    flags = {a for a in argv[1:] if a.startswith("--")}
    if not args or len(args) > 2 or flags - {"--dry-run", "--no-strip"}:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    build = os.path.realpath(args[0])
    cache = cache_vars(build)
    source = os.path.realpath(cache.get("CMAKE_HOME_DIRECTORY") or ".")
    dest = os.path.abspath(args[1] if len(args) > 1 else os.path.join(source, "build-carry"))
    dry, do_strip = "--dry-run" in flags, "--no-strip" not in flags
    if do_strip and not shutil.which("strip"):
        sys.stderr.write("carry: no strip command: files are carried unstripped\n")
        do_strip = False
    if os.path.exists(dest):
        if os.listdir(dest) and not os.path.exists(os.path.join(dest, MARK)):
            die(f"{dest} exists and is not a carried folder (no {MARK}): not replacing it")
        shutil.rmtree(dest)

    tests = gpu_tests(build)
    files = set(REQUIRED) | {f for f in OPTIONAL if os.path.isfile(os.path.join(build, f))}
    samples_dir = os.path.join(build, "samples", "cuda")
    samples = sorted(n for n in os.listdir(samples_dir)) if os.path.isdir(samples_dir) else []
    files |= {f"samples/cuda/{n}" for n in samples}
    for t in tests:
        for a in t["command"]:
            if under(a, build) and os.path.isfile(a):
                files.add(os.path.relpath(a, build))
    if dry:
        files |= set(DRY)
    missing = [f for f in sorted(files) if not os.path.isfile(os.path.join(build, f))]
    if missing:
        die(f"not built in {build}: {', '.join(missing)}")
    if not samples:
        die(f"no CUDA samples in {samples_dir} (configure with nvcc on PATH and VT_BUILD_SAMPLES=ON)")

    for f in sorted(files):
        if dry and f.startswith("samples/cuda/"):
            os.makedirs(os.path.join(dest, "samples", "cuda"), exist_ok=True)
            with open(os.path.join(dest, f), "w") as out:
                out.write(STAND_IN.format(name=os.path.basename(f)))
            os.chmod(os.path.join(dest, f), 0o755)
        else:
            copy(os.path.join(build, f), os.path.join(dest, f), do_strip)
    with open(os.path.join(dest, "CTestTestfile.cmake"), "w") as f:
        f.write(ctest_file(tests, build, source))
    for key, sub in (("VT_SQLITE3_INCLUDE_DIR", "include"), ("VT_SQLITE3_STATIC", "lib")):
        path = cache.get(key, "")
        for src in ([os.path.join(path, n) for n in ("sqlite3.h", "sqlite3ext.h")] if sub == "include" else [path]):
            if os.path.isfile(src):
                copy(src, os.path.join(dest, "sqlite", sub, os.path.basename(src)), False)

    listing, total = [], 0
    for root, _, names in os.walk(dest):
        for n in sorted(names):
            p = os.path.join(root, n)
            listing.append((os.path.relpath(p, dest), os.path.getsize(p)))
            total += os.path.getsize(p)
    tree = tree_bytes(source)
    with open(os.path.join(dest, MARK), "w") as f:
        f.write(f"vramtrace carried build{' (DRY RUN: stand-in samples)' if dry else ''}\n"
                f"commit: {git_describe(source)}\n"
                f"assembled: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')}\n"
                f"build: {build} ({cache.get('CMAKE_BUILD_TYPE') or 'no build type'}), source: {source}\n"
                f"stripped: {'yes' if do_strip else 'no'}\n"
                f"source digest: {source_digest(source)}\n"
                f"gpu tests: {len(tests)}; samples: {' '.join(samples)}\n"
                f"bytes: {total}\n")
        for name, size in sorted(listing):
            f.write(f"{size:>10} {name}\n")
    mib = lambda n: f"{n / (1 << 20):.1f} MiB"
    print(f"carry: {dest}: {len(listing)} files, {mib(total)}"
          + (f"; working tree {mib(tree)}; together {mib(total + tree)} of {mib(LIMIT)}" if tree is not None else ""))
    if tree is not None and total + tree >= LIMIT:
        die(f"the carried folder and the working tree exceed {mib(LIMIT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

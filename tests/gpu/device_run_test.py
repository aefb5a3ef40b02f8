#!/usr/bin/env python3
"""Tests of tests/gpu/device-run.sh without a GPU: the rehearsal, the budget, a broken step, the size cap.

    device_run_test.py BUILD [rehearsal|driver]...

rehearsal: assembles a rehearsal folder from BUILD (tests/gpu/carry.py --dry-run), runs
`device-run.sh --dry-run` on it (every step, on stand-ins) and checks what comes back: the
output folder holds exactly gpu-results.tar.gz and summary.txt, the archive is at most 16 MiB
with the layout docs/validation.md describes (every step's folder, status and summary; each
sample's trace, known answer and reports; the PyTorch runs; the overhead figures; the leak
ground truth; keep/), every step passed, and summary.txt says so. Then the same folder
with a budget too short for all: the steps that no longer fit are skipped and listed, the
run fails, the archive is still written.
driver: the driver on steps of its own (VT_GPU_STEPS): a step that hangs is killed at its
timeout and reported TIMEOUT, one that ends without a result ERROR, the next still run; an
archive over the limit (VT_GPU_ARCHIVE_LIMIT) loses its largest trace, listed in trimmed.txt.
Exit status 0 when every check passed, 1 otherwise, 77 when BUILD has no CUDA samples.
"""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testlib import check, finish  # noqa: E402

DRIVER = os.path.join(HERE, "device-run.sh")
STEPS = ("env", "ctest", "samples", "pytorch", "overhead", "sanitizer", "versions")
SCALE = os.environ.get("VT_REHEARSAL_TIME_SCALE", "4")


def run_driver(args, env_extra=None, timeout=3600):
    env = dict(os.environ, **(env_extra or {}))
    for k in ("OUT", "VT_CUPTI_LIB", "VT_JOBS", "PYTHONPATH"):
        env.pop(k, None)
    env.update(env_extra or {})
    return subprocess.run(["bash", DRIVER] + args, capture_output=True, text=True, timeout=timeout, env=env)


def unpack(out, dest):
    """The archive's files: {path inside gpu-results/: size}; extracted to dest."""
    with tarfile.open(os.path.join(out, "gpu-results.tar.gz")) as tar:
        tar.extractall(dest)
        return {m.name[len("gpu-results/"):]: m.size for m in tar.getmembers() if m.isfile()}


def test_rehearsal(build, tmp):
    carry = os.path.join(tmp, "carry")
    p = subprocess.run([sys.executable, os.path.join(HERE, "carry.py"), build, carry, "--dry-run"],
                       capture_output=True, text=True, timeout=600)
    if not check(p.returncode == 0, f"carry.py --dry-run: exit {p.returncode}\n{p.stderr}"):
        return
    check(re.search(r"together [0-9.]+ MiB of 64.0 MiB", p.stdout) is not None, f"carry sizes printed: {p.stdout}")
    samples = sorted(os.listdir(os.path.join(carry, "samples", "cuda")))
    out = os.path.join(tmp, "out")
    p = run_driver(["--dry-run", "--carry", carry, "--out", out, "--time-scale", SCALE])
    summary = p.stdout
    check(p.returncode == 0, f"the rehearsal passes: exit {p.returncode}\n{p.stdout[-4000:]}\n{p.stderr[-2000:]}")
    check(sorted(os.listdir(out)) == ["gpu-results.tar.gz", "summary.txt"], f"output folder: {os.listdir(out)}")
    size = os.path.getsize(os.path.join(out, "gpu-results.tar.gz"))
    check(size <= 16 << 20, f"archive {size} bytes <= 16 MiB")
    files = unpack(out, os.path.join(tmp, "unpacked"))
    want = ["summary.txt", "manifest.txt", "driver.log", "env/environment.txt", "env/probe.log",
            "ctest/ctest.log", "pytorch/check.txt", "pytorch/summary.md", "pytorch/traces.txt",
            "overhead/overhead.json", "overhead/overhead.log", "sanitizer/leak.sanitizer.txt",
            "versions/checks.tsv", "versions/sample.versions.txt", "versions/sample.info.txt",
            "versions/profiler_lend.log"]
    want += [f"{s}/{f}" for s in STEPS for f in ("status", "summary", "step.log")]
    for name in samples:
        want += [f"samples/{name}.{x}" for x in ("stdout", "verify.txt", "analyze.txt", "analyze.json", "info.txt")]
        want += [f"keep/samples/{name}.db", f"keep/samples/{name}.verify.txt"]
        check(any(re.fullmatch(rf"samples/{name}-\d+\.db", f) for f in files), f"the trace of sample {name}")
    for run in ("healthy-default", "oom_in_validation-tensors", "oom_in_validation-untraced"):
        want += [f"pytorch/{run}.{x}" for x in ("stats.json", "exit", "log")]
    want += ["keep/pytorch/oom_in_validation-default.db", "keep/pytorch/oom_in_validation-default.expected.json"]
    missing = [w for w in want if w not in files]
    check(not missing, f"archive holds {missing}")
    check(all(f.count("/") <= 3 for f in files), "no deeper than gpu-results/STEP/SUB/FILE")
    text = open(os.path.join(out, "summary.txt")).read()
    check(text == summary[summary.index("vramtrace GPU validation"):], "summary.txt is what the run printed last")
    check(text.startswith("vramtrace GPU validation: DRY RUN"), "summary says DRY RUN")
    for step in STEPS:
        check(re.search(rf"^{step} +(PASS|INFO) +\d+ s  \S", text, re.M) is not None, f"summary: {step} passed")
    check(re.search(rf"^samples +PASS .* {len(samples)} of {len(samples)} samples hold", text, re.M) is not None,
          "summary: every sample's known answer")
    check(re.search(r"^pytorch +PASS .* (\d+) of \1 runs pass", text, re.M) is not None, "summary: every PyTorch run")
    check(re.search(r"^versions +PASS .* trace 130001, layout 13\.0;", text, re.M) is not None
          and "the profiler and the trace both got their data" in text, "summary: versions and the profiler beside")
    check(re.search(r"NVML read by record: (ok|unavailable: [^;]+); device 0: other processes before launch ", text)
          is not None, "summary: record's NVML reading")
    check("skipped for the budget: none" in text and "overall: PASS" in text, "summary: nothing skipped, PASS")
    check("WARNING" not in text, "the folder was built from this tree")
    check(re.search(r"archive: gpu-results.tar.gz, \d+ KiB; trimmed to fit 16384 KiB: 0 file", text) is not None,
          "summary: archive size, nothing trimmed")
    status = {s: open(os.path.join(tmp, "unpacked", "gpu-results", s, "status")).read().strip()
              for s in STEPS if f"{s}/status" in files}
    check(set(status.values()) <= {"pass", "info"} and len(status) == len(STEPS), f"statuses {status}")



STEP = """#!/usr/bin/env bash
# a test step
# timeout: {timeout}
# min: 1
. "$VT_TREE/tests/gpu/steps/lib.sh"
{body}
"""


def test_driver(build, tmp):
    steps = os.path.join(tmp, "steps")
    os.makedirs(steps)
    bodies = {
        "10-hang": (3, 'vt_summary "about to hang"; sleep 60; vt_status pass'),
        "20-noresult": (20, 'echo "forgot vt_status"'),
        "30-big": (20, 'head -c 3000000 /dev/urandom > "$VT_STEP_DIR/big.db"; head -c 200000 /dev/urandom > '
                       '"$VT_STEP_DIR/small.db"; vt_row "one" 1 1; vt_summary "wrote a trace"; vt_status pass'),
        "40-fails": (20, 'vt_row "two" 2 3; vt_row "shown" 1 2 shown; vt_summary "a comparison differs"'),
    }
    for name, (timeout, body) in bodies.items():
        with open(os.path.join(steps, name + ".sh"), "w") as f:
            f.write(STEP.format(timeout=timeout, body=body))
    carry = os.path.join(tmp, "carry-driver")
    p = subprocess.run([sys.executable, os.path.join(HERE, "carry.py"), build, carry, "--dry-run"],
                       capture_output=True, text=True, timeout=600)
    if not check(p.returncode == 0, f"carry.py: {p.stderr}"):
        return
    out = os.path.join(tmp, "out-driver")
    p = run_driver(["--dry-run", "--carry", carry, "--out", out],
                   {"VT_GPU_STEPS": steps, "VT_GPU_ARCHIVE_LIMIT": str(1 << 20)}, timeout=600)
    text = open(os.path.join(out, "summary.txt")).read() if os.path.exists(os.path.join(out, "summary.txt")) else ""
    check(p.returncode == 1, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    check(re.search(r"^hang +TIMEOUT +\d+ s  about to hang$", text, re.M) is not None, f"hang timed out:\n{text}")
    check(re.search(r"^noresult +ERROR +\d+ s  the step ended with status 0 without a result$", text, re.M)
          is not None, "a step without a result")
    check(re.search(r"^big +PASS +\d+ s  wrote a trace$", text, re.M) is not None, "the next steps still run")
    check(re.search(r"^fails +FAIL +\d+ s  a comparison differs$", text, re.M) is not None, "a differing row fails")
    check(re.search(r"trimmed to fit 1024 KiB: 1 file\(s\) \(trimmed.txt\)", text) is not None, f"trimmed:\n{text}")
    files = unpack(out, os.path.join(tmp, "unpacked-driver"))
    check("big/big.db" not in files and "big/small.db" in files, "the largest trace dropped, the small one kept")
    trimmed = open(os.path.join(tmp, "unpacked-driver", "gpu-results", "trimmed.txt")).read()
    check(trimmed == "3000000 big/big.db\n", f"trimmed.txt: {trimmed!r}")
    rows = open(os.path.join(tmp, "unpacked-driver", "gpu-results", "fails", "checks.tsv")).read()
    check(rows == "two\t2\t3\tDIFFER\nshown\t1\t2\tdiffer (shown)\n", f"checks.tsv: {rows!r}")

    # A budget that only the first step fits (120 s, 20 kept for the archive; the last step
    # needs more than is left once the first took its 3 s, however long the start took): the
    # next ones are skipped and listed with their reason, the run fails, the archive is still
    # written.
    steps = os.path.join(tmp, "steps-budget")
    os.makedirs(steps)
    for name, (timeout, smin, body) in {"10-first": (10, 1, "sleep 3; vt_status pass"),
                                        "20-long": (10000, 10000, "vt_status pass"),
                                        "30-last": (98, 98, "vt_status pass")}.items():
        with open(os.path.join(steps, name + ".sh"), "w") as f:
            f.write(STEP.format(timeout=timeout, body=body).replace("# min: 1", f"# min: {smin}"))
    # ... from a folder built from other sources (its digest changed): the summary warns.
    manifest = os.path.join(carry, "manifest.txt")
    with open(manifest) as f:
        text = re.sub(r"^source digest: \w+$", "source digest: 0000", f.read(), flags=re.M)
    with open(manifest, "w") as f:
        f.write(text)
    out = os.path.join(tmp, "out-budget")
    p = run_driver(["--dry-run", "--carry", carry, "--out", out, "--budget", "120", "--only", "first,long,last"],
                   {"VT_GPU_STEPS": steps}, timeout=600)
    text = open(os.path.join(out, "summary.txt")).read() if os.path.exists(os.path.join(out, "summary.txt")) else ""
    check(p.returncode == 1, f"a run with skipped steps fails: exit {p.returncode}\n{p.stdout}")
    check(re.search(r"^first +PASS", text, re.M) is not None, f"the first step ran:\n{text}")
    for step, need in (("long", 10000), ("last", 98)):
        check(re.search(rf"^{step} +SKIPPED +- s  budget: -?\d+ s left, needs {need}$", text, re.M) is not None,
              f"{step} skipped with its reason")
    check("skipped for the budget: long last" in text and "overall: FAIL" in text, "skipped steps listed; FAIL")
    check(os.path.exists(os.path.join(out, "gpu-results.tar.gz")), "the archive is written all the same")
    check("WARNING: the carried folder was built from other sources than this tree's\n" in text,
          f"a stale folder is named:\n{text}")


GROUPS = {"rehearsal": test_rehearsal, "driver": test_driver}


def main(argv):
    if len(argv) < 2 or any(g not in GROUPS for g in argv[2:]):
        sys.stderr.write(f"usage: device_run_test.py BUILD [{'|'.join(GROUPS)}]...\n")
        return 2
    build = os.path.abspath(argv[1])
    if not os.path.isdir(os.path.join(build, "samples", "cuda")):
        print(f"skip: no CUDA samples in {build}")
        return 77
    with tempfile.TemporaryDirectory(prefix="vt-device-run-test-") as tmp:
        for g in argv[2:] or list(GROUPS):
            GROUPS[g](build, tmp)
    return finish("device_run_test")


if __name__ == "__main__":
    sys.exit(main(sys.argv))

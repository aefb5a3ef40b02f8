#!/usr/bin/env python3
"""Keep traces of a GPU run in tests/data/gpu, each with its ground truth and the analyzer's verdicts.

    promote.py RESULTS [DEST] [--force]

RESULTS is a GPU run's gpu-results.tar.gz (tests/gpu/device-run.sh) or the folder it
unpacks to; DEST defaults to tests/data/gpu. From the run's keep/ folder (traces of at most
2 MB) it takes, where present:

    sample-leak, sample-phases, sample-oom   CUDA samples: a leak, NVTX phases, an OOM
    sample-threads, sample-graphs            a helper thread killed with the job; CUDA graphs
    pytorch-healthy-default                  a PyTorch training run with NVTX (and
                                             PyTorch's history snapshot beside it)
    pytorch-oom_in_validation-default        the OOM scenario
    pytorch-loss_no_item-tensors             a leak of kept loss tensors (--tensors)

and writes DEST/NAME.db (self-contained, as kept) and DEST/NAME.expected.json: the findings
`vramtrace analyze` reported on the GPU machine (kind, severity, bytes, count, title, site),
the options it needs, the ground truth the run compared it with (the sample's known answer
line by line, or the PyTorch checker's rows), forbid_from "medium" for the healthy run,
and the source (GPU, driver, CUPTI, torch, date, commit). DEST/README.md lists them with
their provenance. tests/gpu/data_verdicts.py then holds the analyzer to those verdicts.
A trace a DRY RUN made is refused (stand-ins are no ground truth) unless --force.
Exit status: 0, 1 nothing to keep or a dry run, 2 usage.
"""
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile

PICKS = (
    ("sample-leak", "samples/leak", "the leak sample: 8 device buffers never freed"),
    ("sample-phases", "samples/phases", "the phases sample: NVTX training and validation, a validation spike"),
    ("sample-oom", "samples/oom", "the oom sample: a request above the device's memory, then normal work"),
    ("sample-threads", "samples/threads", "the threads sample: a pin-memory-like helper thread; the job "
                                          "kills itself (SIGKILL)"),
    ("sample-graphs", "samples/graphs", "the graphs sample: a captured CUDA graph launched 3 times"),
    ("pytorch-healthy-default", "pytorch/healthy-default", "samples/pytorch/healthy.py: CNN training and "
                                                          "validation with NVTX ranges, default mode"),
    ("pytorch-oom_in_validation-default", "pytorch/oom_in_validation-default",
     "samples/pytorch/oom_in_validation.py: validation on the whole set as one batch, OOM caught"),
    ("pytorch-loss_no_item-tensors", "pytorch/loss_no_item-tensors",
     "samples/pytorch/loss_no_item.py under --tensors: a loss tensor kept per step"),
)
KEYS = ("kind", "severity", "bytes", "count", "title", "site")


def source_of(results):
    """One line on where the run happened, from its environment step and manifest."""
    def read(path):
        try:
            with open(os.path.join(results, path)) as f:
                return f.read()
        except OSError:
            return ""
    summary, manifest = read("env/summary"), read("manifest.txt")
    started = re.search(r"^started: (.*?),", manifest, re.M)
    commit = re.search(r"^commit: (.*)$", manifest, re.M)
    first = manifest.splitlines()[0] if manifest else ""
    return {"environment": summary.strip().splitlines(), "started": started.group(1) if started else None,
            "commit": commit.group(1) if commit else None, "dry_run": "DRY RUN" in first}


def kept(base, suffix):
    """The JSON file base+suffix of a kept trace base.db, parsed; None when either is missing."""
    if not os.path.exists(base + ".db") or not os.path.exists(base + suffix):
        return None
    with open(base + suffix) as f:
        return json.load(f)


def findings_kept(findings):
    """The fields of each finding that expected.json keeps."""
    return [{k: x.get(k) for k in KEYS} for x in findings]


def sample_case(keep, name):
    """(expected dict, trace) of a kept sample, or None."""
    base = os.path.join(keep, "samples", name)
    report = kept(base, ".analyze.json")
    if report is None:
        return None
    truth = []
    if os.path.exists(base + ".verify.txt"):
        with open(base + ".verify.txt") as f:
            truth = [ln.rstrip("\n") for ln in f if ln.startswith(("ok ", "FAIL "))]
    return {"analyze_args": [], "findings": findings_kept(report.get("findings", [])),
            "ground_truth": {"known answer (tests/gpu_verify.c), line by line": truth}}, base + ".db"


def pytorch_case(keep, run):
    """(expected dict, trace) of a kept PyTorch run, or None."""
    base = os.path.join(keep, "pytorch", run)
    run_kept = kept(base, ".expected.json")
    if run_kept is None:
        return None
    exp = {"analyze_args": run_kept.get("analyze_args", []),
           "findings": findings_kept(run_kept.get("findings", [])),
           "ground_truth": {"run": f"{run_kept.get('script')} {' '.join(run_kept.get('args', []))} "
                                   f"({run_kept.get('mode')} mode)",
                            "checks (what, trace, PyTorch, verdict)": run_kept.get("ground_truth")}}
    if run.startswith("healthy"):
        exp["forbid_from"] = "medium"
    return exp, base + ".db"


def copy_snapshot(results, run, dest):
    """Copy the kept history snapshot of PyTorch run `run` (vramtrace-HOST-PID.snapshot.pickle,
    PID from the run's stats) into dest, where analyze finds it beside the trace."""
    try:
        with open(os.path.join(results, "pytorch", run + ".stats.json")) as f:
            pid = json.load(f)["pid"]
    except (OSError, ValueError, KeyError):
        return
    folder = os.path.join(results, "keep", "pytorch")
    for snap in os.listdir(folder):
        if snap.startswith("vramtrace-") and snap.endswith(f"-{pid}.snapshot.pickle"):
            shutil.copyfile(os.path.join(folder, snap), os.path.join(dest, snap))


def main(argv):
    args = [a for a in argv[1:] if a != "--force"]
    if len(args) not in (1, 2):
        sys.stderr.write("usage: promote.py RESULTS [DEST] [--force]\n")
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    dest = args[1] if len(args) == 2 else os.path.join(here, "..", "data", "gpu")
    with tempfile.TemporaryDirectory(prefix="vt-promote-") as tmp:
        results = args[0]
        if os.path.isfile(results):
            with tarfile.open(results) as tar:
                tar.extractall(tmp)
            results = os.path.join(tmp, "gpu-results")
        source = source_of(results)
        if source["dry_run"] and "--force" not in argv:
            sys.stderr.write("promote: this archive is a DRY RUN (stand-ins, no GPU): nothing kept\n")
            return 1
        keep = os.path.join(results, "keep")
        os.makedirs(dest, exist_ok=True)
        kept, lines = [], []
        for name, where, what in PICKS:
            kind, item = where.split("/")
            case = sample_case(keep, item) if kind == "samples" else pytorch_case(keep, item)
            if not case:
                print(f"promote: {name}: not in the run's keep/ (not run, failed, or over 2 MB)")
                continue
            expected, trace = case
            expected["source"] = dict(source, what=what)
            shutil.copyfile(trace, os.path.join(dest, name + ".db"))
            with open(os.path.join(dest, name + ".expected.json"), "w") as f:
                json.dump(expected, f, indent=1, sort_keys=True)
                f.write("\n")
            if kind == "pytorch":  # PyTorch's snapshot of the run, under the name analyze looks for
                copy_snapshot(results, item, dest)
            kept.append(name)
            found = ", ".join(f"{x['severity']} {x['kind']}" for x in expected["findings"]) or "no finding"
            lines.append(f"| `{name}.db` | {what} | {found} |")
            print(f"promote: {name}: kept ({found})")
        if not kept:
            sys.stderr.write("promote: nothing to keep\n")
            return 1
        env = "; ".join(source["environment"]) or "environment not recorded"
        with open(os.path.join(dest, "README.md"), "w") as f:
            f.write("# Traces recorded on a real GPU\n\n"
                    f"Recorded by `tests/gpu/device-run.sh` on {source['started'] or 'an unknown date'} "
                    f"(commit {source['commit'] or 'unknown'}): {env}.\n\n"
                    "Each `NAME.db` is a trace as the tracer wrote it there; `NAME.expected.json` holds the "
                    "findings `vramtrace analyze` reported on it then, the options it needs and the ground truth "
                    "the run compared it with. `tests/gpu/data_verdicts.py` (ctest `gpu_data_verdicts`) "
                    "holds the analyzer to those findings. Put here by `tests/gpu/promote.py`; see "
                    "docs/validation.md.\n\n| trace | what | findings when kept |\n|---|---|---|\n"
                    + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

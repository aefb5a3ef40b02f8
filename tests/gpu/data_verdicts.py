#!/usr/bin/env python3
"""The analyzer's verdicts on the traces recorded on real GPUs (tests/data/gpu), held to what they were.

    data_verdicts.py VRAMTRACE [DIR]

DIR (default tests/data/gpu) holds, per trace, NAME.db and NAME.expected.json, as
tests/gpu/promote.py puts them there from a GPU run's archive:

    {"analyze_args": [...],             options `vramtrace analyze` needs for this trace
     "findings": [{"kind", "severity", "bytes", "count", ...}, ...],
                                        what the analyzer reported when the trace was kept
     "forbid_from": "medium",           optional: no other finding at or above this severity
     "ground_truth": ..., "source": ...} what the run was compared with, and where it ran

For each trace it runs `vramtrace analyze --no-write --format json` and checks that every
expected finding is still reported (same kind and severity, and the same bytes and count
where they were known), and, with forbid_from, that no other finding reaches that severity.
A verdict that changes on purpose is updated in NAME.expected.json in the same change.
Exit status: 0 every trace holds, 1 one does not, 77 DIR holds no trace (skipped).
"""
import glob
import json
import os
import subprocess
import sys

SEVERITIES = ("info", "low", "medium", "high")


def findings_of(vramtrace, trace, args):
    """The findings `vramtrace analyze` reports on trace, or raise RuntimeError."""
    p = subprocess.run([vramtrace, "analyze", "--no-write", "--format", "json", *args, trace],
                       capture_output=True, text=True, timeout=600)
    if p.returncode not in (0, 1):  # 1: a finding at or above --fail-on, if one was given
        raise RuntimeError(f"analyze exited {p.returncode}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout).get("findings", [])


def check_trace(vramtrace, trace, expected):
    """Problems with the analyzer's verdicts on one trace (empty when it holds)."""
    got = findings_of(vramtrace, trace, expected.get("analyze_args", []))
    problems, used = [], set()
    for want in expected.get("findings", []):
        match = None
        for i, f in enumerate(got):
            if i in used or f.get("kind") != want.get("kind") or f.get("severity") != want.get("severity"):
                continue
            if all(want.get(k) is None or f.get(k) == want.get(k) for k in ("bytes", "count")):
                match = i
                break
        if match is None:
            near = [f"{f.get('severity')} {f.get('kind')} ({f.get('bytes')} B, {f.get('count')})"
                    for f in got if f.get("kind") == want.get("kind")]
            problems.append(f"expected {want.get('severity')} {want.get('kind')} ({want.get('bytes')} B, "
                            f"{want.get('count')}): not reported; that kind now: {', '.join(near) or 'none'}")
        else:
            used.add(match)
    floor = expected.get("forbid_from")
    if floor in SEVERITIES:
        for i, f in enumerate(got):
            if i not in used and f.get("severity") in SEVERITIES and \
                    SEVERITIES.index(f["severity"]) >= SEVERITIES.index(floor):
                problems.append(f"new finding {f.get('severity')} {f.get('kind')}: {f.get('title')}")
    return problems


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: data_verdicts.py VRAMTRACE [DIR]\n")
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    folder = argv[2] if len(argv) == 3 else os.path.join(here, "..", "data", "gpu")
    cases = sorted(glob.glob(os.path.join(folder, "*.expected.json")))
    if not cases:
        print(f"skipped: no trace recorded on a GPU in {os.path.normpath(folder)} yet (docs/validation.md)")
        return 77
    failed = 0
    for case in cases:
        trace = case[: -len(".expected.json")] + ".db"
        name = os.path.basename(trace)
        try:
            with open(case) as f:
                expected = json.load(f)
            problems = check_trace(argv[1], trace, expected) if os.path.exists(trace) else [f"{trace} is missing"]
        except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as e:
            problems = [str(e)]
        print(f"{name}: {'FAIL' if problems else 'ok'}")
        for p in problems:
            print(f"  {p}")
        failed += bool(problems)
    print(f"{len(cases) - failed} of {len(cases)} GPU traces hold their verdicts")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

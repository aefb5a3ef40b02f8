#!/usr/bin/env python3
"""Analyze the shipped example trace and check the exact findings (kind, severity, site) and what was live at its OOM."""
import json
import subprocess
import sys

EXPECTED = sorted([
    ("validation_spike", "high", "phase 'validation' (nvtx)"),
    ("validation_spike", "high", "train.py:88 in validate"),
    ("oom", "high", "train.py:88 in validate"),
    ("transfer", "high", "host-device copies"),
    ("leak", "high", "train.py:57 in train_one_epoch"),
    ("leak", "medium", "train.py:57 in train_one_epoch"),
])


def main():
    vramtrace, trace = sys.argv[1], sys.argv[2]
    run = subprocess.run([vramtrace, "analyze", "--no-write", "--format", "json", trace],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        print(f"analyze exited {run.returncode}: {run.stderr}")
        return 1
    report = json.loads(run.stdout)
    got = sorted((f["kind"], f["severity"], f["site"]) for f in report["findings"])
    if got != EXPECTED:
        print("findings differ from the expected ones")
        print("expected:", *EXPECTED, sep="\n  ")
        print("got:", *got, sep="\n  ")
        return 1
    oom = [f for f in report["findings"] if f["kind"] == "oom"][0]
    if "real demand" not in oom["title"] or oom["bytes"] != 32 << 30:
        print("OOM verdict or size wrong:", oom["title"], oom["bytes"])
        return 1
    # what was live at the OOM, by call site and memory kind, largest group first
    groups = [(g["count"], g["bytes"], g["site"], g["mem_kind"], g["largest"]["bytes"])
              for g in report["traces"][0]["ooms"][0]["live_groups"]]
    expected_groups = [
        (48, 48 << 30, "train.py:88 in validate", 3, 1 << 30),
        (1, 4 << 30, "train.py:24 in main", 3, 4 << 30),
        (1, 2 << 30, "train.py:20 in main", 3, 2 << 30),
        (6, 96 << 20, "train.py:57 in train_one_epoch", 3, 16 << 20),
    ]
    if groups != expected_groups:
        print("OOM live groups differ from the expected ones")
        print("expected:", *expected_groups, sep="\n  ")
        print("got:", *groups, sep="\n  ")
        return 1
    if "Largest live: 48 allocations, 48.0 GiB from train.py:88 in validate (device), largest 1.00 GiB; " \
       "1 allocation, 4.00 GiB from train.py:24 in main (device);" not in oom["evidence"]:
        print("OOM evidence does not group what was live by site:", oom["evidence"])
        return 1
    print(f"{len(got)} findings as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

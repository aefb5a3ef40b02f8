#!/usr/bin/env python3
"""The Perfetto export's "GPU N memory by category" tracks against analyze's breakdown.

usage: perfetto_breakdown_test.py VRAMTRACE TRACE... (traces: .db, or files `vramtrace import` reads)

For each trace, `vramtrace analyze --format json` gives each device's peak time and its breakdown
(what the HTML report's bar draws); `vramtrace export --perfetto` gives the counter tracks. At the
peak time every category's counter (its last value at or before that time) must equal the
breakdown's bytes for that category, and the categories the breakdown leaves out must stand at 0.
With VT_REAL_DATA set, real files recorded by others are imported and checked the same way
(skipped, with the reason, when it is not set or they are absent).
"""
import json
import os
import subprocess
import sys
import tempfile

# The breakdown's category keys (analyze --format json) and their names for people (the series' names).
NAMES = {
    "parameters": "parameters", "gradients": "gradients", "optimizer_state": "optimizer state",
    "activations": "activations kept for backward", "activations_or_temporaries": "activations or temporaries",
    "temporaries": "temporaries and workspaces", "other_state": "other memory kept across steps",
    "allocator_cache": "allocator cache (reserved, not allocated)", "nccl": "NCCL buffers",
    "cublas_workspace": "cuBLAS/cuBLASLt workspaces", "cudnn_workspace": "cuDNN workspaces",
    "cuda_graph_pools": "CUDA graph pools", "library": "other library", "cuda_context": "CUDA context and driver",
    "other_processes": "other processes",
    "cuda_context_or_other_processes": "CUDA context, driver and other processes", "before_trace": "allocated before the trace", "unknown": "unknown",
}
REAL = ["cs336_niu_fwd_bwd_200.pickle", "hta_df_index_resolver_v100_ddp_memory.json.gz"]


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr))
    return p.stdout


def check(vt, trace, tmp):
    """Compare every device's breakdown with the category counters at its peak; returns how many devices."""
    rep = json.loads(run([vt, "analyze", "--format", "json", trace]))
    out = os.path.join(tmp, "out.json")
    run([vt, "export", "--perfetto", out, trace])
    doc = json.load(open(out, encoding="utf-8"))
    origin = doc["otherData"]["origin_ns"]
    n = 0
    for t in rep["traces"]:
        for dev in t["devices"]:
            if not dev["breakdown"]:
                continue
            peak_us = (dev.get("breakdown_ts", dev["peak_ts"]) - origin) / 1000.0  # the moment the breakdown sums
            track = "GPU %d memory by category" % dev["id"]
            at = {}  # series -> (ts, value): the last value at or before the peak
            for e in doc["traceEvents"]:
                if e["ph"] != "C" or e["name"] != track or e["ts"] > peak_us + 5e-4:
                    continue
                for k, v in e["args"].items():
                    at[k] = v
            want = {}
            for p in dev["breakdown"]:
                name = NAMES[p["category"]] + (" (%s)" % p["owner"] if p["owner"] else "")
                want[name] = want.get(name, 0) + p["bytes"]
            got = {k: v for k, v in at.items() if v != 0}
            if not at:
                sys.exit("FAIL: %s: no %r track" % (trace, track))
            if got != want:
                sys.exit("FAIL: %s device %d at its peak (%.3f us):\n  breakdown %s\n  perfetto  %s"
                         % (trace, dev["id"], peak_us, sorted(want.items()), sorted(got.items())))
            print("ok %s device %d: %d categories, %d bytes at the peak"
                  % (os.path.basename(trace), dev["id"], len(want), sum(want.values())))
            n += 1
    return n


def main():
    vt, traces = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        n = sum(check(vt, tr, tmp) for tr in traces)
        if n == 0:
            sys.exit("FAIL: no device with a breakdown in %s" % traces)
        real = os.environ.get("VT_REAL_DATA", "")
        have = [f for f in REAL if real and os.path.exists(os.path.join(real, f))]
        if not have:
            print("SKIP real files: %s" % ("VT_REAL_DATA is not set" if not real else "none of %s in %s" % (REAL, real)))
            return
        for f in have:
            db = os.path.join(tmp, f.split(".")[0] + ".db")
            run([vt, "import", "-q", "-o", db, os.path.join(real, f)])
            if check(vt, db, tmp) == 0:
                sys.exit("FAIL: %s: no device with a breakdown" % f)


if __name__ == "__main__":
    main()

"""A PyTorch job that runs its own torch.profiler while vramtrace records it (tests/gpu/profiler_lend_check.sh).

    python profiler_lend_job.py OUTDIR

GPU work (matrix products, and a new allocation) before, between and after three profiler
windows: one `with torch.profiler.profile()`, then a scheduled profile of two cycles. Writes
OUTDIR/kineto-N.json (each window's chrome trace) and OUTDIR/job.json (pid, versions, and the
CLOCK_REALTIME ns at which each phase began and ended, the clock the trace's times are on).
"""
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

out = sys.argv[1]
x = torch.randn(2048, 2048, device="cuda")
keep = []
times = {}


def work(tag, mib):
    """Matrix products and one fresh allocation of mib MiB (a new cudaMalloc segment)."""
    times[tag + ".from"] = time.time_ns()
    for _ in range(10):
        y = x @ x
    keep.append(torch.empty(mib << 20, dtype=torch.uint8, device="cuda"))
    del y
    torch.cuda.synchronize()
    times[tag + ".until"] = time.time_ns()


work("before", 64)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    work("window1", 8)
prof.export_chrome_trace(os.path.join(out, "kineto-1.json"))
work("between", 96)

n = [1]


def ready(p):
    n[0] += 1
    p.export_chrome_trace(os.path.join(out, "kineto-%d.json" % n[0]))


with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
             schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready) as prof:
    for step in range(8):
        work("step%d" % step, 2)
        prof.step()
work("after", 128)
with open(os.path.join(out, "job.json"), "w") as f:
    json.dump({"pid": os.getpid(), "torch": torch.__version__, "cuda": torch.version.cuda,
               "windows": n[0], "times": times}, f)

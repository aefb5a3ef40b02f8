#!/usr/bin/env python3
"""Rehearsal stand-in of bench/overhead/workload.py: no GPU, no PyTorch.

Takes the same options, sleeps a few milliseconds per "iteration" and prints the RESULT
line run_overhead.py reads. Under an injection library it prints the line that library
prints when it attaches (the floor client's at exit, the tracer's at start), which the
real ones print only once CUDA starts: the driver's check that a tracer was attached is
rehearsed, not the tracer.
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--amp", action="store_true")
    args = ap.parse_args()
    lib = os.path.basename(os.environ.get("CUDA_INJECTION64_PATH", ""))
    if lib == "libvramtrace.so":
        sys.stderr.write("vramtrace: tracing process %d (rehearsal stand-in)\n" % os.getpid())
    t0 = time.perf_counter()
    for _ in range(args.iters):
        time.sleep(0.002)
    timed = time.perf_counter() - t0
    print("RESULT " + json.dumps({"model": args.model, "batch": 128, "warmup": args.warmup, "iters": args.iters,
                                  "timed_s": timed, "iter_ms": 1e3 * timed / args.iters, "torch": "stand-in",
                                  "device": "no GPU (rehearsal)"}), flush=True)
    if lib.startswith("libvt_cupti_floor"):
        sys.stderr.write("cupti_floor: pid %d: 0 buffers, 0 bytes, 0 dropped (rehearsal stand-in)\n" % os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main())

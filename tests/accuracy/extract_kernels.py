#!/usr/bin/env python3
"""Extract the kernel sequence of one real training step from torch.profiler traces into kernels.tsv.

The accuracy suite's generator (tests/accuracy/accgen.c) builds its iterations from these
sequences, so its kernel names, their order and their relative durations are those of real
jobs. Each kernel gets the role it had in the step, from the CPU operator that launched it
(joined on the correlation id): F forward (the main thread outside the optimizer), B backward
(the autograd engine's thread), O optimizer step, Z zero_grad, C collective communication
(NCCL). The Nsight Systems export contributes its kernels in both the mangled form (what CUPTI,
hence the tracer, records) and the demangled one.

    python3 tests/accuracy/extract_kernels.py ../shared/real-data > tests/accuracy/kernels.tsv

Output: '#' comment lines (provenance), then 'N<TAB>id<TAB>name' lines (distinct names), then
'S<TAB>step<TAB>role<TAB>dur_ns<TAB>grid_x<TAB>block_x<TAB>name id' lines, one per kernel
launch in start order, and 'P<TAB>demangled id<TAB>mangled id' pairs.
"""
import bisect
import collections
import gzip
import json
import os
import sqlite3
import sys

SOURCES = [
    # (step tag, file, profiler step, description)
    ("resnet50", "kineto_tbplugin_resnet50_v100_memory_noaddr.pt.trace.json.gz", "ProfilerStep#7",
     "ResNet-50 training step on a V100, SGD, cuDNN convolutions (pytorch/kineto @ be239c04, "
     "tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz, BSD-3-Clause)"),
    ("ddp", "hta_df_index_resolver_v100_ddp_memory.json.gz", "ProfilerStep#4",
     "DistributedDataParallel training step on a V100, SGD, NCCL all-reduce "
     "(facebookresearch/HolisticTraceAnalysis @ f4d0062c, tests/data/df_index_resolver/df_index_resolver.json.gz, MIT)"),
]
NSYS = ("nsys", "fuser_h200_pytorch_xentropy_benchmark_nsys2025.sqlite",
        "cross-entropy forward and backward on an H200, nvFuser and nvjet kernels "
        "(NVIDIA/Fuser @ ee4fcf30, report1.sqlite, BSD-3-Clause-style)")


def kineto_step(path, step):
    """[(role, dur_ns, grid_x, block_x, name)] of the kernels launched inside ProfilerStep `step`."""
    ev = json.load(gzip.open(path))["traceEvents"]
    ops = collections.defaultdict(list)
    runtime = {}
    for e in ev:
        cat = e.get("cat")
        if cat in ("cpu_op", "user_annotation", "Operator") and e.get("ph") == "X":
            ops[str(e["tid"])].append(e)
        elif cat in ("cuda_runtime", "Runtime") and "correlation" in e.get("args", {}):
            runtime[e["args"]["correlation"]] = e
    main_tid = next(str(e["tid"]) for e in ev if e.get("name") == step)
    window = next(e for e in ev if e.get("name") == step)
    t0, t1 = window["ts"], window["ts"] + window["dur"]
    for tid in ops:
        ops[tid].sort(key=lambda e: e["ts"])
    starts = {tid: [e["ts"] for e in v] for tid, v in ops.items()}

    def enclosing(tid, ts):
        """Names of the operators on thread tid open at time ts (outermost first)."""
        v, s = ops.get(tid, []), starts.get(tid, [])
        i = bisect.bisect_right(s, ts)
        return [e["name"] for e in v[max(0, i - 400):i] if e["ts"] <= ts <= e["ts"] + e["dur"]]

    out = []
    for e in sorted((e for e in ev if e.get("cat") in ("kernel", "Kernel")), key=lambda e: e["ts"]):
        r = runtime.get(e["args"].get("correlation"))
        if r is None or not t0 <= r["ts"] <= t1:
            continue  # launched outside the step (by its CPU-side launch time)
        tid = str(r["tid"])
        names = enclosing(tid, r["ts"])
        if e["name"].startswith("nccl"):
            role = "C"
        elif any(n.startswith("Optimizer.step") for n in names):
            role = "O"
        elif any(n.startswith("Optimizer.zero_grad") for n in names):
            role = "Z"
        elif tid != main_tid:
            role = "B"
        else:
            role = "F"
        a = e["args"]
        out.append((role, int(round(e["dur"] * 1000)), a.get("grid", [1])[0], a.get("block", [1])[0], e["name"]))
    return out


def nsys_kernels(path):
    """[(role, dur_ns, grid_x, block_x, demangled, mangled)] of every kernel in start order."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT k.end - k.start, k.gridX, k.blockX, d.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
        " JOIN StringIds d ON d.id = k.demangledName LEFT JOIN StringIds m ON m.id = k.mangledName"
        " ORDER BY k.start").fetchall()
    return [("B" if "backward" in d else "F", dur, gx, bx, d, m or d) for dur, gx, bx, d, m in rows]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/real-data"
    ids = {}

    def name_id(n):
        if n not in ids:
            ids[n] = len(ids) + 1
        return ids[n]

    steps = []
    for tag, f, step, desc in SOURCES:
        steps.append((tag, desc, kineto_step(os.path.join(root, f), step)))
    nk = nsys_kernels(os.path.join(root, NSYS[1]))
    print("# Kernel sequences of real training steps, for the accuracy suite's generator.")
    print("# Made by tests/accuracy/extract_kernels.py from the files in ../shared/real-data (recorded by")
    print("# other people on real GPUs, copied unchanged from public repositories):")
    for tag, desc, seq in steps:
        print(f"#   step '{tag}' ({len(seq)} kernels): {desc}")
    print(f"#   step '{NSYS[0]}' ({len(nk)} kernels, demangled) and 'nsys_mangled' (the same, mangled): {NSYS[2]}")
    print("# Roles: F forward, B backward, O optimizer step, Z zero_grad, C collective (NCCL).")
    print("# Format: N id name | S step role dur_ns grid_x block_x name_id | P demangled_id mangled_id")
    rows = []
    for tag, desc, seq in steps:
        for role, dur, gx, bx, n in seq:
            rows.append((tag, role, dur, gx, bx, name_id(n)))
    pairs = set()
    for role, dur, gx, bx, dn, mn in nk:
        rows.append((NSYS[0], role, dur, gx, bx, name_id(dn)))
    for role, dur, gx, bx, dn, mn in nk:
        rows.append(("nsys_mangled", role, dur, gx, bx, name_id(mn)))
        if dn != mn:
            pairs.add((ids[dn], ids[mn]))
    for n, i in sorted(ids.items(), key=lambda kv: kv[1]):
        print(f"N\t{i}\t{n}")
    for r in rows:
        print("S\t" + "\t".join(str(x) for x in r))
    for a, b in sorted(pairs):
        print(f"P\t{a}\t{b}")


if __name__ == "__main__":
    main()

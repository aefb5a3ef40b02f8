#!/usr/bin/env python3
"""Test double of the `vramtrace` command: runs pytorch-run.sh end to end without a GPU.

`record` checks the command line pytorch-run.sh built (mode flag, output pattern, the
scenario script and its arguments, VRAMTRACE_STATS_OUT), runs the job itself (the scenario
on the shape-only stand-in of PyTorch, tests/gpu/fake_torch, which the caller puts on
PYTHONPATH; with --tensors PYTORCH_ALLOC_CONF selects cudaMallocAsync, as the real command
does), and then writes what the tracer would have left: a trace that holds what the job's
stats say PyTorch did (its segments, or its cudaMallocAsync tensors, its NVTX ranges, its
failed request), a DataLoader worker's empty trace, and the findings its analysis would
give (a side file). `analyze` turns those into the JSON report (recording its own
arguments in it). FAKE_VT_BREAK=NAME-MODE drops that run's findings, so the harness must
fail. Exit status 9 means the command line was not the expected one; a job that fails
returns its own status.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def bad(msg):
    sys.stderr.write(f"fake vramtrace: {msg}\n")
    sys.exit(9)


def trace_of(t, pid, tensors, stats):
    """The trace the tracer would write for a job whose stats are `stats` (see pytorch_check's
    ground truth): default mode, segment.all.allocated caching-allocator segments, each
    reserved_bytes.all.peak / count bytes, segment.all.freed of them freed last, and one
    cuBLAS cudaMalloc; --tensors, allocation.all.allocated cudaMallocAsync tensors of
    allocated_bytes.all.peak bytes, each freed before the next; both, one push/pop range per
    range the job pushed, and the failed request of an OOM the job caught."""
    import pytorch_check as pc
    ms = stats.get("memory_stats", {})
    trace = t.Trace(pid, tensors)
    for i in range(stats.get("nvtx_ranges") or 0):
        trace.nvtx(f"iter {i}")
    if tensors:
        size = ms.get("allocated_bytes.all.peak") or 512
        for i in range(ms.get("allocation.all.allocated") or 0):
            trace.event(pc.MEMOP_ALLOC, 0x50000000 + i * size, size, pc.API_CUDA_MALLOC_ASYNC, is_async=1,
                        stack=trace.stack_c10, pool=ms.get("reserved_bytes.all.peak"))
            trace.free(0x50000000 + i * size, size, api=4, is_async=1)
    else:
        n = ms.get("segment.all.allocated") or 0
        size = (ms.get("reserved_bytes.all.peak") or 0) // max(n, 1)
        for i in range(n):
            trace.malloc(0x10000000 + i * size, size)
        trace.malloc(0x7f000000, 4 * t.MIB, stack=trace.stack_cublas)
        for i in range(ms.get("segment.all.freed") or 0):
            trace.free(0x10000000 + (n - 1 - i) * size, size)
    request = (stats.get("result") or {}).get("expected_request_bytes")
    if request:
        trace.oom(request)
    return trace


def record(argv):
    import pytorch_check as pc
    import pytorch_check_test as t
    tensors = argv[0] == "--tensors"
    if tensors:
        argv = argv[1:]
    if argv[0] != "-o" or argv[2] != "--":
        bad(f"record options {argv}")
    pattern, cmd = argv[1], argv[3:]
    m = re.match(r"^(.*)/([a-z_]+)-(default|tensors)-%p\.db$", pattern)
    if not m or (m.group(3) == "tensors") != tensors:
        bad(f"output pattern {pattern}")
    name, mode = m.group(2), m.group(3)
    sc = next((s for s in pc.SCENARIOS if s.name == name), None)
    if not sc or cmd[1] != os.path.join(pc.SCRIPT_DIR, sc.script) or tuple(cmd[2:]) != sc.args:
        bad(f"command {cmd} for {name}")
    stats_out = os.environ.get("VRAMTRACE_STATS_OUT")
    if stats_out != os.path.join(m.group(1), f"{name}-{mode}.stats.json"):
        bad(f"VRAMTRACE_STATS_OUT {stats_out}")
    env = dict(os.environ)
    if tensors:
        env["PYTORCH_ALLOC_CONF"] = env["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
    job = subprocess.run(cmd, env=env)
    if job.returncode != 0:
        return job.returncode
    with open(stats_out) as f:
        stats = json.load(f)
    pid = stats["pid"]
    trace = trace_of(t, pid, tensors, stats)
    path = pattern.replace("%p", str(pid))
    trace.save(path)
    t.Trace(pid + 100000, tensors).save(pattern.replace("%p", str(pid + 100000)))
    markers = pc.read_markers(os.path.join(pc.SCRIPT_DIR, sc.script))
    findings = [] if os.environ.get("FAKE_VT_BREAK") == f"{name}-{mode}" else [
        {"pid": str(pid), "kind": k, "severity": "medium", "title": f"planted {k}",
         "site": f"/repo/{pc.SCRIPT_DIR}/{sc.script}:{markers[k][0]} in f"} for k in sc.expect[mode].require]
    with open(path + ".findings.json", "w") as f:
        json.dump(findings, f)
    print(f"ran {' '.join(cmd)}")
    return 0


def analyze(argv):
    out, fmt, traces, opts = None, "text", [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "--format", "--min-bytes"):
            if a == "-o":
                out = argv[i + 1]
            elif a == "--format":
                fmt = argv[i + 1]
            else:
                opts += [a, argv[i + 1]]
            i += 2
            continue
        if a == "--no-write":
            opts.append(a)
        else:
            traces.append(a)
        i += 1
    findings = []
    for p in traces:
        if os.path.exists(p + ".findings.json"):
            findings += json.load(open(p + ".findings.json"))
    doc = {"vramtrace_report_version": 1, "argv": opts, "traces": traces, "findings": findings}
    text = json.dumps(doc) if fmt == "json" else f"{len(findings)} findings\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv):
    if argv[1:] == ["--version"]:
        print("vramtrace (test double)")
        return 0
    if argv[1] == "record":
        return record(argv[2:])
    if argv[1] == "analyze":
        return analyze(argv[2:])
    bad(f"subcommand {argv[1:]}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))

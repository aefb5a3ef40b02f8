#!/usr/bin/env python3
"""Tests of pytorch_check.py's logic on generated traces, stats and reports (no GPU, no PyTorch).

The traces are real vramtrace schema (the DDL is read from include/vramtrace/schema.h) with
the events a PyTorch run leaves: caching-allocator segments (first native frame in
libc10_cuda), a cuBLAS cudaMalloc, the runtime's own allocation, cudaMallocAsync tensors,
failed requests. Each case asserts the checker's exact verdicts, then breaks one fact and
asserts the exact failure. Last, tests/gpu/pytorch-run.sh itself runs end to end with a test
double of `vramtrace` (pytorch_fake_vramtrace.py), and every scenario script runs on a
shape-only stand-in of PyTorch (fake_torch/). Usage: pytorch_check_test.py [logic|analyzer|harness|scenarios]...
"""
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import pytorch_check as pc  # noqa: E402
from testlib import check, finish  # noqa: E402

MIB = 1 << 20


def schema_ddl():
    """A version-4 trace's DDL from include/vramtrace/schema.h, expanded by the C preprocessor, time base 0:
    VT_SCHEMA_DDL (today's tables) with the compacted tables' parts replaced by version 4's plain tables
    (VT_SCHEMA_V4_COMPACTED_DDL; version 5 makes their views at run time). Every reader reads version 4."""
    src = '#include "vramtrace/schema.h"\nVT_SCHEMA_DDL\nVT_SCHEMA_V4_COMPACTED_DDL\n'
    out = subprocess.run([os.environ.get("CC", "cc"), "-E", "-P", "-I", os.path.join(REPO, "include"), "-x", "c", "-"],
                         input=src, capture_output=True, text=True, check=True).stdout
    m = re.search(r'"CREATE TABLE meta.*', out, re.S)
    assert m, "VT_SCHEMA_DDL not found"
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(0))
    ddl = "".join(p.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\") for p in parts)
    ddl = re.sub(r"CREATE TABLE (kernel|api_call|memcpy|memset)_(sig|row|block)\(.*?\);\n", "", ddl, flags=re.S)
    return ddl.replace("@base", "0")


DDL = schema_ddl()


def schema_define(name):
    """An integer #define of include/vramtrace/schema.h."""
    text = open(os.path.join(REPO, "include", "vramtrace", "schema.h"), encoding="utf-8").read()
    return int(re.search(rf"#define {name} (\w+)", text).group(1), 0)


class Trace:
    """A generated trace: events are appended in time order, then save() writes the file."""

    def __init__(self, pid, tensors):
        self.db = sqlite3.connect(":memory:")
        self.db.executescript(DDL)
        self.db.execute("PRAGMA user_version = 4")  # version 4's layout (schema_ddl)
        self.db.execute(f"PRAGMA application_id = {schema_define('VT_SCHEMA_APPLICATION_ID')}")
        self.db.execute("INSERT INTO device(id, name, total_bytes) VALUES(0, 'NVIDIA H100 80GB HBM3', ?)",
                        (80 << 30,))
        self.ts = 1000
        self.strings = {}
        meta = {"schema_version": "4", "pid": str(pid), "closed_cleanly": "1",
                "config.tensors": "1" if tensors else "0"}
        self.db.executemany("INSERT INTO meta VALUES(?, ?)", meta.items())
        self.stack_c10 = self.stack("/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so")
        self.stack_cublas = self.stack("/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13")

    def string(self, value):
        if value not in self.strings:
            self.strings[value] = len(self.strings) + 1
            self.db.execute("INSERT INTO string VALUES(?, ?)", (self.strings[value], value))
        return self.strings[value]

    def stack(self, module):
        """A stack whose first native frame is in module (after one Python frame)."""
        sid = self.db.execute("SELECT coalesce(max(id), 0) + 1 FROM stack").fetchone()[0]
        self.db.execute("INSERT INTO stack VALUES(?, ?, 2)", (sid, sid * 7919))
        self.db.execute("INSERT INTO frame VALUES(?, 0, 1, NULL, ?, ?, 12, NULL)",
                        (sid, self.string("step"), self.string("/work/train.py")))
        self.db.execute("INSERT INTO frame VALUES(?, 1, 0, 4096, NULL, NULL, NULL, ?)",
                        (sid, self.string(module)))
        self.db.execute("INSERT INTO frame VALUES(?, 2, 0, 8192, NULL, NULL, NULL, ?)",
                        (sid, self.string("/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so")))
        return sid

    def event(self, op, address, nbytes, api, is_async=0, stack=None, kind=pc.MEMKIND_DEVICE, pool=None):
        self.ts += 100
        self.db.execute("INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, api, is_async,"
                        " stack_id, pool_size) VALUES(?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
                        (self.ts, op, kind, address, nbytes, api, is_async, stack, pool))

    def malloc(self, address, nbytes, stack=None):
        self.event(pc.MEMOP_ALLOC, address, nbytes, pc.API_CUDA_MALLOC,
                   stack=self.stack_c10 if stack is None else stack)

    def free(self, address, nbytes, api=2, is_async=0):
        self.event(pc.MEMOP_FREE, address, nbytes, api, is_async=is_async)

    def nvtx(self, name):
        self.ts += 100
        self.db.execute("INSERT INTO nvtx_range(t, dur, kind, name_id, depth) VALUES(?, ?2 - ?1, 0, ?, 0)",
                        (self.ts, self.ts + 50, self.string(name)))

    def oom(self, nbytes):
        self.ts += 100
        self.db.execute("INSERT INTO oom_event(t, api, bytes, status, device) VALUES(?, 1, ?, 2, 0)",
                        (self.ts, nbytes))

    def save(self, path):
        self.db.commit()
        out = sqlite3.connect(path)
        self.db.backup(out)
        out.close()


def segment_trace(pid):
    """Default mode: 3 caching-allocator segments (2, 20, 20 MiB), the second freed after the
    third is made (peak 42 MiB), plus a cuBLAS cudaMalloc and the runtime's own allocation.
    Ground truth: segment.all.allocated 3, segment.all.freed 1, reserved peak 42 MiB."""
    t = Trace(pid, tensors=False)
    for name in ("train", "iter 0", "iter 1", "validation", "batch 0", "cublasLtMatmul"):
        t.nvtx(name)
    t.event(pc.MEMOP_ALLOC, 0x7000, 2 * MIB, None, stack=None)  # the runtime's own, no API
    t.malloc(0x10000000, 2 * MIB)
    t.malloc(0x20000000, 20 * MIB)
    t.malloc(0x30000000, 4 * MIB, stack=t.stack_cublas)
    t.malloc(0x40000000, 20 * MIB)
    t.free(0x20000000, 20 * MIB)
    return t


def segment_stats(pid, scenario, **result):
    return {"format": "vramtrace-pytorch-stats", "version": 1, "scenario": scenario, "pid": pid,
            "completed": True, "seconds": 1.5, "torch": "2.11.0+cu130", "cuda": "13.0",
            "device": {"name": "NVIDIA H100 80GB HBM3", "total_memory": 85 * 10**9},
            "allocator": {"backend": "native"},
            "memory_stats": {"segment.all.allocated": 3, "segment.all.freed": 1,
                             "reserved_bytes.all.peak": 42 * MIB, "allocation.all.allocated": 5},
            "host_memory_stats": {}, "nvtx_ranges": 5, "result": result}


def tensor_trace(pid):
    """--tensors mode: 5 cudaMallocAsync tensors of 1 MiB, the first two freed early (peak 3 MiB),
    then four 4-byte losses from one line left live (the growing site)."""
    t = Trace(pid, tensors=True)
    for name in ("train pin_memory=False", "iter 12", "train pin_memory=True", "iter 13", "batch 7"):
        t.nvtx(name)
    for i in range(5):
        t.event(pc.MEMOP_ALLOC, 0x50000000 + i * MIB, MIB, pc.API_CUDA_MALLOC_ASYNC, is_async=1,
                stack=t.stack_c10, pool=32 * MIB)
        if i < 2:
            t.free(0x50000000 + i * MIB, MIB, api=4, is_async=1)
    return t


def tensor_stats(pid, scenario, **result):
    s = segment_stats(pid, scenario, **result)
    s["allocator"] = {"backend": "cudaMallocAsync"}
    s["memory_stats"] = {"allocated_bytes.all.peak": 3 * MIB, "reserved_bytes.all.peak": 32 * MIB,
                         "allocation.all.allocated": 0}
    return s


def loss_trace(pid, line):
    """--tensors run of loss_no_item as the tracer should record it: NVTX `train` around 60
    `iter N`; per step a 1 MiB temporary and the 4-byte kept loss, allocated at the marker
    line (a Python frame), all losses freed after the loop. Peak: 1 MiB + 240 bytes."""
    t = Trace(pid, tensors=True)
    sid = t.db.execute("SELECT coalesce(max(id), 0) + 1 FROM stack").fetchone()[0]
    t.db.execute("INSERT INTO stack VALUES(?, ?, 2)", (sid, 99))
    t.db.execute("INSERT INTO frame VALUES(?, 0, 1, NULL, ?, ?, ?, NULL)",
                 (sid, t.string("train_epoch_keeping_losses"), t.string("/repo/samples/pytorch/loss_no_item.py"), line))
    t.db.execute("INSERT INTO frame VALUES(?, 1, 0, 4096, NULL, NULL, NULL, ?)",
                 (sid, t.string("/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so")))
    start = t.ts
    for i in range(60):
        s = t.ts
        t.event(pc.MEMOP_ALLOC, 0x50000000, MIB, pc.API_CUDA_MALLOC_ASYNC, is_async=1, stack=t.stack_c10)
        t.event(pc.MEMOP_ALLOC, 0x60000000 + i * 512, 4, pc.API_CUDA_MALLOC_ASYNC, is_async=1, stack=sid)
        t.free(0x50000000, MIB, api=4, is_async=1)
        t.ts += 1000
        t.db.execute("INSERT INTO nvtx_range(t, dur, kind, name_id, depth) VALUES(?, ?2 - ?1, 0, ?, 1)",
                     (s, t.ts, t.string(f"iter {i}")))
    for i in range(60):
        t.free(0x60000000 + i * 512, 4, api=4, is_async=1)
    t.db.execute("INSERT INTO nvtx_range(t, dur, kind, name_id, depth) VALUES(?, ?2 - ?1, 0, ?, 0)",
                 (start, t.ts + 10, t.string("train")))
    return t


def write_run(base, name, mode, trace, stats, findings, status=0, worker_pid=None):
    """Lay out one run as pytorch-run.sh leaves it."""
    trace.save(os.path.join(base, f"{name}-{mode}-{stats['pid']}.db"))
    if worker_pid:
        Trace(worker_pid, mode == "tensors").save(os.path.join(base, f"{name}-{mode}-{worker_pid}.db"))
    with open(os.path.join(base, f"{name}-{mode}.stats.json"), "w") as f:
        json.dump(stats, f)
    with open(os.path.join(base, f"{name}-{mode}.exit"), "w") as f:
        f.write(f"{status}\n")
    report = {"vramtrace_report_version": 1,
              "findings": [dict(pid=str(stats["pid"]), **x) for x in findings]
              + [{"pid": "99999", "kind": "leak", "severity": "high", "title": "another process"}]}
    with open(os.path.join(base, f"{name}-{mode}.report.json"), "w") as f:
        json.dump(report, f)


def write_untraced(base, name, stats, status=0):
    """Lay out one untraced run as pytorch-run.sh leaves it (stats and exit status, no trace)."""
    with open(os.path.join(base, f"{name}-untraced.stats.json"), "w") as f:
        json.dump(stats, f)
    with open(os.path.join(base, f"{name}-untraced.exit"), "w") as f:
        f.write(f"{status}\n")


def finding(kind, severity, site=None, title="t"):
    return {"kind": kind, "severity": severity, "site": site, "title": title}


def rows_of(base, name, mode, repo=REPO, default_stats=None):
    sc = next(s for s in pc.SCENARIOS if s.name == name)
    rows, stats, facts = pc.check_run(base, sc, mode, repo, os.path.join(base, "keep"), default_stats)
    return {r.what: r for r in rows}, stats, facts


def verdict(rows, prefix):
    r = next((r for w, r in rows.items() if w.startswith(prefix)), None)
    return (r.trace, r.torch, r.verdict, r.ok) if r else None


def test_history_rows(tmp):
    """Default mode with PyTorch's history: the snapshot beside the trace is found by pid, the
    merged tensor peak must equal allocated_bytes.all.peak, loss_no_item then needs its leak line."""
    base = os.path.join(tmp, "history")
    os.makedirs(base)
    check(pc.history_snapshot(base, 77) is None, "no snapshot, none found")
    open(os.path.join(base, "vramtrace-h-77.snapshot.pickle"), "wb").close()
    open(os.path.join(base, "vramtrace-h-777.snapshot.pickle"), "wb").close()
    snap = pc.history_snapshot(base, 77)
    check(snap and snap.endswith("vramtrace-h-77.snapshot.pickle"), f"snapshot of pid 77 found: {snap}")
    stats = {"pid": 77, "memory_stats": {"allocated_bytes.all.peak": 1000}}
    dev = {"id": 0, "peak_bytes": 4096, "tensor_at_peak_bytes": 900, "tensor_peak_bytes": 1000}
    report = {"traces": [{"pid": 77, "devices": [dev]}]}
    rows = pc.history_rows(report, stats, snap)
    check(len(rows) == 3 and not any(r.failed() for r in rows), "merged history matching PyTorch passes")
    dev["tensor_peak_bytes"] = 999
    check(any(r.failed() for r in pc.history_rows(report, stats, snap)), "a tensor peak off by one fails")
    check(any(r.failed() for r in pc.history_rows({"traces": [{"pid": 77, "devices": [{"id": 0}]}]}, stats, snap)),
          "a snapshot left unmerged fails")
    rows = pc.history_rows(report, stats, None)
    check(len(rows) == 1 and not rows[0].ok and not rows[0].failed(), "no snapshot: shown, not required")
    sc = next(s for s in pc.SCENARIOS if s.name == "loss_no_item")
    rows = pc.finding_rows(sc, "default", [], {"leak": [10]}, stats, sc.expect["history"])
    check(any(r.failed() for r in rows), "loss_no_item with history needs a leak")


def test_static():
    """Markers, site parsing, the run list, and every scenario script's marker per required kind."""
    check(pc.parse_site("/r/samples/pytorch/x.py:42 in main") == ("/r/samples/pytorch/x.py", 42), "parse_site")
    check(pc.parse_site("c10::alloc (libc10_cuda.so)") is None, "parse_site native")
    check(pc.parse_site(None) is None, "parse_site None")
    buf = io.StringIO()
    pc.list_runs(buf)
    lines = buf.getvalue().splitlines()
    check(len(lines) == 3 * len(pc.SCENARIOS), f"list_runs: {len(lines)} lines")
    modes = [ln.split("|")[1] for ln in lines]
    check(modes == sorted(modes, key=pc.RUN_MODES.index), f"list_runs: mode by mode {modes}")
    check("oom_in_validation|untraced|samples/pytorch/oom_in_validation.py||" in lines, "list_runs untraced")
    check("loss_no_item|tensors|samples/pytorch/loss_no_item.py||--min-bytes 128" in lines, "list_runs loss")
    check("healthy_transformer|default|samples/pytorch/healthy.py|--model transformer|" in lines,
          "list_runs transformer")
    for sc in pc.SCENARIOS:
        path = os.path.join(REPO, pc.SCRIPT_DIR, sc.script)
        check(os.path.exists(path), f"{sc.script} exists")
        markers = pc.read_markers(path)
        for mode in pc.MODES:
            for kind in sc.expect[mode].require:
                check(kind in markers and len(markers[kind]) == 1, f"{sc.script}: one marker for {kind}")
        if sc.name.startswith("healthy"):
            check(markers == {}, f"{sc.script}: no marker")
    src = open(os.path.join(REPO, pc.SCRIPT_DIR, "loss_no_item.py")).read().splitlines()
    line = pc.read_markers(os.path.join(REPO, pc.SCRIPT_DIR, "loss_no_item.py"))["leak"][0]
    check("history.append(loss * x.size(0))" in src[line - 1], "loss_no_item marker on the append line")


def test_trace_facts(tmp):
    """The ground-truth side of a trace, exactly."""
    p = os.path.join(tmp, "facts.db")
    segment_trace(4242).save(p)
    f = pc.trace_facts(p)
    check((f["pid"], f["seg_allocs"], f["seg_frees"], f["seg_peak"], f["other_mallocs"]) ==
          ("4242", 3, 1, 42 * MIB, 1), f"segment facts {f}")
    check(f["native_stacks"] and f["ooms"] == 0 and f["dropped"] == 0 and f["tensors"] == "0", "flags")
    p2 = os.path.join(tmp, "facts2.db")
    tensor_trace(4243).save(p2)
    f = pc.trace_facts(p2)
    check((f["async_allocs"], f["async_frees"], f["async_peak"], f["seg_allocs"], f["async_pool_size_max"]) ==
          (5, 2, 3 * MIB, 0, 32 * MIB), f"async facts {f}")
    # Without native frames every cudaMalloc counts as the caching allocator's.
    t = Trace(1, False)
    t.db.execute("DELETE FROM frame")
    t.malloc(0x1000, 2 * MIB)
    t.malloc(0x2000, 2 * MIB, stack=t.stack_cublas)
    p3 = os.path.join(tmp, "facts3.db")
    t.save(p3)
    f = pc.trace_facts(p3)
    check((f["native_stacks"], f["seg_allocs"], f["other_mallocs"]) == (False, 2, 0), f"no native {f}")


def test_loss_no_item(tmp):
    """Both modes pass; the tensors run names the marker line; then each fact broken in turn."""
    base = os.path.join(tmp, "loss", "pytorch")
    os.makedirs(base)
    line = pc.read_markers(os.path.join(REPO, pc.SCRIPT_DIR, "loss_no_item.py"))["leak"][0]
    site = f"/repo/samples/pytorch/loss_no_item.py:{line} in train_epoch_keeping_losses"
    write_run(base, "loss_no_item", "default", segment_trace(100), segment_stats(100, "loss_no_item"),
              [finding("leak", "info", title="segments cached at exit")], worker_pid=101)
    write_run(base, "loss_no_item", "tensors", tensor_trace(200), tensor_stats(200, "loss_no_item"),
              [finding("leak", "medium", site)])
    rows, stats, _ = rows_of(base, "loss_no_item", "default")
    check(verdict(rows, "cudaMalloc calls") == (3, 3, "match", True), f"segments {verdict(rows, 'cudaMalloc calls')}")
    check(verdict(rows, "their cudaFree") == (1, 1, "match", True), "frees")
    check(verdict(rows, "peak live bytes") == (42 * MIB, 42 * MIB, "match", True), "peak")
    check(verdict(rows, "trace of the scenario") == ("loss_no_item-default-100.db", "pid 100",
                                                     "found (2 traces in the run)", True), "main trace")
    check(verdict(rows, "NVTX ranges") == (5, 5, "match", True), f"nvtx {verdict(rows, 'NVTX ranges')}")
    check(verdict(rows, "other NVTX") == (1, "-", "info", True), "other nvtx")
    check(not any(r.failed() for r in rows.values()), "default passes")
    rows, _, _ = rows_of(base, "loss_no_item", "tensors", default_stats=stats)
    check(verdict(rows, "cudaMallocAsync allocations")[:3] ==
          (5, 5, "match"), f"async count from default run {verdict(rows, 'cudaMallocAsync allocations')}")
    check("default-mode run" in next(w for w in rows if w.startswith("cudaMallocAsync allocations")),
          "reference named")
    check(verdict(rows, "peak live cudaMallocAsync") == (3 * MIB, 3 * MIB, "match", True), "async peak")
    check(verdict(rows, "leak site") == (f"loss_no_item.py:{line}", f"loss_no_item.py:{line}", "match", True),
          f"site {verdict(rows, 'leak site')}")
    check(not any(r.failed() for r in rows.values()), "tensors passes")
    st = tensor_stats(200, "loss_no_item")
    st["memory_stats"]["allocated_bytes.all.peak"] = 4 * MIB
    json.dump(st, open(os.path.join(base, "loss_no_item-tensors.stats.json"), "w"))
    rows, _, _ = rows_of(base, "loss_no_item", "tensors", default_stats=stats)
    check(verdict(rows, "peak live cudaMallocAsync") ==
          (3 * MIB, 4 * MIB, "DIFFER: 25.00 % (tolerance 1 %)", False), "async peak differs")
    check(not any(r.failed() for r in rows.values()), "the driver's peak is shown, not required")
    st["memory_stats"]["allocated_bytes.all.peak"] = 3 * MIB + 1000
    json.dump(st, open(os.path.join(base, "loss_no_item-tensors.stats.json"), "w"))
    rows, _, _ = rows_of(base, "loss_no_item", "tensors", default_stats=stats)
    check(verdict(rows, "peak live cudaMallocAsync")[2:] == ("within 0.03 % (tolerance 1 %)", True),
          f"async peak within {verdict(rows, 'peak live cudaMallocAsync')}")
    json.dump(tensor_stats(200, "loss_no_item"), open(os.path.join(base, "loss_no_item-tensors.stats.json"), "w"))
    check(os.path.exists(os.path.join(base, "keep", "loss_no_item-tensors.db")), "trace kept")
    kept = json.load(open(os.path.join(base, "keep", "loss_no_item-tensors.expected.json")))
    check([f["site"] for f in kept["findings"]] == [site], "kept findings are this process's")

    write_untraced(base, "loss_no_item", segment_stats(102, "loss_no_item"))
    ok, text = pc.check_all(os.path.join(tmp, "loss"), REPO, {"loss_no_item"})
    check(ok and "loss_no_item [tensors]: PASS (1.5 s)" in text, f"check_all pass:\n{text}")
    md = open(os.path.join(base, "summary.md")).read()
    check("Overall: PASS." in md and "| cudaMalloc calls of the caching allocator vs segment.all.allocated"
          " | 3 | 3 | match |" in md, "summary.md rows")

    # Broken: the site names another line, then only a native frame (not named: required here).
    write_run(base, "loss_no_item", "tensors", tensor_trace(200), tensor_stats(200, "loss_no_item"),
              [finding("leak", "medium", site.replace(f":{line} ", f":{line + 1} "))])
    rows, _, _ = rows_of(base, "loss_no_item", "tensors", default_stats=stats)
    check(verdict(rows, "leak site") == (f"loss_no_item.py:{line + 1}", f"loss_no_item.py:{line}", "DIFFER", False),
          f"wrong line {verdict(rows, 'leak site')}")
    write_run(base, "loss_no_item", "tensors", tensor_trace(200), tensor_stats(200, "loss_no_item"),
              [finding("leak", "medium", "c10::cuda::malloc (libc10_cuda.so)")])
    rows, _, _ = rows_of(base, "loss_no_item", "tensors", default_stats=stats)
    check(verdict(rows, "leak site")[2:] == ("not named", False), f"native site {verdict(rows, 'leak site')}")
    ok, text = pc.check_all(os.path.join(tmp, "loss"), REPO, {"loss_no_item"})
    check(not ok and "loss_no_item [tensors]: FAIL" in text and "overall: FAIL" in text, "check_all fails")

    # Broken: the trace counts one segment more than PyTorch; the peak differs; wrong backend.
    t = segment_trace(100)
    t.malloc(0x50000000, 2 * MIB)
    st = segment_stats(100, "loss_no_item")
    st["memory_stats"]["reserved_bytes.all.peak"] = 40 * MIB
    st["allocator"]["backend"] = "cudaMallocAsync"
    write_run(base, "loss_no_item", "default", t, st, [])
    rows, _, _ = rows_of(base, "loss_no_item", "default")
    check(verdict(rows, "cudaMalloc calls") == (4, 3, "DIFFER by +1", False), "count differs")
    check(verdict(rows, "peak live bytes") == (42 * MIB, 40 * MIB, f"DIFFER by {2 * MIB:+d}", False),
          f"peak differs {verdict(rows, 'peak live bytes')}")
    check(verdict(rows, "allocator backend") == ("cudaMallocAsync", "native", "DIFFER", False), "backend")
    t = segment_trace(100)
    t.db.execute("DELETE FROM nvtx_range WHERE id = 2")
    write_run(base, "loss_no_item", "default", t, segment_stats(100, "loss_no_item"), [])
    rows, _, _ = rows_of(base, "loss_no_item", "default")
    check(verdict(rows, "NVTX ranges") == (4, 5, "DIFFER by -1", False), "an NVTX range lost")

    # Broken: no trace of the scenario's pid, and a failed run without stats.
    st = segment_stats(555, "loss_no_item")
    with open(os.path.join(base, "loss_no_item-default.stats.json"), "w") as f:
        json.dump(st, f)
    rows, _, _ = rows_of(base, "loss_no_item", "default")
    check(verdict(rows, "trace of the scenario")[2:] == ("MISSING", False), "no main trace")
    os.remove(os.path.join(base, "loss_no_item-default.stats.json"))
    with open(os.path.join(base, "loss_no_item-default.exit"), "w") as f:
        f.write("1\n")
    rows, _, _ = rows_of(base, "loss_no_item", "default")
    check(verdict(rows, "exit status") == (1, 0, "DIFFER", False) and verdict(rows, "stats file")[2] == "MISSING",
          "failed run")


def test_healthy_and_oom(tmp):
    """healthy: info/low findings pass, a medium one fails; oom: events, request size, result."""
    base = os.path.join(tmp, "h", "pytorch")
    os.makedirs(base)
    write_run(base, "healthy", "default", segment_trace(300), segment_stats(300, "healthy"),
              [finding("leak", "info"), finding("transfer", "low")])
    rows, _, _ = rows_of(base, "healthy", "default")
    check(verdict(rows, "findings of severity medium") == ("none", "none", "clean", True), "healthy clean")
    check(verdict(rows, "findings reported") == ("info leak, low transfer", "-", "info", True), "findings listed")
    write_run(base, "healthy", "default", segment_trace(300), segment_stats(300, "healthy"),
              [finding("retained", "medium", title="gradients held")])
    rows, _, _ = rows_of(base, "healthy", "default")
    check(verdict(rows, "findings of severity medium") ==
          ("medium retained: gradients held", "none", "UNEXPECTED", False), "healthy with a medium finding")

    request = 100 * 10**9
    t = segment_trace(400)
    t.oom(request + MIB)
    t.oom(request + MIB)
    line = pc.read_markers(os.path.join(REPO, pc.SCRIPT_DIR, "oom_in_validation.py"))["oom"][0]
    write_run(base, "oom_in_validation", "default", t,
              segment_stats(400, "oom_in_validation", oom_caught=True, expected_request_bytes=request),
              [finding("oom", "high", f"/r/samples/pytorch/oom_in_validation.py:{line} in validate_whole_set")])
    rows, _, _ = rows_of(base, "oom_in_validation", "default")
    check(verdict(rows, "oom_event rows") == (2, "at least 1", "found", True), "oom rows")
    check(verdict(rows, "failed request bytes") == (request + MIB, request, "rounded up to 2 MiB", True),
          f"request {verdict(rows, 'failed request bytes')}")
    check(verdict(rows, "stats result.oom_caught") == (True, True, "match", True), "oom caught")
    check(verdict(rows, "oom site")[2:] == ("match", True), "oom site (not required, matched)")
    check(not any(r.failed() for r in rows.values()), "oom default passes")
    t = segment_trace(400)
    write_run(base, "oom_in_validation", "default", t,
              segment_stats(400, "oom_in_validation", oom_caught=False, expected_request_bytes=request), [])
    rows, _, _ = rows_of(base, "oom_in_validation", "default")
    check(verdict(rows, "oom_event rows")[2:] == ("MISSING", False), "no oom row")
    check(verdict(rows, "finding oom")[2:] == ("MISSING", False), "no oom finding")
    check(verdict(rows, "stats result.oom_caught")[2:] == ("DIFFER", False), "not caught")
    check(verdict(rows, "failed request bytes")[3] is False, "no request")


def test_untraced(tmp):
    """The untraced run: PyTorch's counters equal the traced default-mode run's, and the
    default-mode trace shows the untraced run's segments and peak; a run never started fails."""
    base = os.path.join(tmp, "u", "pytorch")
    os.makedirs(base)
    sc = next(s for s in pc.SCENARIOS if s.name == "oom_in_validation")

    traced = segment_stats(500, "oom_in_validation", oom_caught=True)
    facts = {"native_stacks": True, "seg_allocs": 3, "seg_peak": 42 * MIB}
    rows, _ = pc.check_untraced(base, sc, traced, facts)
    check([r.verdict for r in rows] == ["NOT RUN (time budget or an earlier stop)"], "untraced not run")
    write_untraced(base, "oom_in_validation", segment_stats(501, "oom_in_validation", oom_caught=True))
    rows, stats = pc.check_untraced(base, sc, traced, facts)
    rows = {r.what: r for r in rows}
    check(stats["pid"] == 501 and not any(r.failed() for r in rows.values()),
          f"untraced passes: {[(r.what, r.verdict) for r in rows.values() if r.failed()]}")
    check(verdict(rows, "traced segment.all.allocated vs untraced") == (3, 3, "match", True), "segments")
    check(verdict(rows, "default trace: peak live segment bytes") == (42 * MIB, 42 * MIB, "match", True), "peak")
    check(verdict(rows, "stats result.oom_caught") == (True, True, "match", True), "result checked")
    check(verdict(rows, "run seconds")[2:] == ("info: x1.00", True), "seconds shown")
    moved = segment_stats(501, "oom_in_validation", oom_caught=True)
    moved["memory_stats"]["segment.all.allocated"] = 4
    write_untraced(base, "oom_in_validation", moved, status=1)
    rows = {r.what: r for r in pc.check_untraced(base, sc, traced, facts)[0]}
    check(verdict(rows, "exit status")[2:] == ("DIFFER", False), "untraced exit status")
    check(verdict(rows, "traced segment.all.allocated vs untraced") == (3, 4, "DIFFER by -1", False),
          "traced run allocated one segment fewer")
    check(verdict(rows, "default trace: caching-allocator cudaMalloc calls") == (3, 4, "DIFFER by -1", False),
          "trace vs untraced")
    rows = {r.what: r for r in pc.check_untraced(base, sc, None, None)[0]}
    check(verdict(rows, "traced default-mode run")[2:] == ("MISSING", False), "no traced run to compare")


def test_run_script(tmp):
    """pytorch-run.sh with the test double: the command lines it builds, the files it leaves,
    the checker's verdict as its exit status."""
    if not shutil.which("bash"):
        print("skip: no bash")
        return
    build = os.path.join(tmp, "build")
    os.makedirs(os.path.join(build, "analyzer"))
    fake = os.path.join(build, "analyzer", "vramtrace")
    with open(fake, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "{os.path.join(HERE, "pytorch_fake_vramtrace.py")}" "$@"\n')
    os.chmod(fake, 0o755)
    names = ["loss_no_item"]

    def run(out, env_extra, names):
        env = dict(os.environ, OUT=out, PYTHON=sys.executable, PYTHONPATH=os.path.join(HERE, "fake_torch"),
                   VT_VRAMTRACE=fake, **env_extra)
        return subprocess.run(["bash", os.path.join(REPO, "tests", "gpu", "pytorch-run.sh"), build] + names,
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    out = os.path.join(tmp, "run-ok")
    p = run(out, {}, names)
    check(p.returncode == 0, f"pytorch-run.sh exit {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-2000:]}")
    base = os.path.join(out, "pytorch")
    for name in names:
        for mode in pc.RUN_MODES:
            run_id = f"{name}-{mode}"
            suffixes = (".exit", ".stats.json", ".log") + ((".report.json", ".report.txt") if mode in pc.MODES else ())
            for suffix in suffixes:
                check(os.path.exists(os.path.join(base, run_id + suffix)), f"{run_id}{suffix} written")
            check(open(os.path.join(base, run_id + ".exit")).read() == "0\n", f"{run_id} exit recorded")
            check(os.path.exists(os.path.join(base, "keep", run_id + ".db")) == (mode in pc.MODES),
                  f"{run_id} kept (traced runs only)")
    report = json.load(open(os.path.join(base, "loss_no_item-tensors.report.json")))
    check(report["argv"] == ["--no-write", "--min-bytes", "128"], f"analyze options {report['argv']}")
    pid = json.load(open(os.path.join(base, "loss_no_item-tensors.stats.json")))["pid"]
    check(report["traces"] == [os.path.join(base, f"loss_no_item-tensors-{pid}.db")],
          f"only the scenario's own trace analyzed: {report['traces']}")
    check(not os.path.exists(os.path.join(base, "val_no_grad-default.exit")), "only the scenarios asked for")
    summary = open(os.path.join(base, "summary.md")).read()
    check("Overall: PASS." in summary and summary.count(" mode: PASS") == 3, "summary: 3 runs pass")
    check("| traced segment.all.allocated vs untraced | 1 | 1 | match |" in summary,
          "summary: the untraced run compared with the traced one")
    check(open(os.path.join(base, "check.txt")).read().endswith(
        f"overall: PASS (summary: {os.path.join(base, 'summary.md')})\n"), "check.txt")

    p = run(os.path.join(tmp, "run-broken"), {"FAKE_VT_BREAK": "loss_no_item-tensors"}, names)
    check(p.returncode == 1 and "loss_no_item [tensors]: FAIL" in p.stdout
          and "loss_no_item [default]: PASS" in p.stdout, f"broken run: exit {p.returncode}\n{p.stdout[-3000:]}")


def test_scenarios_fake_torch(tmp):
    """Every scenario script runs to its end on the shape-only stand-in of PyTorch
    (tests/gpu/fake_torch) and leaves the stats file the checker reads, in both modes."""
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "fake_torch"))
    env.pop("PYTORCH_ALLOC_CONF", None)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    for sc in pc.SCENARIOS:
        for mode in pc.MODES:
            stats_path = os.path.join(tmp, f"{sc.name}-{mode}.stats.json")
            e = dict(env, VRAMTRACE_STATS_OUT=stats_path)
            if mode == "tensors":
                e["PYTORCH_ALLOC_CONF"] = e["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
            p = subprocess.run([sys.executable, os.path.join(REPO, pc.SCRIPT_DIR, sc.script), *sc.args,
                                "--iters", "3", "--val-batches", "2"],
                               env=e, capture_output=True, text=True, timeout=60)
            check(p.returncode == 0, f"{sc.name} [{mode}] on the stand-in: exit {p.returncode}\n{p.stderr[-2000:]}")
            if p.returncode != 0:
                continue
            check(f"allocator backend {'cudaMallocAsync' if mode == 'tensors' else 'native'}" in p.stdout,
                  f"{sc.name} prints the allocator mode")
            st = pc.load_json(stats_path) or {}
            check(st.get("format") == "vramtrace-pytorch-stats" and st.get("completed") is True,
                  f"{sc.name} stats completed")
            check(isinstance(st.get("pid"), int) and st.get("scenario") == sc.script[:-3], f"{sc.name} pid, scenario")
            check(st.get("allocator", {}).get("backend") == ("cudaMallocAsync" if mode == "tensors" else "native"),
                  f"{sc.name} [{mode}] backend in stats")
            check("segment.all.allocated" in st.get("memory_stats", {}), f"{sc.name} memory_stats")
            a = st.get("args", {})
            want = {"healthy": 2 * (2 + 3 + 2), "dataloader_pinned": 2 * (1 + 3),
                    "oom_in_validation": 1 + 3 + 2}.get(sc.script[:-3], 2 + 3 + 2)
            check(st.get("nvtx_ranges") == want, f"{sc.name}: {st.get('nvtx_ranges')} NVTX ranges, want {want} {a}")
            for key, value in sc.expect[mode].result.items():
                check(st.get("result", {}).get(key) == value, f"{sc.name} result.{key}")
            if "oom" in sc.expect[mode].require:
                check(st["result"].get("expected_request_bytes", 0) > st["device"]["total_memory"],
                      "the OOM request exceeds the device")


def test_real_analyzer(tmp):
    """The checker on reports of the real `vramtrace analyze` (path in $VT_VRAMTRACE): the JSON
    keys it reads, the leak growth of loss_no_item named at the marker line with
    --min-bytes 128 (and not reported at the default 1 MiB), an OOM found, healthy clean."""
    vt = os.environ.get("VT_VRAMTRACE")
    if not vt:
        print("skip: VT_VRAMTRACE not set")
        return
    base = os.path.join(tmp, "real", "pytorch")
    os.makedirs(base)
    line = pc.read_markers(os.path.join(REPO, pc.SCRIPT_DIR, "loss_no_item.py"))["leak"][0]

    def analyze(run_id, extra=()):
        traces = [os.path.join(base, p) for p in sorted(os.listdir(base))
                  if p.startswith(run_id + "-") and p.endswith(".db")]
        out = os.path.join(base, run_id + ".report.json")
        p = subprocess.run([vt, "analyze", "--no-write", "--format", "json", *extra, "-o", out, *traces],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"analyze {run_id}: {p.returncode} {p.stderr}")
        return json.load(open(out))

    def lay_out(name, mode, trace, stats):
        trace.save(os.path.join(base, f"{name}-{mode}-{stats['pid']}.db"))
        json.dump(stats, open(os.path.join(base, f"{name}-{mode}.stats.json"), "w"))
        open(os.path.join(base, f"{name}-{mode}.exit"), "w").write("0\n")

    st = tensor_stats(10, "loss_no_item")
    st["memory_stats"]["allocated_bytes.all.peak"] = MIB + 240
    st["nvtx_ranges"] = 61
    lay_out("loss_no_item", "tensors", loss_trace(10, line), st)
    default = segment_stats(9, "loss_no_item")
    default["memory_stats"]["allocation.all.allocated"] = 120
    report = analyze("loss_no_item-tensors")
    check(not [f for f in report["findings"] if f["kind"] == "leak"], "no leak reported at --min-bytes 1M")
    analyze("loss_no_item-tensors", ("--min-bytes", "128"))
    rows, _, _ = rows_of(base, "loss_no_item", "tensors", default_stats=default)
    check(verdict(rows, "leak site") == (f"loss_no_item.py:{line}", f"loss_no_item.py:{line}", "match", True),
          f"real analyzer: site {verdict(rows, 'leak site')}")
    check(verdict(rows, "finding leak")[2:] == ("found", True), f"leak {verdict(rows, 'finding leak')}")
    check(verdict(rows, "cudaMallocAsync allocations")[:3] == (120, 120, "match"), "120 allocations")
    check(verdict(rows, "peak live cudaMallocAsync") == (MIB + 240, MIB + 240, "match", True), "async peak")
    failed = [w for w, r in rows.items() if r.failed()]
    check(not failed, f"loss_no_item tensors on the real report: {failed}")

    request = 100 << 30
    t = segment_trace(20)
    t.oom(request)
    t.oom(request)
    lay_out("oom_in_validation", "default", t,
            segment_stats(20, "oom_in_validation", oom_caught=True, expected_request_bytes=request))
    analyze("oom_in_validation-default")
    rows, _, _ = rows_of(base, "oom_in_validation", "default")
    check(verdict(rows, "finding oom")[2:] == ("found", True), f"oom {verdict(rows, 'finding oom')}")
    check(verdict(rows, "oom site")[2] == "no Python site (not required)",
          f"oom site {verdict(rows, 'oom site')}")
    failed = [w for w, r in rows.items() if r.failed()]
    check(not failed, f"oom_in_validation on the real report: {failed}")

    lay_out("healthy", "default", segment_trace(30), segment_stats(30, "healthy"))
    analyze("healthy-default")
    rows, _, _ = rows_of(base, "healthy", "default")
    check(verdict(rows, "findings of severity medium") == ("none", "none", "clean", True), "healthy clean")


GROUPS = {
    "logic": lambda tmp: (test_static(), test_trace_facts(tmp), test_loss_no_item(tmp),
                          test_healthy_and_oom(tmp), test_history_rows(tmp), test_untraced(tmp)),
    "analyzer": test_real_analyzer,
    "harness": test_run_script,
    "scenarios": test_scenarios_fake_torch,
}


def main(argv):
    groups = argv[1:] or list(GROUPS)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        print(f"usage: pytorch_check_test.py [{'|'.join(GROUPS)}]...")
        return 2
    with tempfile.TemporaryDirectory(prefix="vt-pytorch-check-") as tmp:
        for g in groups:
            GROUPS[g](tmp)
    return finish(f"pytorch_check_test {' '.join(groups)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))

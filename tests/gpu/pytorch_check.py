#!/usr/bin/env python3
"""Check the PyTorch scenarios' traces and reports against PyTorch's own counters; write a summary.

Run by tests/gpu/pytorch-run.sh on a GPU machine after it recorded and analyzed every
scenario (samples/pytorch/) in default and in --tensors mode. For each run it reads, from
OUT/pytorch/:

    NAME-MODE-PID.db         the traces `vramtrace record` wrote (the scenario's own process
                             is the one whose meta pid equals the stats' pid)
    NAME-MODE.stats.json     what the scenario wrote at its end (torch.cuda.memory_stats())
    NAME-MODE.report.json    `vramtrace analyze --format json` of the run's traces
    NAME-MODE.exit           the exit status of `vramtrace record` (the job's status)
    NAME-untraced.stats.json the same scenario run without vramtrace (its .exit likewise)

and checks: the findings the scenario must produce (kind; for healthy, nothing of severity
medium or above), the script line of the `# vramtrace-expect: KIND` marker in the finding's
call site where the scenario requires it, and the ground truth (default mode: cudaMalloc
calls of PyTorch's caching allocator = memory_stats segment.all.allocated, their frees =
segment.all.freed, peak live bytes of those segments = reserved_bytes.all.peak; --tensors
mode: cudaMallocAsync allocations = allocation.all.allocated, and shown, not required: peak
live bytes ~ allocated_bytes.all.peak; both: NVTX ranges in the trace = ranges the script pushed;
untraced: the run without vramtrace allocates as the traced default-mode run did, by PyTorch's
counters, and the default-mode trace's segment count and peak equal the untraced run's
segment.all.allocated and reserved_bytes.all.peak). Every comparison is printed with both numbers and a verdict, and
OUT/pytorch/summary.md holds the same as Markdown. Traces of at most 2 MB are copied to
OUT/pytorch/keep/ with the findings they produced, ready for tests/data/.

    pytorch_check.py --list                 the runs, one per line, for pytorch-run.sh
    pytorch_check.py OUT                    check; exit 0 when every run passes, 1 otherwise

Only the standard library is used (sqlite3, json): it runs where the traces are, with or
without PyTorch.
"""
import json
import os
import re
import shutil
import sqlite3
import sys

SEVERITIES = ("info", "low", "medium", "high")
MODES = ("default", "tensors")  # the traced modes
UNTRACED = "untraced"
RUN_MODES = MODES + (UNTRACED,)  # every run of a scenario, in the order they are made
# PyTorch's counters that a run without the tracer must repeat exactly.
UNTRACED_SAME = ("segment.all.allocated", "segment.all.freed", "reserved_bytes.all.peak",
                 "allocated_bytes.all.peak", "allocation.all.allocated")
KEEP_LIMIT = 2 * 1000 * 1000
SCRIPT_DIR = os.path.join("samples", "pytorch")

# Schema ids (include/vramtrace/schema.h).
MEMOP_ALLOC, MEMOP_FREE = 1, 2
MEMKIND_PAGEABLE, MEMKIND_PINNED, MEMKIND_DEVICE = 1, 2, 3
API_CUDA_MALLOC, API_CUDA_MALLOC_ASYNC = 1, 3
COPY_HTOD = 1
FRAME_NATIVE = 0
NVTX_PUSHPOP = 0

# The names of the NVTX ranges samples/pytorch/common.py opens.
SCENARIO_RANGE = re.compile(r"^(train|validation|train pin_memory=(True|False)|iter \d+|batch \d+)$")

# Relative tolerance of the --tensors peak comparison, which is shown but not required: the
# driver pool's used-memory high-water mark (allocated_bytes.all.peak under the
# cudaMallocAsync backend) is the driver's own figure, with its own rounding of each
# allocation, not a sum PyTorch keeps.
ASYNC_PEAK_TOLERANCE = 0.01


class Expect:
    """What one run must show.

    require: finding kinds that must be present; forbid_from: no finding at or above this
    severity; site_kinds: kinds whose marker line must be named by such a finding's site
    (a failure when not); result: values the scenario's stats `result` must hold.
    """

    def __init__(self, require=(), forbid_from=None, site_kinds=(), result=None):
        self.require = tuple(require)
        self.forbid_from = forbid_from
        self.site_kinds = tuple(site_kinds)
        self.result = dict(result or {})


class Scenario:
    """One run configuration: a script, its arguments, extra analyze options, expectations."""

    def __init__(self, name, script, expect, args=(), analyze=()):
        self.name, self.script, self.args, self.analyze = name, script, tuple(args), tuple(analyze)
        self.expect = expect  # mode -> Expect


HEALTHY = {m: Expect(forbid_from="medium") for m in MODES}
SCENARIOS = (
    Scenario("healthy", "healthy.py", HEALTHY),
    Scenario("healthy_transformer", "healthy.py", HEALTHY, args=("--model", "transformer")),
    Scenario("loss_no_item", "loss_no_item.py",
             {"default": Expect(), "tensors": Expect(require=("leak",), site_kinds=("leak",)),
              "history": Expect(require=("leak",), site_kinds=("leak",))},
             analyze=("--min-bytes", "128")),
    Scenario("val_no_grad", "val_no_grad.py",
             {m: Expect(require=("validation_spike",)) for m in MODES}),
    Scenario("val_outputs_list", "val_outputs_list.py",
             {"default": Expect(), "tensors": Expect(require=("validation_spike",))}),
    Scenario("dataloader_pinned", "dataloader_pinned.py",
             {m: Expect(require=("transfer",)) for m in MODES}),
    Scenario("oom_in_validation", "oom_in_validation.py",
             {m: Expect(require=("oom",), result={"oom_caught": True}) for m in MODES}),
)


def list_runs(out=sys.stdout):
    """Print one line per run for the shell: NAME|MODE|SCRIPT|SCRIPT ARGS|ANALYZE ARGS, every
    scenario's default-mode run first, then the --tensors runs, then the untraced ones (the
    order of their value when time runs short)."""
    for mode in RUN_MODES:
        for sc in SCENARIOS:
            out.write("|".join((sc.name, mode, os.path.join(SCRIPT_DIR, sc.script),
                                " ".join(sc.args), " ".join(sc.analyze))) + "\n")


def read_markers(path):
    """Map finding kind -> line numbers of `# vramtrace-expect: KIND` comments in a script."""
    markers = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            m = re.search(r"#\s*vramtrace-expect:\s*([a-z_]+)", line)
            if m:
                markers.setdefault(m.group(1), []).append(no)
    return markers


def parse_site(site):
    """Split an analyzer call site 'FILE:LINE in FUNCTION' into (file, line); None otherwise."""
    m = re.match(r"^(.+):(\d+) in .+$", site or "")
    return (m.group(1), int(m.group(2))) if m else None


def trace_facts(path):
    """The ground-truth side of one trace, read with sqlite3 (read-only).

    Returns a dict: pid, tensors (meta config.tensors), dropped, native_stacks (any native
    frame recorded), and for device memory: seg_allocs / seg_frees / seg_peak (cudaMalloc
    calls whose first native frame is in libc10_cuda, i.e. PyTorch's caching allocator; every
    cudaMalloc when no native frame was recorded), other_mallocs, async_allocs / async_frees /
    async_peak (is_async allocations), async_pool_size_max, async_pool_used_max; ooms and
    oom_max_bytes (largest failed request),
    pinned_allocs, pageable_htod (count, bytes), nvtx_scenario / nvtx_other (push/pop
    ranges with and without one of the scenarios' range names).
    """
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        first_module = {}
        for stack_id, module in db.execute(
                "SELECT f.stack_id, m.value FROM frame f LEFT JOIN string m ON m.id = f.module_id"
                " WHERE f.kind = ? AND f.idx = (SELECT min(g.idx) FROM frame g"
                " WHERE g.stack_id = f.stack_id AND g.kind = ?)", (FRAME_NATIVE, FRAME_NATIVE)):
            first_module[stack_id] = module or ""
        native = bool(first_module)
        f = dict(pid=meta.get("pid"), tensors=meta.get("config.tensors"), native_stacks=native,
                 closed_cleanly=meta.get("closed_cleanly"),
                 seg_allocs=0, seg_frees=0, seg_peak=0, other_mallocs=0,
                 async_allocs=0, async_frees=0, async_peak=0)
        seg, asy = {}, {}
        seg_live = asy_live = 0
        for op, addr, nbytes, api, is_async, stack_id in db.execute(
                "SELECT op, address, bytes, api, is_async, stack_id FROM memory_event"
                " WHERE mem_kind = ? AND op IN (?, ?) ORDER BY ts, id",
                (MEMKIND_DEVICE, MEMOP_ALLOC, MEMOP_FREE)):
            if op == MEMOP_ALLOC:
                if api == API_CUDA_MALLOC and not is_async:
                    if native and "libc10_cuda" not in first_module.get(stack_id, ""):
                        f["other_mallocs"] += 1
                        continue
                    seg[addr] = nbytes
                    seg_live += nbytes
                    f["seg_allocs"] += 1
                    f["seg_peak"] = max(f["seg_peak"], seg_live)
                elif is_async:
                    asy[addr] = nbytes
                    asy_live += nbytes
                    f["async_allocs"] += 1
                    f["async_peak"] = max(f["async_peak"], asy_live)
            elif addr in seg:
                seg_live -= seg.pop(addr)
                f["seg_frees"] += 1
            elif addr in asy:
                asy_live -= asy.pop(addr)
                f["async_frees"] += 1
        f["async_pool_size_max"], f["async_pool_used_max"] = db.execute(
            "SELECT max(pool_size), max(pool_used) FROM memory_event WHERE is_async = 1").fetchone()
        f["ooms"], f["oom_max_bytes"] = db.execute("SELECT count(*), max(bytes) FROM oom_event").fetchone()
        f["pinned_allocs"] = db.execute(
            "SELECT count(*) FROM memory_event WHERE op = ? AND mem_kind = ?",
            (MEMOP_ALLOC, MEMKIND_PINNED)).fetchone()[0]
        n, b = db.execute("SELECT count(*), coalesce(sum(bytes), 0) FROM memcpy"
                          " WHERE copy_kind = ? AND src_kind = ?", (COPY_HTOD, MEMKIND_PAGEABLE)).fetchone()
        f["pageable_htod"] = (n, b)
        f["dropped"] = db.execute("SELECT coalesce(sum(count), 0) FROM dropped").fetchone()[0]
        names = [r[0] or "" for r in db.execute(
            "SELECT s.value FROM nvtx_range n LEFT JOIN string s ON s.id = n.name_id WHERE n.kind = ?",
            (NVTX_PUSHPOP,))]
        f["nvtx_scenario"] = sum(1 for n in names if SCENARIO_RANGE.match(n))
        f["nvtx_other"] = len(names) - f["nvtx_scenario"]
        return f
    finally:
        db.close()


class Row:
    """One comparison: what, the trace's number, PyTorch's (or expected) number, verdict."""

    def __init__(self, what, trace, torch, ok, verdict, required=True):
        self.what, self.trace, self.torch = what, trace, torch
        self.ok, self.verdict, self.required = ok, verdict, required

    def failed(self):
        return self.required and not self.ok


def exact(what, trace, torch, required=True):
    """A comparison that must be equal; a missing PyTorch number is a failure (or info)."""
    if torch is None:
        return Row(what, trace, "not recorded", False, "no reference", required)
    if trace == torch:
        return Row(what, trace, torch, True, "match", required)
    return Row(what, trace, torch, False, f"DIFFER by {trace - torch:+d}", required)


def close(what, trace, torch, tol, required=True):
    """A comparison within a relative tolerance tol."""
    if torch is None:
        return Row(what, trace, "not recorded", False, "no reference", required)
    if trace == torch:
        return Row(what, trace, torch, True, "match", required)
    rel = abs(trace - torch) / max(abs(torch), 1)
    ok = rel <= tol
    return Row(what, trace, torch, ok, f"{'within' if ok else 'DIFFER:'} {rel * 100:.2f} % "
               f"(tolerance {tol * 100:g} %)", required)


def ground_truth_rows(mode, facts, stats, default_stats):
    """Compare one trace's facts with the run's memory_stats (default_stats: the same
    scenario's default-mode stats, the allocation count reference in --tensors mode when the
    cudaMallocAsync backend reports none)."""
    ms = stats.get("memory_stats", {})
    rows = []
    if mode == "default":
        origin = "" if facts["native_stacks"] else " (no native stacks: all cudaMalloc)"
        rows.append(exact(f"cudaMalloc calls of the caching allocator{origin} vs segment.all.allocated",
                          facts["seg_allocs"], ms.get("segment.all.allocated")))
        rows.append(exact("their cudaFree vs segment.all.freed", facts["seg_frees"], ms.get("segment.all.freed")))
        rows.append(exact("peak live bytes of those segments vs reserved_bytes.all.peak",
                          facts["seg_peak"], ms.get("reserved_bytes.all.peak")))
        rows.append(Row("cudaMalloc from other libraries (not compared)", facts["other_mallocs"], "-",
                        True, "info", False))
    else:
        ref, label = ms.get("allocation.all.allocated"), "allocation.all.allocated"
        if not ref and default_stats:
            ref = default_stats.get("memory_stats", {}).get("allocation.all.allocated")
            label = "allocation.all.allocated of the default-mode run (this backend keeps no count)"
        rows.append(exact(f"cudaMallocAsync allocations vs {label}", facts["async_allocs"], ref))
        rows.append(close("peak live cudaMallocAsync bytes vs allocated_bytes.all.peak",
                          facts["async_peak"], ms.get("allocated_bytes.all.peak"), ASYNC_PEAK_TOLERANCE,
                          required=False))
        if facts["async_pool_size_max"] is not None:
            rows.append(close("largest pool size recorded vs reserved_bytes.all.peak",
                              facts["async_pool_size_max"], ms.get("reserved_bytes.all.peak"),
                              ASYNC_PEAK_TOLERANCE, required=False))
        if facts["tensors"] != "1":
            rows.append(Row("meta config.tensors", facts["tensors"], "1", False, "DIFFER"))
    host = stats.get("host_memory_stats") or {}
    if "num_host_alloc" in host:
        rows.append(exact("pinned host allocations vs host_memory_stats num_host_alloc",
                          facts["pinned_allocs"], host["num_host_alloc"], required=False))
    rows.append(exact("NVTX ranges with the scenario's names vs ranges it pushed",
                      facts["nvtx_scenario"], stats.get("nvtx_ranges")))
    rows.append(Row("other NVTX ranges (not compared)", facts["nvtx_other"], "-", True, "info", False))
    rows.append(exact("records dropped by the tracer", facts["dropped"], 0))
    return rows


def history_snapshot(base, pid):
    """The exit snapshot the history hook wrote for process pid in base, or None."""
    suffix = f"-{pid}.snapshot.pickle"
    names = [n for n in os.listdir(base) if n.startswith("vramtrace-") and n.endswith(suffix)]
    return os.path.join(base, sorted(names)[0]) if names else None


def history_rows(report, stats, snapshot):
    """Default mode with PyTorch's own history: the report must hold the merged history
    (found beside the trace by `analyze`), and its tensor peak must equal PyTorch's
    allocated_bytes.all.peak. Without a snapshot the rows are shown, not required."""
    ms = stats.get("memory_stats", {})
    devs = []
    for t in (report or {}).get("traces", []):
        if isinstance(t, dict) and str(t.get("pid")) == str(stats.get("pid")):
            devs = [d for d in t.get("devices", []) if d.get("id", -1) >= 0 and "tensor_peak_bytes" in d]
    if not snapshot:
        return [Row("PyTorch history snapshot beside the trace", "none", "vramtrace-HOST-PID.snapshot.pickle",
                    False, "not written (not required)", False)]
    rows = [Row("PyTorch history merged into the analysis", len(devs), "at least 1 device", bool(devs),
                "merged" if devs else "MISSING")]
    if devs:
        rows.append(exact("tensor peak of the merged history vs allocated_bytes.all.peak",
                          max(d["tensor_peak_bytes"] for d in devs), ms.get("allocated_bytes.all.peak")))
        at = max(d.get("tensor_at_peak_bytes", 0) for d in devs)
        peak = max(d.get("peak_bytes", 0) for d in devs)
        rows.append(Row("allocated at the reserved peak <= reserved peak", at, peak, 0 < at <= peak,
                        "match" if 0 < at <= peak else "DIFFER"))
    return rows


def finding_rows(sc, mode, findings, markers, stats, exp=None):
    """Check the run's findings (those of its own process) against exp (default sc.expect[mode])."""
    exp = exp or sc.expect[mode]
    listed = ", ".join(f"{f.get('severity')} {f.get('kind')}" for f in findings) or "none"
    rows = [Row("findings reported (all, worst first)", listed, "-", True, "info", False)]
    for kind in exp.require:
        got = [f for f in findings if f.get("kind") == kind]
        if got:
            top = got[0]
            rows.append(Row(f"finding {kind}", f"{len(got)} ({top.get('severity')}: {top.get('title')})",
                            "at least 1", True, "found"))
        else:
            rows.append(Row(f"finding {kind}", 0, "at least 1", False, "MISSING"))
    if exp.forbid_from:
        floor = SEVERITIES.index(exp.forbid_from)
        bad = [f for f in findings if f.get("severity") in SEVERITIES
               and SEVERITIES.index(f["severity"]) >= floor]
        desc = "; ".join(f"{f['severity']} {f['kind']}: {f.get('title')}" for f in bad) or "none"
        rows.append(Row(f"findings of severity {exp.forbid_from} or above", desc, "none", not bad,
                        "clean" if not bad else "UNEXPECTED"))
    script = os.path.basename(sc.script)
    for kind, lines in sorted(markers.items()):
        if kind not in exp.require:
            continue
        required = kind in exp.site_kinds
        sites = [f.get("site") for f in findings if f.get("kind") == kind]
        parsed = [parse_site(s) for s in sites]
        in_script = [p for p in parsed if p and os.path.basename(p[0]) == script]
        want = f"{script}:{','.join(map(str, lines))}"
        if any(p[1] in lines for p in in_script):
            rows.append(Row(f"{kind} site names the marker line", want, want, True, "match", required))
        elif in_script:
            got = ", ".join(f"{script}:{p[1]}" for p in in_script)
            rows.append(Row(f"{kind} site names the marker line", got, want, False, "DIFFER", required))
        else:
            shown = next((s for s in sites if s), None) or "no site"
            rows.append(Row(f"{kind} site names the marker line", shown, want, False,
                            "not named" if required else "no Python site (not required)", required))
    return rows + result_rows(exp, stats)


def load_json(path):
    """Parse a JSON file; None when missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_rows(prefix, mode):
    """The rows every run starts with: exit status, stats completed, allocator backend.
    Returns (rows, stats or None); a run never started (no .exit, no .log) says so."""
    if not os.path.exists(prefix + ".exit") and not os.path.exists(prefix + ".log"):
        return [Row("run", "not run", "run", False, "NOT RUN (time budget or an earlier stop)")], None
    try:
        with open(prefix + ".exit") as f:
            status = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        status = None
    rows = [Row("exit status", status, 0, status == 0, "match" if status == 0 else "DIFFER")]
    stats = load_json(prefix + ".stats.json")
    if not stats:
        rows.append(Row("stats file", "missing", prefix + ".stats.json", False, "MISSING"))
        return rows, None
    rows.append(Row("stats completed", stats.get("completed"), True, stats.get("completed") is True,
                    "match" if stats.get("completed") is True else "DIFFER"))
    backend = (stats.get("allocator") or {}).get("backend")
    want_backend = "cudaMallocAsync" if mode == "tensors" else "native"
    rows.append(Row("allocator backend", backend, want_backend, backend == want_backend,
                    "match" if backend == want_backend else "DIFFER"))
    return rows, stats


def result_rows(exp, stats):
    """The values the scenario's stats `result` must hold (exp.result)."""
    result = stats.get("result", {}) if stats else {}
    return [Row(f"stats result.{key}", result.get(key), value, result.get(key) == value,
                "match" if result.get(key) == value else "DIFFER") for key, value in exp.result.items()]


def check_untraced(base, sc, traced_stats, traced_facts):
    """Check the scenario's run without vramtrace against its traced default-mode run:
    PyTorch's counters must be the same (the tracer does not change what PyTorch allocates),
    and the default-mode trace must show the untraced run's segments and reserved peak.
    Returns (rows, stats)."""
    rows, stats = run_rows(os.path.join(base, f"{sc.name}-{UNTRACED}"), UNTRACED)
    if not stats:
        return rows, None
    ms = stats.get("memory_stats", {})
    ref = (traced_stats or {}).get("memory_stats")
    if ref is None:
        rows.append(Row("traced default-mode run to compare with", "none", "its stats", False, "MISSING"))
    else:
        for key in UNTRACED_SAME:
            if ref.get(key) is None and ms.get(key) is None:
                continue
            if ref.get(key) is None:
                rows.append(Row(f"traced {key} vs untraced", "not recorded", ms.get(key), False, "no reference"))
            else:
                rows.append(exact(f"traced {key} vs untraced", ref.get(key), ms.get(key)))
    if traced_facts:
        origin = "" if traced_facts["native_stacks"] else " (no native stacks: all cudaMalloc)"
        rows.append(exact(f"default trace: caching-allocator cudaMalloc calls{origin} vs untraced segment.all.allocated",
                          traced_facts["seg_allocs"], ms.get("segment.all.allocated")))
        rows.append(exact("default trace: peak live segment bytes vs untraced reserved_bytes.all.peak",
                          traced_facts["seg_peak"], ms.get("reserved_bytes.all.peak")))
    t_secs, u_secs = (traced_stats or {}).get("seconds"), stats.get("seconds")
    if t_secs and u_secs:
        rows.append(Row("run seconds, traced default mode vs untraced (not compared)", t_secs, u_secs, True,
                        f"info: x{t_secs / u_secs:.2f}", False))
    if traced_stats and traced_stats.get("nvtx_ranges") is not None:
        rows.append(exact("NVTX ranges pushed, traced vs untraced", traced_stats["nvtx_ranges"],
                          stats.get("nvtx_ranges")))
    rows += result_rows(sc.expect["default"], stats)
    return rows, stats


def check_run(base, sc, mode, repo, keep_dir, default_stats):
    """Check one traced scenario run under directory base. Returns (rows, stats, facts or None)."""
    prefix = os.path.join(base, f"{sc.name}-{mode}")
    rows, stats = run_rows(prefix, mode)
    if not stats:
        return rows, None, None
    traces = sorted(p for p in os.listdir(base)
                    if p.startswith(f"{sc.name}-{mode}-") and p.endswith(".db"))
    main, facts = None, None
    for t in traces:
        try:
            fx = trace_facts(os.path.join(base, t))
        except sqlite3.Error as e:
            rows.append(Row(f"trace {t}", f"unreadable: {e}", "readable", False, "ERROR", False))
            continue
        if str(fx["pid"]) == str(stats.get("pid")):
            main, facts = t, fx
    if not main:
        rows.append(Row("trace of the scenario's process", f"{len(traces)} traces, none with pid",
                        stats.get("pid"), False, "MISSING"))
        return rows, stats, None
    rows.append(Row("trace of the scenario's process", main, f"pid {stats.get('pid')}", True,
                    f"found ({len(traces)} trace{'s' if len(traces) != 1 else ''} in the run)"))
    rows.append(Row("trace closed cleanly", facts["closed_cleanly"], "1", facts["closed_cleanly"] == "1",
                    "match" if facts["closed_cleanly"] == "1" else "DIFFER"))
    rows += ground_truth_rows(mode, facts, stats, default_stats)
    if sc.expect[mode].require and "oom" in sc.expect[mode].require:
        rows.append(Row("oom_event rows", facts["ooms"], "at least 1", facts["ooms"] >= 1,
                        "found" if facts["ooms"] >= 1 else "MISSING"))
        want = (stats.get("result") or {}).get("expected_request_bytes")
        got = facts["oom_max_bytes"]
        # The caching allocator rounds large requests up to a multiple of 2 MiB.
        ok = want is not None and got is not None and want <= got < want + (2 << 20)
        rows.append(Row("failed request bytes vs the first conv's output size", got, want, ok,
                        "match" if got == want else ("rounded up to 2 MiB" if ok else "DIFFER")))
    report = load_json(prefix + ".report.json")
    findings = []
    if report is None:
        rows.append(Row("analyze report", "missing or not JSON", prefix + ".report.json", False, "MISSING"))
    else:
        findings = [f for f in report.get("findings", []) if str(f.get("pid")) == str(stats.get("pid"))]
        markers = read_markers(os.path.join(repo, SCRIPT_DIR, sc.script))
        exp = None
        if mode == "default":
            snapshot = history_snapshot(base, stats.get("pid"))
            rows += history_rows(report, stats, snapshot)
            if snapshot and "history" in sc.expect:
                exp = sc.expect["history"]
        rows += finding_rows(sc, mode, findings, markers, stats, exp)
    if keep_dir:
        src = os.path.join(base, main)
        if os.path.getsize(src) <= KEEP_LIMIT:
            os.makedirs(keep_dir, exist_ok=True)
            shutil.copyfile(src, os.path.join(keep_dir, f"{sc.name}-{mode}.db"))
            with open(os.path.join(keep_dir, f"{sc.name}-{mode}.expected.json"), "w") as f:
                json.dump({"scenario": sc.name, "mode": mode, "script": sc.script, "args": list(sc.args),
                           "analyze_args": list(sc.analyze),
                           "findings": [{k: x.get(k) for k in ("kind", "severity", "title", "bytes", "count", "site")}
                                        for x in findings],
                           "ground_truth": {r.what: [r.trace, r.torch, r.verdict] for r in rows}},
                          f, indent=1)
        else:
            rows.append(Row("trace kept for tests/data", os.path.getsize(src), f"<= {KEEP_LIMIT}", True,
                            "too large, not kept", False))
    return rows, stats, facts


def fmt(v):
    """Numbers with thousands separators, the rest as text."""
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def check_all(out, repo, names=None):
    """Check every run under OUT/pytorch; write summary.md. Returns (all passed, text)."""
    base = os.path.join(out, "pytorch")
    keep = os.path.join(base, "keep")
    text, md = [], ["# PyTorch scenarios under vramtrace", ""]
    env = ""
    all_ok = True
    overview = ["| scenario | mode | result | failed checks |", "|---|---|---|---|"]
    for sc in SCENARIOS:
        if names and sc.name not in names:
            continue
        default_stats = default_facts = None
        for mode in RUN_MODES:
            if mode == UNTRACED:
                rows, stats = check_untraced(base, sc, default_stats, default_facts)
            else:
                rows, stats, facts = check_run(base, sc, mode, repo, keep, default_stats)
                if mode == "default":
                    default_stats, default_facts = stats, facts
            if stats and not env:
                env = (f"torch {stats.get('torch')} (CUDA {stats.get('cuda')}), "
                       f"{(stats.get('device') or {}).get('name')}")
            ok = not any(r.failed() for r in rows)
            all_ok &= ok
            overview.append(f"| {sc.name} | {mode} | {'PASS' if ok else 'FAIL'} | "
                            + ("; ".join(r.what for r in rows if r.failed()) or "-") + " |")
            secs = stats.get("seconds") if stats else None
            head = f"{sc.name} [{mode}{' ' + ' '.join(sc.args) if sc.args else ''}]: {'PASS' if ok else 'FAIL'}" + \
                (f" ({secs} s)" if secs is not None else "")
            text.append(head)
            md += [f"## {sc.name}, {mode} mode: {'PASS' if ok else 'FAIL'}", "",
                   f"`{' '.join((os.path.join(SCRIPT_DIR, sc.script),) + sc.args)}`"
                   + (f", analyzed with `{' '.join(sc.analyze)}`" if sc.analyze else "")
                   + (f", ran {secs} s" if secs is not None else ""), "",
                   "| check | trace / vramtrace | PyTorch / expected | verdict |", "|---|---|---|---|"]
            for r in rows:
                mark = "" if r.ok or not r.required else "  <-- FAIL"
                text.append(f"  {r.what:<72} {fmt(r.trace):>22} {fmt(r.torch):>22}  {r.verdict}{mark}")
                cell = lambda v: fmt(v).replace("|", "\\|")
                md.append(f"| {cell(r.what)} | {cell(r.trace)} | {cell(r.torch)} | {cell(r.verdict)}"
                          f"{'' if r.required else ' (not required)'} |")
            md.append("")
    md[1:1] = [f"Environment: {env}." if env else "Environment: no stats found.",
               f"Overall: {'PASS' if all_ok else 'FAIL'}.", ""] + overview + [""]
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    text.append(f"overall: {'PASS' if all_ok else 'FAIL'} (summary: {os.path.join(base, 'summary.md')})")
    return all_ok, "\n".join(text)


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        list_runs()
        return 0
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.stderr.write("usage: pytorch_check.py --list | pytorch_check.py OUT [SCENARIO...]\n")
        return 2
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ok, text = check_all(argv[1], repo, set(argv[2:]) or None)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

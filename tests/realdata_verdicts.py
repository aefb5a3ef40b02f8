#!/usr/bin/env python3
"""The real files analyzed: each gets the verdict a PyTorch expert would give (docs/import.md).

Usage: realdata_verdicts.py VRAMTRACE REAL_DATA_DIR       the files of shared/real-data; exits 77 (skipped)
                                                          when the folder or a file is absent
       realdata_verdicts.py --shipped VRAMTRACE DIR       the files shipped in tests/data/real; a missing
                                                          file is a failure, never a skip
"""
import json
import os
import subprocess
import sys

SKIP = 77
VT = DATA = None  # the vramtrace binary and the folder of the files, set by main


def analyze(vt, path):
    """The JSON report of one file (its first trace), and its findings."""
    out = subprocess.run([vt, "analyze", "--format", "json", path], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise AssertionError(f"{path}: analyze exited {out.returncode}: {out.stderr.strip()}")
    rep = json.loads(out.stdout)
    return rep["traces"][0], rep["findings"]


def text(vt, path, *extra):
    """The text report of the given files."""
    out = subprocess.run([vt, "analyze", *extra, path], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise AssertionError(f"{path}: analyze exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def info_json(vt, path):
    """The first trace of `info --json` on one file."""
    out = subprocess.run([vt, "info", "--json", path], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise AssertionError(f"{path}: info exited {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)["traces"][0]


def serious(findings):
    """Findings at low or above, as (kind, severity, title)."""
    return [(f["kind"], f["severity"], f["title"]) for f in findings if f["severity"] != "info"]


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def no_guessed_cause(name, trace):
    """The 'done before tracing started' guess is for the tracer's own traces, never for an import."""
    check(not any("before tracing started" in n for n in trace["notes"]), f"{name}: wrong note {trace['notes']}")


def niu(trace, findings):
    # three optimizer steps: weights, Adam's moments, the last step's gradients and outputs live at the dump
    check(serious(findings) == [], f"no finding at low or above expected, got {serious(findings)}")
    state = [f for f in findings if f["kind"] == "leak"]
    check(len(state) == 1 and "state" in state[0]["title"] and "optimizer.py:5" in state[0]["site"],
          f"one state finding at optimizer.py expected, got {[(f['title'], f['site']) for f in state]}")
    # its optimizer is its own (NIUAdam, a torch.optim.Optimizer subclass): the state's evidence says the wrapper decided,
    # and that parameters its step writes anew (optimizer.py:64, p.data = ...) cannot be told from state
    opt = [b for d in trace["devices"] for b in d.get("breakdown") or [] if b["category"] == "optimizer_state"]
    check(len(opt) == 1 and "an optimizer the program defines" in opt[0]["evidence"]
          and "torch/optim/)" not in opt[0]["evidence"], f"the program's own optimizer named expected, got {opt}")
    # a snapshot ends at its dump, not at the process's exit
    check("live at the snapshot's dump" in state[0]["title"] and "at exit" not in state[0]["title"] + state[0]["evidence"],
          f"the dump named as the end expected, got {state[0]['title']}")
    check(not any("baseline rises" in f["title"] for f in findings), "warm-up taken for growth")
    # its sites show an optimizer: the state's fix may speak of gradients
    check("zero_grad" in state[0]["fix"], f"training advice expected, got {state[0]['fix']}")
    # the three Optimizer.step#NIUAdam.step ranges end its three iterations: one training phase
    check(trace["iterations"] == 3, f"3 iterations (its optimizer steps) expected, got {trace['iterations']}")
    kinds = [(p["kind"], p["iterations"]) for p in trace["phases"]]
    check(kinds == [("training", 3)], f"one training phase of 3 steps expected, got {kinds}")
    check("rose and fell 0 times" not in state[0]["evidence"] and "no iteration is marked" not in state[0]["evidence"],
          f"its marked steps ignored: {state[0]['evidence']}")


def silmont(trace, findings):
    # an attention benchmark: its 512 MiB score matrices are cached segments; nothing leaks
    check(serious(findings) == [], f"no finding at low or above expected, got {serious(findings)}")
    check(all(f["kind"] == "leak" and "state" in f["title"] for f in findings), f"got {findings}")
    # no range marks its steps: the cycles of its tensor memory are its iterations
    check(trace["iterations"] >= 2, f"iterations from its tensor memory's cycles expected, got {trace['iterations']}")
    check(not any("rose and fell 0 times" in f["evidence"] for f in findings), f"its cycles ignored: {findings}")
    # fragmentation seen at the peak: free pieces beside live blocks in its segments, too small for the request
    saves = [s for d in trace["devices"] if d.get("fit") for s in d["fit"]["savings"] if s["key"] == "expandable_segments"]
    check(len(saves) == 1 and "lay free in" in saves[0]["assumption"], f"an expandable saving from holes expected, got {saves}")


def flexgen(trace, findings):
    # dumped at an OOM without history: what was live, by site; no OOM finding without an OOM event
    check(serious(findings) == [], f"no finding at low or above expected, got {serious(findings)}")
    check(not any(f["kind"] == "oom" for f in findings), "an OOM claimed without an OOM event")
    live = [f for f in findings if f["kind"] == "leak" and "allocation times unknown" in f["title"]]
    check(len(live) == 1 and "pytorch_backend.py" in live[0]["site"] and live[0]["bytes"] > 11 * 2**30,
          f"what was live at the dump by site expected, got {[(f['title'], f['site']) for f in findings]}")
    check(trace["lifetimes"]["allocations"] == 176, f"176 segments expected, got {trace['lifetimes']}")
    check(not any("runtime or driver itself" in n for n in trace["notes"]), "imported segments called the runtime's")
    # no times: unknown, never 0; no history: said once, not a full ring buffer; inference: no training advice
    check(trace["duration_ns"] is None and trace["start_ns"] is None, f"unknown times expected, got {trace}")
    check(all(d["peak_ts"] is None for d in trace["devices"]), "a peak time claimed without times")
    check(not any("ring buffer" in n for n in trace["notes"]), f"got {trace['notes']}")
    check(any(n.startswith("no allocation history") for n in trace["notes"]), f"got {trace['notes']}")
    check(not any("zero_grad" in f["fix"] or "optimizer" in f["fix"] for f in live), "training advice for inference")


def hta(trace, findings):
    # a healthy DDP step: 13,385 allocations paired by address, all freed
    check(serious(findings) == [], f"no finding at low or above expected, got {serious(findings)}")
    check(trace["lifetimes"]["allocations"] == 13385, f"13385 allocations expected, got {trace['lifetimes']}")
    # the headline peak is the process's (torch.profiler's Total Reserved 11.9 GiB, Total Allocated 6.17 GiB),
    # the window's own 2.36 GiB beside it
    peak = max(d["peak_bytes"] for d in trace["devices"] if d["id"] >= 0)
    check(peak == 12782141440, f"the process's reserved peak of 11.9 GiB expected, got {peak}")
    dev = [d for d in trace["peaks"] if d["device"] == 1][0]
    check(dev["process_allocated_bytes"] == 6629508096 and dev["process_reserved_bytes"] == 12782141440
          and 2 * 2**30 < dev["allocated_bytes"] < 3 * 2**30, f"the process's and the window's peaks expected, got {dev}")
    # sites from the CPU operators around each [memory] event: the compiled backward's matrix multiplies
    groups = [g for d in trace["devices"] if d["id"] >= 0 for g in d["live_at_peak_groups"]]
    check(groups and groups[0]["site"].startswith("aten::mm in CompiledFunctionBackward (backward pass"), f"got {groups[:3]}")
    check(not any("not recorded (allocations" in g["site"] for g in groups), f"sites not recorded: {groups}")
    # the profiler's reserved-not-allocated is no sign of fragmentation (no segments, no OOM): no expandable saving
    saves = [s["key"] for d in trace["devices"] if d.get("fit") for s in d["fit"]["savings"]]
    check("expandable_segments" not in saves, f"an expandable saving without fragmentation seen: {saves}")
    # the window's peak leaves out the 3.84 GiB allocated before the profiler started: a note says so
    check(any(n.startswith("device 1: 3.82 GiB was allocated before the profiler's window began") and
              n.endswith("Total Allocated peaks at 6.17 GiB") for n in trace["notes"]), f"got {trace['notes']}")


def kineto(trace, findings):
    # ResNet-50 fed from pageable memory: the copies are the one finding; no addresses, so no lifetimes
    kinds = [(f["kind"], f["severity"]) for f in findings]
    check(any(k == "transfer" for k, _ in kinds) and all(k == "transfer" for k, _ in kinds), f"got {kinds}")
    check(any("torch.profiler trace records no allocation" in n and "the peak is only the running sum" in n
              for n in trace["notes"]), f"got {trace['notes']}")
    check(trace["lifetimes"]["allocations"] is None, f"allocations unknown (null) expected, got {trace['lifetimes']}")
    # no lifetime: the phase's peak is the importer's running sum of Bytes where it peaked inside the phase
    check(trace["phases"] and [p["peak_bytes"] for p in trace["phases"]] == [2791636480],
          f"the running sum's 2.60 GiB expected as the phase's peak, got {[p['peak_bytes'] for p in trace['phases']]}")


def fuser(trace, findings):
    # a benchmark copying its test tensor once from pageable memory: negligible; no memory events in the export
    check(serious(findings) == [], f"no finding at low or above expected, got {serious(findings)}")
    check(any("Nsight Systems export holds no GPU memory events" in n for n in trace["notes"]), f"got {trace['notes']}")


def param_resnet(trace, findings):
    # ResNet training fed from pageable memory, recorded without profile_memory: 30 batches of 73.5 MiB
    # (77,070,336 B) plus their 1 KiB labels and one 4 B copy; copies, not memory, are the finding
    check([(f["kind"], f["severity"]) for f in findings] == [("transfer", "medium")], f"got {serious(findings)}")
    htod = trace["transfers"]["htod"]
    check(htod["pageable_count"] == 61 and htod["pageable_bytes"] == 2312140804, f"got {htod}")
    check(findings[0]["count"] >= 58, f"the copies after the first kernel expected, got {findings[0]['count']}")
    check(trace["lifetimes"]["allocations"] is None, f"allocations unknown (null) expected, got {trace['lifetimes']}")
    check(trace["pid"] == "23442", f"pid 23442 (its CPU operators') expected, got {trace['pid']}")
    kinds = [(p["kind"], p["iterations"]) for p in trace["phases"]]
    check(kinds == [("training", 30)], f"one training phase of 30 SGD steps expected, got {kinds}")
    check(any("torch.profiler trace has no [memory] events (recorded without profile_memory=True)" in n for n in trace["notes"]), f"got {trace['notes']}")


def param_dlrm(trace, findings):
    # one DLRM training step of rank 0 of 8: a few KiB copied, 8 small pageable copies; nothing to find
    check(findings == [], f"no finding expected, got {serious(findings)}")
    check(trace["rank"] == "0" and trace["pid"] == "59811", f"rank 0, pid 59811 expected, got {trace['rank']}")
    t = trace["transfers"]
    check(t["htod"]["count"] == 13 and t["htod"]["pageable_count"] == 8 and t["htod"]["pageable_bytes"] == 11520,
          f"13 host-to-device copies (8 pageable, 11,520 B) expected, got {t['htod']}")
    check(t["dtoh"]["pageable_count"] == 2 and t["dtoh"]["pageable_bytes"] == 216, f"got {t['dtoh']}")
    kinds = [(p["kind"], p["iterations"]) for p in trace["phases"]]
    check(kinds == [("training", 1)], f"one training step (ProfilerStep#10) expected, got {kinds}")
    check(any("torch.profiler trace has no [memory] events (recorded without profile_memory=True)" in n for n in trace["notes"]), f"got {trace['notes']}")


def fuser_matmul(trace, findings):
    # an nvFuser C++ test (test_matmul) on H200 under Nsight Systems 2024.6: one 1-byte readback, no sizes
    check(findings == [], f"no finding expected, got {serious(findings)}")
    check(trace["pid"] == "30571", f"pid 30571 expected, got {trace['pid']}")
    t = trace["transfers"]
    check(t["dtoh"]["count"] == 1 and t["dtoh"]["bytes"] == 1 and t["dtoh"]["pageable_count"] == 0, f"got {t}")
    check(t["htod"]["count"] == 0, f"no host-to-device copy expected, got {t['htod']}")
    check(trace["phases"] == [], f"no phase expected, got {trace['phases']}")
    check(any("Nsight Systems export holds no GPU memory events" in n for n in trace["notes"]), f"got {trace['notes']}")
    check(trace["lifetimes"]["allocations"] is None and trace["lifetimes"]["freed"] is None,
          f"allocations and frees unknown (null) expected, got {trace['lifetimes']}")
    check(not any("no kernel buffer uses recorded" in n for n in trace["notes"]),
          f"no note on the uses of allocations the file does not hold expected, got {trace['notes']}")


def tracelens_qwen(trace, findings):
    # one inference_mode step (ProfilerStep#6) of Qwen1.5-0.5B-Chat on H100 with profile_memory: every
    # allocation of the step freed; its own peak 1.03 GiB on top of the weights allocated before the
    # profiler started (the trace's Total Allocated reaches 1.95 GiB); one 1-byte copy to pinned memory
    check(findings == [], f"no finding expected, got {serious(findings)}")
    lt = trace["lifetimes"]
    check(lt["allocations"] == 1125 and lt["freed"] == 1125 and lt["live_at_end"] == 0, f"got {lt}")
    check(lt["free_unknown"] == 0 and lt["double_free"] == 0, f"got {lt}")
    # the headline is the process's reserved peak (Total Reserved); the step's own 1.03 GiB allocated beside it
    dev = [d for d in trace["peaks"] if d["device"] == 0][0]
    check(1103766016 <= dev["allocated_bytes"] <= 1.05 * 2**30 and dev["process_allocated_bytes"] <= 2088508416
          and dev["headline_bytes"] == dev["process_reserved_bytes"] >= dev["process_allocated_bytes"],
          f"the step's 1.03 GiB, the process's 1.95 GiB allocated and its reserved peak expected, got {dev}")
    check(all(p["kind"] != "training" for p in trace["phases"]), f"inference taken for training: {trace['phases']}")
    # sites from the Python functions (with_stack) around each [memory] event: the model's lines
    groups = [g for d in trace["devices"] if d["id"] >= 0 for g in d["live_at_peak_groups"]]
    check(groups and all("modeling_qwen2.py:" in g["site"] for g in groups), f"got {[g['site'] for g in groups]}")
    # the 939 MiB of weights allocated before the window: a note gives them and the process's peak
    check(any(n.startswith("device 0: 939 MiB was allocated before the profiler's window began") and
              n.endswith("Total Allocated peaks at 1.95 GiB") for n in trace["notes"]), f"got {trace['notes']}")
    check(trace["pid"] == "25286", f"pid 25286 expected, got {trace['pid']}")
    # baseTimeNanoseconds follows traceEvents in the file: the start is still 2025-07-18 11:51:01 UTC
    wall = info_json(VT, os.path.join(DATA, "tracelens_h100_qwen05b_inference_memory.json.gz"))["time"]["wall_start_ns"]
    check(1752839461 * 10**9 <= wall < 1752839462 * 10**9, f"a start at 2025-07-18 11:51:01 UTC expected, got {wall}")


FILES = [
    ("cs336_niu_fwd_bwd_200.pickle", niu),
    ("cs336_silmont2000_mem_snapshot_small.pickle", silmont),
    ("flexgen_yiyi_oom_snapshot_v1format.pickle", flexgen),
    ("hta_df_index_resolver_v100_ddp_memory.json.gz", hta),
    ("kineto_tbplugin_resnet50_v100_memory_noaddr.pt.trace.json.gz", kineto),
    ("fuser_h200_pytorch_xentropy_benchmark_nsys2025.sqlite", fuser),
]

# Shipped with the sources (tests/data/real, provenance and licenses in its README): never skipped.
SHIPPED = [
    ("param_resnet_2080ti_noprofmem.json.gz", param_resnet),
    ("param_dlrm_v100_rank0_step.pt.trace.json", param_dlrm),
    ("fuser_h200_test_matmul_nsys2024.sqlite", fuser_matmul),
    ("tracelens_h100_qwen05b_inference_memory.json.gz", tracelens_qwen),
]


def text_checks(vt, data):
    """What the text reports say of the imported files: unknown is unknown, rows named as what they are."""
    p = lambda n: os.path.join(data, n)
    z = text(vt, p("flexgen_yiyi_oom_snapshot_v1format.pickle"))
    check("duration unknown;" in z and "at an unknown time" in z and " 0 ns" not in z and " at 0 s" not in z, z)
    check("level: segments and tensors" in z, z)
    z = text(vt, p("kineto_tbplugin_resnet50_v100_memory_noaddr.pt.trace.json.gz"))
    check("peak 2.60 GiB (running sum)" in z and "peak 2.60 GiB allocated (the running sum" in z and "peak 0 B" not in z, z)
    check("allocations and frees unknown" in " ".join(z.split()) and "0 allocations" not in z, z)
    z = text(vt, p("hta_df_index_resolver_v100_ddp_memory.json.gz"))
    check("level: tensors (the allocator's blocks)" in z, z)
    check("peak 11.9 GiB reserved, 6.17 GiB allocated (the process's peaks" in " ".join(z.split()), z)
    z = text(vt, p("cs336_niu_fwd_bwd_200.pickle"))
    zz = " ".join(z.split())
    check("live at the snapshot's dump (1.29 GiB)" in zz and "every free matched its allocation" in zz and
          "frees missing" not in zz and "live at exit" not in zz, z)
    # info says the blocks inside the segments as analyze does (it said only the 83 segments)
    zi = subprocess.run([vt, "info", p("cs336_niu_fwd_bwd_200.pickle")], capture_output=True, text=True,
                        timeout=600).stdout
    check("the allocator's blocks (tensors): 3907 allocated, 162 live at the snapshot's dump (439 MiB)" in zi and
          "the allocator's blocks (tensors): 3907 allocated, 162 live at the snapshot's dump (439 MiB)" in zz, zi)
    z = text(vt, p("cs336_silmont2000_mem_snapshot_small.pickle"))
    check("iterations from the cycles of its tensor memory" in z, z)
    silmont_cut(vt, data)
    # one file given twice is one process: said once, counted once
    out = subprocess.run([vt, "analyze", "--format", "json", p("cs336_niu_fwd_bwd_200.pickle"),
                          p("cs336_niu_fwd_bwd_200.pickle")], capture_output=True, text=True, timeout=600)
    rep = json.loads(out.stdout)
    check(len(rep["traces"]) == 1 and rep["summary"]["traces"] == 1, f"one process expected, got {rep['summary']}")
    check(any("the same file, analyzed and counted once" in n for n in rep["traces"][0]["notes"]),
          f"got {rep['traces'][0]['notes']}")


def silmont_cut(vt, data):
    """The silmont snapshot with the first half of its history lost (a full ring buffer): the segments and blocks
    allocated before the cut stand from its start, so the reserved peak holds the tensors live then, not the
    state at the dump (before: the peak at the last event, 30.3 MiB of tensors, 99 % allocator cache)."""
    import pickle
    import tempfile
    with open(os.path.join(data, "cs336_silmont2000_mem_snapshot_small.pickle"), "rb") as f:
        snap = pickle.load(f)
    ev = snap["device_traces"][0]
    snap["device_traces"][0] = ev[len(ev) // 2:]
    with tempfile.TemporaryDirectory(prefix="vt-realcut-") as tmp:
        cut = os.path.join(tmp, "silmont_cut.pickle")
        with open(cut, "wb") as f:
            pickle.dump(snap, f, protocol=2)
        trace, _ = analyze(vt, cut)
        whole, _ = analyze(vt, os.path.join(data, "cs336_silmont2000_mem_snapshot_small.pickle"))
    d, w = trace["devices"][0], whole["devices"][0]
    pk = trace["peaks"][0]
    check(d["peak_bytes"] == w["peak_bytes"], f"the whole history's reserved peak expected, got {d['peak_bytes']}")
    check(d["tensor_at_peak_bytes"] >= 3 << 29 and pk["reserved_at_ns"] < trace["duration_ns"] // 2,
          f"the reserved peak with 1.5 GiB of tensors before the end expected, got {d['tensor_at_peak_bytes']} at "
          f"{pk['reserved_at_ns']} of {trace['duration_ns']}")
    cache = sum(p["bytes"] for p in d["breakdown"] if p["category"] == "allocator_cache")
    check(cache * 100 < d["peak_bytes"] * 60, f"allocator cache under 60 % expected, got {cache} of {d['peak_bytes']}")
    check(any("stand from the start of the trace" in n for n in trace["notes"]), f"got {trace['notes']}")


def shipped_text_checks(vt, data):
    """What the text reports say of the shipped files: a marked inference step is said, not 'none found' alone."""
    z = text(vt, os.path.join(data, "tracelens_h100_qwen05b_inference_memory.json.gz"))
    check("phases: none found: 1 iteration marked, with no backward/optimizer kernels in it" in z, z)


def main():
    args = sys.argv[1:]
    shipped = args[:1] == ["--shipped"]
    if shipped:
        args = args[1:]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    vt, data = args
    global VT, DATA
    VT, DATA = vt, data
    files = SHIPPED if shipped else FILES
    present = data and os.path.isdir(data) and all(os.path.exists(os.path.join(data, n)) for n, _ in files)
    if not present and not shipped:
        print(f"skipped: the real files are not in '{data}': configure with -DVT_REAL_DATA=DIR (README.md, Tests)")
        return SKIP
    if os.environ.get("VT_HAVE_ZLIB") == "0":
        print("skipped: this vramtrace was built without zlib, and some of the real files are gzip'd")
        return SKIP
    failed = 0
    for name, judge in files:
        try:
            trace, findings = analyze(vt, os.path.join(data, name))
            no_guessed_cause(name, trace)
            judge(trace, findings)
            print(f"ok     {name}")
        except AssertionError as e:
            print(f"FAIL   {name}: {e}")
            failed += 1
    try:
        (shipped_text_checks if shipped else text_checks)(vt, data)
        print("ok     text reports")
    except AssertionError as e:
        print(f"FAIL   text reports: {e}")
        failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

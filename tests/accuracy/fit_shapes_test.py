#!/usr/bin/env python3
"""Check that fitgen's jobs look as the tracer records real ones, and that the breakdown reads them right.

fit_shapes_test.py FITGEN VRAMTRACE

- Gradients: a parameter's gradient is made by AccumulateGrad on the autograd engine's thread, as
  PyTorch's own snapshots show it (clone_obey_contract under AccumulateGrad::accumulateGrad and
  AccumulateGrad::apply): every gradient's stack has the frame, and the breakdown's gradients are
  the parameters' bytes (mlp_tensor_16g: Adam, gradients live at the peak).
- Expandable segments (cnn_exp_24g, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): the
  allocator's memory is cuMemCreate'd pages mapped with cuMemMap (2 MiB small, 20 MiB large), no
  cudaMalloc'd segment; the breakdown is at segment level, says it counts pages, and sums to the
  peak; what would fit is a range.
- Expandable segments with PyTorch's allocation history (cnn_exp_24g_hist at its boundary, where
  pages are unmapped under pressure): the snapshot records the mapping as PyTorch does
  (segment_map and segment_unmap of the ranges the tracer's cuMemMap/cuMemUnmap cover, no
  segment_alloc; every block inside pages mapped when it was made; at the dump one segment per
  contiguous mapped range, is_expandable, small or large by pool, and the setting in
  allocator_settings); its import says so (meta pytorch.allocator.expandable_segments, a vmm_map
  row per segment_map); analyze merges it and replays the blocks through the expandable model:
  what would fit is a point, and the allocator cache's evidence counts pages, not segments. Its
  unmaps release the pages they cover (often inside a mapped range): its reserved peak analyzed
  alone is that of the snapshot merged into its trace within 1 %, and fits the 24 GiB device.
  The snapshot analyzed alone (below the boundary, reserved flat from its peak to the end) counts
  its mapped pages as the segments and its blocks as the tensors inside: the tensors at the reserved
  peak are those of the snapshot merged into its trace, the tensors' own peak. Its history cut as a
  full ring buffer cuts it (the first half of its events lost, later segment_map events kept): the
  import still maps every page of the dump's ranges (those mapped before the first event with unknown
  times), so its reserved peak is the whole history's and not below what its tensors allocate.
Exits 0 when every check holds, 1 otherwise (each failure printed), 2 on bad arguments.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL: " + what)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print("fit_shapes_test: %s failed (%d): %s" % (args[0], p.returncode, p.stderr.strip()))
        sys.exit(1)
    return p.stdout


def job(fitgen, out, case, batch):
    run([fitgen, "--only", case, "--at", str(batch), out])
    db = os.path.join(out, case, "rank0.db")
    check(os.path.exists(db), "fitgen wrote no trace for %s" % case)
    return db if os.path.exists(db) else None


def device(vramtrace, db, *extra):
    rep = json.loads(run([vramtrace, "analyze", "--format", "json"] + list(extra) + [db]))
    return [d for d in rep["traces"][0]["devices"] if d["id"] >= 0][0]


def stacks_with(db, pattern):
    c = sqlite3.connect(db)
    rows = c.execute("SELECT DISTINCT f.stack_id FROM frame f JOIN string s ON s.id = f.function_id "
                     "WHERE s.value LIKE ?", (pattern,)).fetchall()
    c.close()
    return {r[0] for r in rows}


def gradients(fitgen, vramtrace, out):
    db = job(fitgen, out, "mlp_tensor_16g", 64)
    if not db:
        return
    acc = stacks_with(db, "%AccumulateGrad%")
    c = sqlite3.connect(db)
    # the engine's thread allocates gradients of activations too: those of a parameter's size are gradients
    rows = c.execute("SELECT bytes, stack_id FROM tensor_event WHERE op = 1").fetchall()
    rows = rows or c.execute("SELECT bytes, stack_id FROM memory_event WHERE op = 1 AND api IS NOT NULL").fetchall()
    c.close()
    grads = [b for b, s in rows if s in acc]
    check(len(acc) > 0, "gradients: no stack with an AccumulateGrad frame")
    d = device(vramtrace, db)
    parts = {x["category"]: x["bytes"] for x in d["breakdown"]}
    check(parts.get("gradients") == parts.get("parameters"),
          "gradients: the breakdown's gradients %s are not the parameters' %s" % (parts.get("gradients"),
                                                                                  parts.get("parameters")))
    # zero_grad(set_to_none=True) after each of the 3 steps: each backward pass makes them anew
    check(sum(grads) == 3 * (parts.get("parameters") or -1),
          "gradients: AccumulateGrad allocations %d bytes, parameters %s" % (sum(grads), parts.get("parameters")))


def expandable(fitgen, vramtrace, out):
    db = job(fitgen, out, "cnn_exp_24g", 40)
    if not db:
        return
    c = sqlite3.connect(db)
    ops = dict(c.execute("SELECT op, count(*) FROM memory_event GROUP BY op").fetchall())
    sizes = {r[0] for r in c.execute("SELECT DISTINCT bytes FROM memory_event WHERE op = 3 AND stack_id IN "
                                     "(SELECT f.stack_id FROM frame f JOIN string s ON s.id = f.function_id "
                                     "WHERE s.value LIKE '%CUDACachingAllocator%')")}
    conf = c.execute("SELECT value FROM meta WHERE key = 'env.PYTORCH_CUDA_ALLOC_CONF'").fetchone()
    c.close()
    check(conf and "expandable_segments:True" in conf[0], "expandable: no allocator setting in meta")
    check(ops.get(1, 0) == 1, "expandable: %d cudaMalloc'd allocations (the runtime's one only)" % ops.get(1, 0))
    check(ops.get(3, 0) > 0 and ops.get(3) == ops.get(5), "expandable: creates %s, maps %s" % (ops.get(3), ops.get(5)))
    check(sizes and sizes <= {2 << 20, 20 << 20}, "expandable: page sizes %s" % sorted(sizes))
    d = device(vramtrace, db, "--batch", "40")
    check(d["breakdown_segment_level"] is True, "expandable: breakdown not at segment level")
    check(sum(x["bytes"] for x in d["breakdown"]) == d["breakdown_bytes"], "expandable: parts do not sum")
    check(d["breakdown_bytes"] == d["peak_bytes"], "expandable: breakdown %s, peak %s" % (d["breakdown_bytes"],
                                                                                        d["peak_bytes"]))
    check(d["fit"].get("max_is_lower_bound") is True, "expandable: fit not a range")
    text = run([vramtrace, "analyze", "--batch", "40", db])
    check("expandable segments: each page" in " ".join(text.split()), "expandable: the text does not say pages")


def expandable_history(fitgen, vramtrace, out):
    import glob
    import pickle
    batch = 228  # the job's boundary: pages are unmapped before requests would fail
    db = job(fitgen, out, "cnn_exp_24g_hist", batch)
    snaps = glob.glob(os.path.join(out, "cnn_exp_24g_hist", "vramtrace-*.snapshot.pickle"))
    check(len(snaps) == 1, "expandable history: %d snapshots beside the trace" % len(snaps))
    if not db or len(snaps) != 1:
        return
    with open(snaps[0], "rb") as f:
        snap = pickle.load(f)
    ev = snap["device_traces"][0]
    acts = {}
    for e in ev:
        acts[e["action"]] = acts.get(e["action"], 0) + 1
    check(acts.get("segment_map", 0) > 0 and acts.get("segment_unmap", 0) > 0 and "segment_alloc" not in acts,
          "expandable history: actions %s" % sorted(acts.items()))
    c = sqlite3.connect(db)
    # the job has no NCCL: every cuMemMap/cuMemUnmap is the allocator's
    traced = c.execute("SELECT op, address, bytes FROM memory_event WHERE op IN (5, 6) ORDER BY t, rowid").fetchall()
    c.close()
    page = {a: n for _, a, n in traced}  # each traced page's size: 2 MiB (small pool) or 20 MiB (large)
    # the history's ranges cover the tracer's pages, mapped and unmapped in the same order
    pages, hist = set(), []
    for e in ev:
        if e["action"] in ("segment_map", "segment_unmap"):
            a = e["addr"]
            while a < e["addr"] + e["size"]:
                hist.append((5 if e["action"] == "segment_map" else 6, a))
                for b in range(a, a + page.get(a, 2 << 20), 2 << 20):
                    (pages.add if e["action"] == "segment_map" else pages.discard)(b)
                a += page.get(a, 2 << 20)
        elif e["action"] == "alloc":
            first, last = e["addr"] // (2 << 20) * (2 << 20), (e["addr"] + e["size"] - 1) // (2 << 20) * (2 << 20)
            if not all(a in pages for a in range(first, last + 1, 2 << 20)):
                check(False, "expandable history: block at %#x made outside mapped pages" % e["addr"])
                break
    check(hist == [(op, a) for op, a, _ in traced],
          "expandable history: %d pages in segment_map/unmap, %d cuMemMap/cuMemUnmap traced" % (len(hist), len(traced)))
    dumped = set()
    for s in snap["segments"]:
        check(s["is_expandable"] is True, "expandable history: a dumped segment not expandable")
        for a in range(s["address"], s["address"] + s["total_size"], 2 << 20):
            dumped.add(a)
    check(dumped == pages, "expandable history: dumped segments cover %d MiB, mapped %d MiB" % (2 * len(dumped),
                                                                                             2 * len(pages)))
    spans = sorted((s["address"], s["address"] + s["total_size"]) for s in snap["segments"])
    check(all(a[1] < b[0] for a, b in zip(spans, spans[1:])), "expandable history: dumped segments touch")
    check(snap["allocator_settings"].get("expandable_segments") is True, "expandable history: no setting")
    imp = os.path.join(out, "hist.db")
    run([vramtrace, "import", "-o", imp, snaps[0]])
    c = sqlite3.connect(imp)
    conf = c.execute("SELECT value FROM meta WHERE key = 'pytorch.allocator.expandable_segments'").fetchone()
    maps = c.execute("SELECT count(*) FROM memory_event WHERE op = 5 AND t IS NOT NULL").fetchone()[0]
    c.close()
    check(conf and conf[0] in ("1", "True", "true"), "expandable history: import meta %s" % (conf,))
    check(maps == acts.get("segment_map"), "expandable history: %d vmm_map rows, %s segment_map" % (maps,
                                                                                               acts.get("segment_map")))
    d = device(vramtrace, db, "--batch", str(batch))
    check(d["fit"].get("max_is_lower_bound") is not True, "expandable history: fit not a point")
    text = " ".join(run([vramtrace, "analyze", "--batch", str(batch), db]).split())
    check("replayed through PyTorch's caching allocator with expandable_segments:True" in text,
          "expandable history: not replayed through the expandable model")
    check("expandable segments' pages reserved by the caching allocator" in text,
          "expandable history: the allocator cache's evidence does not say pages")
    # pages are unmapped from inside mapped ranges: alone, each unmap releases exactly its pages, as the
    # tracer's cuMemUnmap rows do merged (the snapshot's reserved peak fits the 24 GiB device)
    alone, merged = device(vramtrace, snaps[0]), device(vramtrace, db, "--snapshot", snaps[0])
    a, m = alone.get("peak_bytes"), merged.get("peak_bytes")
    check(a is not None and m is not None and abs(a - m) <= m // 100 and a <= 24 << 30,
          "expandable history: reserved peak %s alone, %s merged" % (a, m))


def expandable_history_alone(fitgen, vramtrace, out):
    """The snapshot alone and merged into its trace give the same tensors at the reserved peak."""
    import glob
    batch = 114  # half the boundary: no page is unmapped, reserved stays at its peak from 37 ms to the end
    case = "cnn_exp_24g_hist"
    db = job(fitgen, os.path.join(out, "alone"), case, batch)
    snaps = glob.glob(os.path.join(out, "alone", case, "vramtrace-*.snapshot.pickle"))
    if not db or len(snaps) != 1:
        check(False, "expandable history alone: no trace or snapshot")
        return
    alone, merged = device(vramtrace, snaps[0]), device(vramtrace, db, "--snapshot", snaps[0])
    # the snapshot's mapped pages are CUDA memory (segments), its blocks the tensors inside: the
    # figure is the most tensor bytes live on the plateau, the tensors' own peak here
    a, m = alone.get("tensor_at_peak_bytes"), merged.get("tensor_at_peak_bytes")
    check(a is not None and m is not None and abs(a - m) <= m // 100,
          "expandable history alone: tensors at the reserved peak %s alone, %s merged" % (a, m))
    check(a == alone.get("tensor_peak_bytes"),
          "expandable history alone: tensors at the reserved peak %s, tensor peak %s on a flat plateau"
          % (a, alone.get("tensor_peak_bytes")))
    # the history cut by a full ring buffer: the first half of its events lost, the later maps kept
    import pickle
    with open(snaps[0], "rb") as f:
        snap = pickle.load(f)
    ev = snap["device_traces"][0]
    maps = [i for i, e in enumerate(ev) if e["action"] == "segment_map"]
    snap["device_traces"][0] = ev[maps[len(maps) // 2]:]
    cut = os.path.join(out, "alone", "cut.snapshot.pickle")
    with open(cut, "wb") as f:
        pickle.dump(snap, f, protocol=2)
    imp = os.path.join(out, "alone", "cut.db")
    run([vramtrace, "import", "-q", "-o", imp, cut])
    c = sqlite3.connect(imp)
    mapped = c.execute("SELECT sum(CASE op WHEN 5 THEN bytes ELSE -bytes END) FROM memory_event"
                       " WHERE op IN (5, 6)").fetchone()[0]
    c.close()
    dumped = sum(x["total_size"] for x in snap["segments"])
    check(mapped == dumped, "expandable history cut: %s bytes mapped at the end, the dump's ranges %d" % (mapped, dumped))
    d = device(vramtrace, imp)
    check(d.get("peak_bytes") == alone.get("peak_bytes") and d.get("tensor_peak_bytes", 0) <= d.get("peak_bytes", 0),
          "expandable history cut: reserved peak %s (whole history %s), tensor peak %s"
          % (d.get("peak_bytes"), alone.get("peak_bytes"), d.get("tensor_peak_bytes")))
    # the pages mapped before the cut stand from its start: the plateau holds the tensors' peak, at the moment the
    # whole history has it (they stood at the end before: "0 B allocated by tensors" at the last event)
    check(d.get("tensor_at_peak_bytes", 0) > 0 and d.get("tensor_at_peak_bytes") == d.get("tensor_peak_bytes") and
          d.get("breakdown_ts") == alone.get("breakdown_ts"),
          "expandable history cut: tensors at the reserved peak %s (tensor peak %s) at %s (whole history at %s)"
          % (d.get("tensor_at_peak_bytes"), d.get("tensor_peak_bytes"), d.get("breakdown_ts"), alone.get("breakdown_ts")))


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[0] + "\nusage: fit_shapes_test.py FITGEN VRAMTRACE", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="vt-shapes-") as out:
        gradients(sys.argv[1], sys.argv[2], out)
        expandable(sys.argv[1], sys.argv[2], out)
        expandable_history(sys.argv[1], sys.argv[2], out)
        expandable_history_alone(sys.argv[1], sys.argv[2], out)
    print("fit_shapes_test: %s" % ("ok" if not FAILS else "%d failed" % len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

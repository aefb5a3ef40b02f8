"""export --snapshot: a PyTorch memory snapshot PyTorch's memory_viz opens, round-tripped through import.

    snapshot_export_test.py VRAMTRACE TRACE...

For each trace (a vramtrace trace, or a file import reads: Nsight export, Kineto trace, PyTorch snapshot):
export it as a snapshot; load the pickle with a reader that refuses any class (as a snapshot needs none);
check its structure against what memory_viz (torch/utils/viz/MemoryViz.js: annotate_snapshot,
process_alloc_data, MemoryView, format_frames) reads: 'device_traces' a list per device of events with
action, addr, size, stream and frames ({filename, line, name}), free_requested before free_completed, an
alloc before its free; 'segments' with device, address, total_size, stream and blocks that tile the segment
(memory_viz gives each block the address after the one before), every live block inside a segment; then
import the snapshot and compare with the trace: the same allocations (address, size), the same times from
the first (to the microsecond), the same stacks (function, file, line of each frame).
"""
import io
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile

vramtrace, traces = sys.argv[1], sys.argv[2:]
tmp = tempfile.mkdtemp(prefix="vt_snapx_")
fail = []
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "oom", "snapshot"}


class NoClasses(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("snapshot names a class: %s.%s" % (module, name))


def run(*args):
    p = subprocess.run([vramtrace] + list(args), capture_output=True, text=True, timeout=600)
    return p.returncode, p.stderr


def structure(name, d):
    """What memory_viz reads of the snapshot d, as it reads it; a list of complaints."""
    bad = []
    if set(d) < {"device_traces", "segments"}:
        return ["root keys %s" % sorted(d)]
    for dev, events in enumerate(d["device_traces"]):
        live, pending = {}, set()
        for e in events:
            if e.get("action") not in ACTIONS or not isinstance(e.get("addr"), int) or not isinstance(e.get("size"), int) \
                    or "stream" not in e or not isinstance(e.get("frames"), list):
                bad.append("device %d event %s" % (dev, e))
                break
            for f in e["frames"]:
                if not isinstance(f.get("filename"), str) or not isinstance(f.get("line"), int) or not isinstance(f.get("name"), str):
                    bad.append("frame %s" % f)
            a, x = e["action"], e["addr"]
            if a == "alloc":
                live[x] = e["size"]
            elif a == "free_requested":
                pending.add(x)
            elif a == "free_completed":
                if x not in pending or live.pop(x, None) is None:
                    bad.append("device %d: free_completed of %#x without its free_requested or alloc" % (dev, x))
                pending.discard(x)
    for s in d["segments"]:
        if not all(k in s for k in ("device", "address", "total_size", "stream", "blocks")):
            bad.append("segment keys %s" % sorted(s))
            continue
        if sum(b["size"] for b in s["blocks"]) != s["total_size"]:
            bad.append("blocks do not tile segment %#x" % s["address"])
        for b in s["blocks"]:
            if b.get("state") not in ("active_allocated", "active_pending_free", "inactive") or "requested_size" not in b \
                    or not isinstance(b.get("frames"), list):
                bad.append("block %s" % b)
        if s["device"] >= len(d["device_traces"]):
            bad.append("segment on device %d, no list for it" % s["device"])
    return ["%s: %s" % (name, b) for b in bad[:5]]


def allocations(db, blocks):
    """Device allocations of trace db: (address, size, time, frames), time order; blocks: tensor_event rows."""
    c = sqlite3.connect(db)
    if blocks:
        rows = c.execute("SELECT address, bytes, t, stack_id FROM tensor_event WHERE op = 1 AND device >= 0"
                         " ORDER BY t, id").fetchall()
    else:
        rows = c.execute("SELECT address, bytes, t, stack_id FROM memory_event WHERE op = 1 AND mem_kind IN (3, 6)"
                         " AND device >= 0 ORDER BY t, id").fetchall()
    out = []
    for a, n, t, sid in rows:
        fr = c.execute("SELECT fn.value, fl.value, f.line, f.pc, md.value FROM frame f"
                       " LEFT JOIN string fn ON fn.id = f.function_id LEFT JOIN string fl ON fl.id = f.file_id"
                       " LEFT JOIN string md ON md.id = f.module_id WHERE f.stack_id = ? ORDER BY f.idx",
                       (sid,)).fetchall() if sid is not None else []
        # a frame as a snapshot can say it: a native frame without a name by its pc, in its module's file
        out.append((a, n, t, sorted((fn or ("0x%x" % pc if pc is not None else "??"), fl or md or "", line or 0)
                                    for fn, fl, line, pc, md in fr)))
    c.close()
    return out


for i, src in enumerate(traces):
    name = os.path.basename(src)
    orig = src
    if not src.endswith(".db"):  # an import: the trace import makes of it is what is exported
        orig = os.path.join(tmp, "orig%d.db" % i)
        rc, err = run("import", "-q", "-o", orig, src)
        if rc:
            fail.append("%s: import exited %d: %s" % (name, rc, err[-300:]))
            continue
    snap = os.path.join(tmp, "snap%d.pickle" % i)
    rc, err = run("export", "--snapshot", snap, orig)
    if rc:
        fail.append("%s: export --snapshot exited %d: %s" % (name, rc, err[-300:]))
        continue
    with open(snap, "rb") as f:
        d = NoClasses(io.BytesIO(f.read())).load()
    fail += structure(name, d)
    back = os.path.join(tmp, "back%d.db" % i)
    rc, err = run("import", "-q", "-o", back, snap)
    if rc:
        fail.append("%s: import of the snapshot exited %d: %s" % (name, rc, err[-300:]))
        continue
    c = sqlite3.connect(orig)
    blocks = c.execute("SELECT count(*) FROM memory_event WHERE op IN (1, 3)").fetchone()[0] == 0
    c.close()
    a, b = allocations(orig, blocks), allocations(back, False)
    if not a:
        fail.append("%s: no device allocation to compare" % name)
    if sorted((x[0], x[1]) for x in a) != sorted((x[0], x[1]) for x in b):
        fail.append("%s: allocations differ: %d in the trace, %d back from the snapshot" % (name, len(a), len(b)))
        continue
    ta, tb = {}, {}
    for m, rows in ((ta, a), (tb, b)):
        t0 = min(r[2] for r in rows if r[2] is not None) if any(r[2] is not None for r in rows) else 0
        for r in rows:
            m.setdefault((r[0], r[1]), []).append((None if r[2] is None else r[2] - t0, r[3]))
    for k in ta:
        for (t1, f1), (t2, f2) in zip(sorted(ta[k], key=str), sorted(tb[k], key=str)):
            if (t1 is None) != (t2 is None) or (t1 is not None and abs(t1 - t2) > 1000):
                fail.append("%s: allocation %#x: time %s in the trace, %s back" % (name, k[0], t1, t2))
                break
            if f1 != f2:
                fail.append("%s: allocation %#x: frames %s in the trace, %s back" % (name, k[0], f1[:3], f2[:3]))
                break
    print("%s: %d allocations, %d events, %d segments at the dump; round trip %s"
          % (name, len(a), sum(len(x) for x in d["device_traces"]), len(d["segments"]),
             "differs" if any(f.startswith(name) for f in fail) else "equal"))
for f in fail:
    print("FAIL", f)
sys.exit(1 if fail else 0)

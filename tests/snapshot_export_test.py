"""export --snapshot: a PyTorch memory snapshot PyTorch's memory_viz opens, round-tripped through import.

    snapshot_export_test.py VRAMTRACE [--browser] [--fitgen FITGEN] TRACE...

For each trace (a vramtrace trace, or a file import reads: Nsight export, Kineto trace, PyTorch snapshot):
export it as a snapshot; load the pickle with a reader that refuses any class (as a snapshot needs none);
check its structure against what memory_viz (torch/utils/viz/MemoryViz.js: annotate_snapshot,
process_alloc_data, MemoryView, format_frames) reads: 'device_traces' a list per device of events with
action, addr, size, stream and frames ({filename, line, name}), free_requested before free_completed, an
alloc before its free; 'segments' with device, address, total_size, stream and blocks that tile the segment
(memory_viz gives each block the address after the one before), every live block inside a segment; then
import the snapshot and compare with the trace: the same allocations (address, size), the same times from
the first (to the microsecond), the same stacks (function, file, line of each frame). Segments are followed as
memory_viz follows them: segment_alloc/segment_free by address, segment_map/segment_unmap (VMM, expandable
segments) merging with and splitting the mapped ranges they touch; the ranges after the last event must be the
dump's segments, and the mapped bytes live at the end those of the trace. --fitgen FITGEN adds a generated job
with expandable segments: its trace (cuMemCreate and cuMemMap per page) and its allocation history's snapshot.
With --browser: each snapshot is also opened in PyTorch's memory_viz itself (tests/third_party/memory_viz,
driven by tests/html/check_memviz.mjs in headless Chromium through puppeteer-core, d3@5 served from npm): no
console or page error and no request leaving the page; the timeline draws one polygon per allocation of the
device it shows (and one for the small ones), the cached-segment timeline one per segment; a hover names an
allocation's size and a frame of the snapshot; the allocator's state draws each segment of the dump and two
rectangles per live block (the block and its rounding), one segment at the first event; each OOM is listed.
Skips (exit 77) when Node.js, Chromium ($VT_CHROMIUM, else chromium on PATH), puppeteer-core or d3@5
($VT_NPM_PREFIX, default ~/.cache/vramtrace-npm, where .ci/run installs them) is missing.
"""
import io
import json
import os
import pickle
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

vramtrace = sys.argv[1]
args = sys.argv[2:]
browser = "--browser" in args
fitgen = args[args.index("--fitgen") + 1] if "--fitgen" in args else None
traces = [a for i, a in enumerate(args) if a not in ("--browser", "--fitgen") and (i == 0 or args[i - 1] != "--fitgen")]
here = os.path.dirname(os.path.abspath(__file__))
if browser:
    npm = os.path.join(os.environ.get("VT_NPM_PREFIX") or os.path.expanduser("~/.cache/vramtrace-npm"), "node_modules")
    module = os.path.join(npm, "puppeteer-core", "lib", "esm", "puppeteer", "puppeteer-core.js")
    chromium = os.environ.get("VT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        d3major = json.load(open(os.path.join(npm, "d3", "package.json")))["version"].split(".")[0]
    except (OSError, ValueError, KeyError):
        d3major = None
    if not shutil.which("node") or not chromium or not os.path.exists(module) or d3major != "5":
        print("skipped: Node.js, Chromium, puppeteer-core or d3@5 not installed "
              "(apt-get install chromium; npm install --prefix %s puppeteer-core d3@5)" % os.path.dirname(npm))
        sys.exit(77)
tmp = tempfile.mkdtemp(prefix="vt_snapx_")
if fitgen:  # a job with expandable segments: pages mapped and unmapped, the history's ranges
    p = subprocess.run([fitgen, "--only", "cnn_exp_24g_hist", "--at", "64", tmp], capture_output=True, text=True)
    job = os.path.join(tmp, "cnn_exp_24g_hist")
    hist = [f for f in (os.listdir(job) if os.path.isdir(job) else []) if f.endswith(".snapshot.pickle")]
    if p.returncode or len(hist) != 1:
        print("fitgen failed (%d): %s" % (p.returncode, p.stderr[-300:]))
        sys.exit(1)
    traces += [os.path.join(job, "rank0.db"), os.path.join(job, hist[0])]
fail = []
snaps = {}  # snapshot file -> (name, its contents), for the browser
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
    at_end = {}  # device -> its blocks live after its last event, as the dump's segments must hold them
    ranges_end = {}  # device -> its segments after its last event: (address, size)
    for dev, events in enumerate(d["device_traces"]):
        live, pending, segs = {}, set(), {}  # segs: address -> [size, mapped]
        at_end[dev] = live
        ranges_end[dev] = segs
        for e in events:
            oom = e.get("action") == "oom"  # an OOM: size and device_free, each where known
            if e.get("action") not in ACTIONS or not oom and not isinstance(e.get("addr"), int) \
                    or not isinstance(e.get("size", 0 if oom else None), int) \
                    or not isinstance(e.get("device_free", 0), int) or "stream" not in e or not isinstance(e.get("frames"), list):
                bad.append("device %d event %s" % (dev, e))
                break
            for f in e["frames"]:
                if not isinstance(f.get("filename"), str) or not isinstance(f.get("line"), int) or not isinstance(f.get("name"), str):
                    bad.append("frame %s" % f)
            a, x = e["action"], e.get("addr")
            if a in ("segment_free", "segment_unmap") and any(x <= b < x + e["size"] for b in live):
                bad.append("device %d: %s of %#x with blocks live in it" % (dev, a, x))
            if a == "segment_alloc":
                segs[x] = [e["size"], False]
            elif a == "segment_free":
                if segs.get(x, [0, True])[1] or segs[x][0] != e["size"]:
                    bad.append("device %d: segment_free of %#x, no such segment" % (dev, x))
                segs.pop(x, None)
            elif a == "segment_map":  # merges with the mapped ranges it touches, as memory_viz's map_segment
                if any(s < x + e["size"] and x < s + n for s, (n, _) in segs.items()):
                    bad.append("device %d: segment_map of %#x over a live segment" % (dev, x))
                start, size = x, e["size"]
                prev = [s for s, (n, m) in segs.items() if m and s + n == start]
                if prev:
                    start = prev[0]
                    size += segs.pop(start)[0]
                if start + size in segs and segs[start + size][1]:
                    size += segs.pop(start + size)[0]
                segs[start] = [size, True]
            elif a == "segment_unmap":  # splits the mapped range holding it, as memory_viz's unmap_segment
                hold = [s for s, (n, m) in segs.items() if m and s <= x and x + e["size"] <= s + n]
                if not hold:
                    bad.append("device %d: segment_unmap of %#x, in no mapped range" % (dev, x))
                else:
                    s, n = hold[0], segs.pop(hold[0])[0]
                    if x > s:
                        segs[s] = [x - s, True]
                    if x + e["size"] < s + n:
                        segs[x + e["size"]] = [s + n - x - e["size"], True]
            elif a == "alloc":
                live[x] = e["size"]
                if not any(s <= x and x + e["size"] <= s + n for s, (n, _) in segs.items()):
                    bad.append("device %d: block %#x in no segment live then" % (dev, x))
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
    dumped = {}
    for s in d["segments"]:
        at = s["address"]
        for b in s["blocks"]:
            if b["state"] == "active_allocated":
                dumped.setdefault(s["device"], {})[at] = b["size"]
            at += b["size"]
    for dev, segs in ranges_end.items():
        dump = sorted((s["address"], s["total_size"]) for s in d["segments"] if s["device"] == dev)
        if sorted((s, n) for s, (n, _) in segs.items()) != dump:
            bad.append("device %d: %d segments after the last event, the dump has %d" % (dev, len(segs), len(dump)))
    for dev, live in at_end.items():
        if live != dumped.get(dev, {}):
            bad.append("device %d: %d blocks live after the last event, %d active in the dump's segments"
                       % (dev, len(live), len(dumped.get(dev, {}))))
    return ["%s: %s" % (name, b) for b in bad[:5]]


def allocations(db, blocks):
    """Device allocations and mappings of trace db: (address, size, time, frames), time order; blocks: tensor_event
    rows."""
    c = sqlite3.connect(db)
    if blocks:
        rows = c.execute("SELECT address, bytes, ts, stack_id FROM tensor_event WHERE op = 1 AND device >= 0"
                         " ORDER BY ts, id").fetchall()
    else:
        rows = c.execute("SELECT address, bytes, ts, stack_id FROM memory_event WHERE (op = 1 AND mem_kind IN (3, 6)"
                         " OR op = 5) AND device >= 0 ORDER BY ts, id").fetchall()
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


def ooms(db, allocs):
    """OOMs of trace db on a known device (the others are left out): (device, bytes, free_bytes, time from the
    first allocation in allocs, in microseconds)."""
    c = sqlite3.connect(db)
    t0 = min((r[2] for r in allocs if r[2] is not None), default=0)
    rows = c.execute("SELECT device, bytes, free_bytes, ts FROM oom_event WHERE device >= 0 ORDER BY ts, id").fetchall()
    c.close()
    return [(dv, n, fr, None if t is None else (t - t0) // 1000) for dv, n, fr, t in rows]


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
    snaps[snap] = (name, d)
    back = os.path.join(tmp, "back%d.db" % i)
    rc, err = run("import", "-q", "-o", back, snap)
    if rc:
        fail.append("%s: import of the snapshot exited %d: %s" % (name, rc, err[-300:]))
        continue
    c = sqlite3.connect(orig)
    blocks = c.execute("SELECT count(*) FROM memory_event WHERE op IN (1, 3, 5)").fetchone()[0] == 0
    both = not blocks and c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'tensor_event'").fetchone()[0] \
        and c.execute("SELECT count(*) FROM tensor_event WHERE op = 1").fetchone()[0] > 0
    c.close()
    a, b = allocations(orig, blocks), allocations(back, False)
    if both:  # the blocks in their segments: the same blocks back, and their times from the first segment's
        ta0 = min((r[2] for r in a if r[2] is not None), default=0)
        tb0 = min((r[2] for r in b if r[2] is not None), default=0)
        ba = sorted(((r[0], r[1], r[3]), None if r[2] is None else r[2] - ta0) for r in allocations(orig, True))
        bb = sorted(((r[0], r[1], r[3]), None if r[2] is None else r[2] - tb0) for r in allocations(back, True))
        if [x[0] for x in ba] != [x[0] for x in bb] or any((x[1] is None) != (y[1] is None) or (
                x[1] is not None and abs(x[1] - y[1]) > 1000) for x, y in zip(ba, bb)):
            fail.append("%s: blocks differ: %d in the trace, %d back from the snapshot" % (name, len(ba), len(bb)))
    c = sqlite3.connect(orig)  # mapped bytes live at the end: the dump's expandable segments
    mapped = c.execute("SELECT coalesce(sum(CASE op WHEN 5 THEN bytes ELSE -bytes END), 0) FROM memory_event"
                       " WHERE op IN (5, 6) AND device >= 0").fetchone()[0]
    c.close()
    if mapped != sum(s["total_size"] for s in d["segments"] if s.get("is_expandable")):
        fail.append("%s: %d bytes mapped at the end, %d in the dump's mapped segments" % (
            name, mapped, sum(s["total_size"] for s in d["segments"] if s.get("is_expandable"))))
    oa, ob = ooms(orig, a), ooms(back, b)
    if oa != ob:
        fail.append("%s: OOMs differ: %s in the trace, %s back" % (name, oa[:3], ob[:3]))
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
    print("%s: %d allocations, %d events (%d blocks, %d OOMs), %d segments at the dump; round trip %s"
          % (name, len(a), sum(len(x) for x in d["device_traces"]),
             sum(e["action"] == "alloc" for x in d["device_traces"] for e in x) if both else 0,
             sum(e["action"] == "oom" for x in d["device_traces"] for e in x), len(d["segments"]),
             "differs" if any(f.startswith(name) for f in fail) else "equal"))


def viewer(res, name, d):
    """What memory_viz drew of snapshot d (res: check_memviz.mjs's figures) against what d holds; complaints."""
    bad = []
    if res["errors"] or res["refused"]:
        bad.append("console errors or requests %s %s" % (res["errors"][:3], res["refused"][:3]))
    dev = int(res["device"] or 0)
    ev = d["device_traces"][dev] if dev < len(d["device_traces"]) else []
    segs = [s for s in d["segments"] if s["device"] == dev]
    n_alloc = sum(e["action"] == "alloc" for e in ev)
    # the cached-segment timeline, as process_alloc_data makes it: each segment_alloc, a segment_free of none, and each
    # dump segment no segment_alloc made (mapped ranges: segment_map/unmap are not drawn there)
    made, n_seg = set(), 0
    for e in ev:
        if e["action"] == "segment_alloc":
            made.add(e["addr"])
            n_seg += 1
        elif e["action"] == "segment_free":
            n_seg += e["addr"] not in made
            made.discard(e["addr"])
    n_seg += sum(s["address"] not in made for s in segs)
    n_blocks = sum(b["state"].startswith("active") for s in segs for b in s["blocks"])
    if res["timeline"]["polygons"] != n_alloc + 1:
        bad.append("timeline: %d polygons, %d allocations + 1 expected" % (res["timeline"]["polygons"], n_alloc))
    if res["cached"]["polygons"] != n_seg + 1:
        bad.append("segment timeline: %d polygons, %d segments + 1 expected" % (res["cached"]["polygons"], n_seg))
    st = res["state"]
    if st["last"] != len(segs) + 2 * n_blocks:
        bad.append("state at the end: %d rectangles, %d segments and %d blocks" % (st["last"], len(segs), n_blocks))
    if ev and ev[0]["action"] == "segment_alloc" and st["first"] != 1:
        bad.append("state at the first event: %d rectangles, one segment expected" % st["first"])
    n_oom = sum(e["action"] == "oom" for e in ev)
    if len(st["oom"]) != n_oom:
        bad.append("%d OOM lines listed, %d OOM events" % (len(st["oom"]), n_oom))
    sizes = {e["size"] for e in ev if e["action"] == "alloc"}
    frames = {"%s:%d:%s" % (f["filename"], f["line"], f["name"]) for e in ev for f in e["frames"]}
    m = re.search(r"Size: \S+ \((\d+) bytes\) allocation", res["timeline"]["hover"])
    if not m or int(m.group(1)) not in sizes:
        bad.append("hover: no allocation's size in %r" % res["timeline"]["hover"][:200])
    elif frames and not frames & set(res["timeline"]["hover"].splitlines()):
        bad.append("hover: no frame of the snapshot in %r" % res["timeline"]["hover"][:300])
    print("%s in memory_viz: device %d, %d + %d polygons, %d events listed, %d rectangles at the end (%d at the first"
          " event, %d at the middle), %d OOM lines" % (name, dev, res["timeline"]["polygons"], res["cached"]["polygons"],
                                                       st["events"], st["last"], st["first"], st["middle"], len(st["oom"])))
    return ["%s: memory_viz: %s" % (name, b) for b in bad]


if browser and snaps:
    p = subprocess.run(["node", os.path.join(here, "html", "check_memviz.mjs"), module, chromium, npm,
                        os.path.join(here, "third_party", "memory_viz", "MemoryViz.js")] + list(snaps),
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        fail.append("check_memviz.mjs failed: %s" % p.stderr[-2000:])
    else:
        for snap, res in zip(snaps, json.loads(p.stdout)):
            fail += viewer(res, *snaps[snap])
shutil.rmtree(tmp)
for f in fail:
    print("FAIL", f)
sys.exit(1 if fail else 0)

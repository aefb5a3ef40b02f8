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


def replay(dev, events, live, segs, bad, pre):
    """Device dev's events in order from blocks live (address -> size) and segments segs (address -> [size, mapped]),
    as memory_viz follows them; complaints into bad. pre (None: none allowed): what a free or an unmap finds that no
    event allocated is memory allocated before the history (memory_viz's initially allocated), added to it as
    (address, size, kind) with kind 'block', 'segment' or 'mapped' (then not a complaint)."""
    pending = set()
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
                if pre is not None and x not in segs:
                    pre.append((x, e["size"], "segment"))
                else:
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
                if pre is not None and not any(s < x + e["size"] and x < s + n for s, (n, _) in segs.items()):
                    pre.append((x, e["size"], "mapped"))
                else:
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
                if pre is not None and x in pending:
                    pre.append((x, e["size"], "block"))
                else:
                    bad.append("device %d: free_completed of %#x without its free_requested or alloc" % (dev, x))
            pending.discard(x)


def dump_of(d, dev):
    """The dump's segments of device dev (address -> [size, mapped]) and its active blocks (address -> size)."""
    segs, blocks = {}, {}
    for s in d["segments"]:
        if s.get("device") != dev or not isinstance(s.get("blocks"), list):
            continue
        segs[s["address"]] = [s["total_size"], bool(s.get("is_expandable"))]
        at = s["address"]
        for b in s["blocks"]:
            if b.get("state") == "active_allocated":
                blocks[at] = b["size"]
            at += b.get("size", 0)
    return segs, blocks


def minus(a, n, ranges):
    """The pieces of [a, a + n) outside every (start, size) of ranges."""
    out = [(a, a + n)]
    for s, m in ranges:
        out = [p for lo, hi in out for p in ((lo, min(hi, s)), (max(lo, s + m), hi)) if p[0] < p[1]]
    return [(lo, hi - lo) for lo, hi in out]


def structure(name, d, before=False):
    """What memory_viz reads of the snapshot d, as it reads it; a list of complaints. before: the trace's history
    starts late, so memory the dump holds, or a free finds, that no event allocated was allocated before it: as
    memory_viz does, it is live from the start (checked again from there, then with none of it unexplained)."""
    bad = []
    if set(d) < {"device_traces", "segments"}:
        return ["root keys %s" % sorted(d)]
    at_end = {}  # device -> its blocks live after its last event, as the dump's segments must hold them
    ranges_end = {}  # device -> its segments after its last event: (address, size)
    for dev, events in enumerate(d["device_traces"]):
        live, segs = {}, {}  # segs: address -> [size, mapped]
        if before:  # a first pass finds what was there before the history
            pre, live1, segs1 = [], {}, {}
            replay(dev, events, live1, segs1, [], pre)
            dsegs, dblocks = dump_of(d, dev)
            pieces = {}
            for x, n, kind in pre:  # freed or unmapped in the history, allocated before it
                if kind == "block":
                    live[x] = n
                else:
                    pieces[x] = [n, kind == "mapped"]
            for x, n in dblocks.items():  # in the dump, no event left it there
                if x not in live1:
                    live[x] = n
            for s0, (n, m) in dsegs.items():
                for x, k in minus(s0, n, [(x, n1) for x, (n1, _) in segs1.items()]):
                    pieces[x] = [k, m]
            for x in sorted(pieces):  # touching mapped pieces are one range
                n, m = pieces[x]
                last = max(segs) if segs else None
                if m and last is not None and segs[last][1] and last + segs[last][0] == x:
                    segs[last][0] += n
                else:
                    segs[x] = [n, m]
        replay(dev, events, live, segs, bad, None)
        at_end[dev] = live
        ranges_end[dev] = segs
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
    c = sqlite3.connect(orig)
    truncated = c.execute("SELECT count(*) FROM meta WHERE key = 'history_truncated' AND value = '1'").fetchone()[0]
    c.close()
    fail += structure(name, d, truncated > 0)
    snaps[snap] = (name, d)
    back = os.path.join(tmp, "back%d.db" % i)
    rc, err = run("import", "-q", "-o", back, snap)
    if rc:
        fail.append("%s: import of the snapshot exited %d: %s" % (name, rc, err[-300:]))
        continue
    hist = []  # a history that starts late comes back so, from the same time (none: no history at all)
    for db in (orig, back):
        c = sqlite3.connect(db)
        hist.append(dict(c.execute("SELECT key, value FROM meta WHERE key IN ('history_truncated', 'history_start_ns')")))
        c.close()
    if hist[0].get("history_truncated") == "1" and hist[0] != hist[1]:
        fail.append("%s: history %s in the trace, %s back from the snapshot" % (name, hist[0], hist[1]))
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
    # memory allocated before the history (a history that starts late), as process_alloc_data finds it: a
    # free_completed of no alloc, and an active block of the dump no alloc left there; drawn from the start
    made_b, pre = set(), []
    for e in ev:
        if e["action"] == "alloc":
            made_b.add(e["addr"])
        elif e["action"] == "free_completed":
            if e["addr"] not in made_b:
                pre.append(e)
            made_b.discard(e["addr"])
    for sg in segs:
        at = sg["address"]
        for b in sg["blocks"]:
            if b["state"] == "active_allocated" and at not in made_b:
                pre.append({"size": b["requested_size"], "frames": b["frames"]})
            at += b["size"]
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
    if res["timeline"]["polygons"] != n_alloc + len(pre) + 1:
        bad.append("timeline: %d polygons, %d allocations + %d before the history + 1 expected"
                   % (res["timeline"]["polygons"], n_alloc, len(pre)))
    if res["cached"]["polygons"] != n_seg + 1:
        bad.append("segment timeline: %d polygons, %d segments + 1 expected" % (res["cached"]["polygons"], n_seg))
    st = res["state"]
    if st["last"] != len(segs) + 2 * n_blocks:
        bad.append("state at the end: %d rectangles, %d segments and %d blocks" % (st["last"], len(segs), n_blocks))
    made_s, n_pre_seg = set(), 0  # segments allocated before the history: live at the first event too
    for e in ev:
        if e["action"] == "segment_alloc":
            made_s.add(e["addr"])
        elif e["action"] == "segment_free":
            n_pre_seg += e["addr"] not in made_s
            made_s.discard(e["addr"])
    n_pre_seg += sum(sg["address"] not in made_s and not sg.get("is_expandable") for sg in segs)
    if ev and ev[0]["action"] == "segment_alloc" and st["first"] != 1 + n_pre_seg + 2 * len(pre):
        bad.append("state at the first event: %d rectangles, one segment and %d segments and %d blocks from before the "
                   "history expected" % (st["first"], n_pre_seg, len(pre)))
    n_oom = sum(e["action"] == "oom" for e in ev)
    if len(st["oom"]) != n_oom:
        bad.append("%d OOM lines listed, %d OOM events" % (len(st["oom"]), n_oom))
    sizes = {e["size"] for e in ev if e["action"] == "alloc"} | {e["size"] for e in pre}
    frames = {"%s:%d:%s" % (f["filename"], f["line"], f["name"]) for e in ev + pre for f in e["frames"]}
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

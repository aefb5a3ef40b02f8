#!/usr/bin/env python3
"""The snapshot generator (bench/gen_snapshot.c) against Python and against the importer.

1. A generated file is byte for byte what Python's pickler writes for the object graph it holds
   (read with a restricted unpickler, dumped again with protocol 4): the generator writes
   PyTorch's snapshots as pickle.dump does, sharing included.
2. Imported, it holds exactly what the generator says it wrote: events per action and device,
   segments and live blocks at the dump, distinct stacks, and each device's peak allocated and
   reserved bytes as `vramtrace info --json` reports them.

usage: gen_snapshot_test.py GEN_SNAPSHOT VRAMTRACE
"""
import io
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile


class Plain(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def main():
    gen, vt = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        snap, db, summ = (os.path.join(d, n) for n in ("s.pickle", "s.db", "summary.txt"))
        # 3 MiB on two devices: a few thousand events each, an emptied cache (step 3) and an OOM (step 7)
        subprocess.run([gen, "-o", snap, "--size", "3M", "--devices", "2", "--seed", "42", "--summary", summ],
                       check=True)
        want = {}
        with open(summ) as f:
            for line in f:
                k, v = line.split()
                want[k] = int(v)
        raw = open(snap, "rb").read()
        check(len(raw) == want["bytes"], "the summary's size is the file's")
        root = Plain(io.BytesIO(raw)).load()
        check(pickle.dumps(root, protocol=4) == raw, "Python's pickler writes the same bytes for the same graph")
        ev = [e for t in root["device_traces"] for e in t]
        check(len(ev) == want["events"], "the events the file holds are the ones counted")
        for a in ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"):
            check(want["events." + a] == sum(1 for e in ev if e["action"] == a), "events." + a + " in the file")
        check(want["events.oom"] >= 2 and want["events.segment_free"] > 0, "the file has OOMs and segment frees")
        # torch's sharing: one dict per distinct frame, a list per event, free_completed sharing its request's
        frames = {id(f) for e in ev for f in e["frames"]}
        check(len(frames) <= want["frames"], "frame dicts shared")
        check(sum(1 for i in range(1, len(ev)) if ev[i]["action"] == "free_completed"
                  and ev[i]["frames"] is ev[i - 1]["frames"]) == want["events.free_completed"],
              "each free_completed shares its free_requested's list")

        subprocess.run([vt, "import", "-q", "-o", db, snap], check=True)
        c = sqlite3.connect(db)
        meta = dict(c.execute("SELECT key, value FROM meta"))
        for a in ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"):
            check(int(meta.get("pytorch.snapshot.events." + a, "0")) == want["events." + a],
                  "meta pytorch.snapshot.events.%s %s, generator %d" % (a, meta.get("pytorch.snapshot.events." + a),
                                                                        want["events." + a]))
        check(int(meta["pytorch.snapshot.segments"]) == want["segments"], "segments at the dump")
        check(int(meta["pytorch.snapshot.live_blocks"]) == want["live_blocks"], "live blocks at the dump")
        check("history_truncated" not in meta, "the history explains the dump: nothing before it")
        for dev in range(want["devices"]):
            ten = dict(c.execute("SELECT op, count(*) FROM tensor_event WHERE device = ? GROUP BY op", (dev,)))
            mem = dict(c.execute("SELECT op, count(*) FROM memory_event WHERE device = ? GROUP BY op", (dev,)))
            w = lambda a: want["device.%d.%s" % (dev, a)]
            check((ten.get(1, 0), ten.get(2, 0), ten.get(3, 0)) == (w("alloc"), w("free_completed"),
                                                                   w("free_requested")),
                  "device %d tensor rows %s" % (dev, ten))
            check((mem.get(1, 0), mem.get(2, 0)) == (w("segment_alloc"), w("segment_free")),
                  "device %d segment rows %s" % (dev, mem))
        check(c.execute("SELECT count(*) FROM oom_event").fetchone()[0] == want["events.oom"], "oom rows")
        check(c.execute("SELECT count(*) FROM stack").fetchone()[0] == want["stacks"], "distinct stacks")
        c.close()
        info = json.loads(subprocess.run([vt, "info", "--json", db], check=True, stdout=subprocess.PIPE).stdout)
        peaks = {p["device"]: p for p in info["traces"][0]["memory"]["peaks"] if p["account"] == "device"}
        for dev in range(want["devices"]):
            check(peaks[dev]["allocated_bytes"] == want["device.%d.peak_allocated" % dev],
                  "device %d peak allocated %s, generator %d" % (dev, peaks[dev]["allocated_bytes"],
                                                                 want["device.%d.peak_allocated" % dev]))
            check(peaks[dev]["reserved_bytes"] == want["device.%d.peak_reserved" % dev],
                  "device %d peak reserved %s, generator %d" % (dev, peaks[dev]["reserved_bytes"],
                                                                want["device.%d.peak_reserved" % dev]))
    print("ok: %d events, %d stacks, peaks and counts as written" % (want["events"], want["stacks"]))


if __name__ == "__main__":
    main()

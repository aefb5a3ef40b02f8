#!/usr/bin/env python3
"""analyze --snapshot: PyTorch's allocation history merged into the trace of the same process.

The trace is synthetic and matches a real snapshot (shared/real-data, skipped when absent): the
snapshot imported, its tensor rows removed (what the tracer sees in PyTorch's default mode: the
caching allocator's segments only), meta hostname/pid set as the tracer writes them. Checks:
the merge names Python lines the segment-only analysis cannot; the trace file is unchanged
without --save; a snapshot of another time or named for another process is refused (exit 2);
the snapshot beside the trace (vramtrace-HOST-PID.snapshot.pickle) is found without the option
and left out with --no-snapshot; --save merges into the trace once.

    snapshot_merge_test.py VRAMTRACE REAL_DATA_DIR
"""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SNAPSHOT = "cs336_niu_fwd_bwd_200.pickle"
FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED.append(what)


def run(vt, *args):
    p = subprocess.run([vt, "analyze", "--format", "json", *args], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode in (0, 1) and p.stdout else None), p.stderr


def python_sites(report):
    """The findings' call sites that name a .py line."""
    out = []
    for f in report.get("findings", []):
        site = json.dumps(f.get("site") or f.get("where") or f)
        if ".py:" in site or ('.py"' in site and '"line"' in site):
            out.append(f)
    return out


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    vt, data = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    snap = os.path.join(data, SNAPSHOT)
    if not data or not os.path.exists(snap):
        print("skipped: %s not present in '%s': configure with -DVT_REAL_DATA=DIR (README.md, Tests)" % (SNAPSHOT, data))
        return 77
    tmp = tempfile.mkdtemp(prefix="vt-merge-")
    try:
        trace = os.path.join(tmp, "seg.trace")
        p = subprocess.run([vt, "import", snap, "-o", trace], capture_output=True, text=True)
        check(p.returncode == 0, "import of the real snapshot: " + p.stderr.strip()[-200:])
        db = sqlite3.connect(trace)
        n_hist = db.execute("SELECT count(*) FROM tensor_event WHERE t IS NOT NULL").fetchone()[0]
        db.execute("DELETE FROM tensor_event")
        db.execute("INSERT OR REPLACE INTO meta VALUES ('hostname', 'hostA')")
        db.execute("INSERT OR REPLACE INTO meta VALUES ('pid', '4242')")
        # an out-of-memory failure of 64 GiB at the end, with what the driver said then
        db.execute("INSERT INTO oom_event(t, api, device, bytes, status, free_bytes, total_bytes) "
                   "SELECT max(t), 1, 0, 68719476736, 2, 1073741824, 85899345920 FROM memory_event")
        db.commit()
        db.close()
        before = digest(trace)

        rc, segs, _ = run(vt, trace)
        check(rc == 0 and segs is not None, "segment-only trace analyzed (rc %d)" % rc)
        rc, merged, err = run(vt, trace, "--snapshot", snap)
        check(rc == 0 and merged is not None, "merged analysis (rc %d)" % rc)
        check("%d tensor events" % n_hist in err, "the note names the merged events: " + err.strip()[-200:])
        check(merged is not None and len(python_sites(merged)) > len(python_sites(segs or {})),
              "the merge adds findings naming a Python line (%d -> %d)"
              % (len(python_sites(segs or {})), len(python_sites(merged or {}))))
        check(any("optimizer.py" in json.dumps(f) for f in (merged or {}).get("findings", [])),
              "a leak names optimizer.py")
        check(digest(trace) == before, "the trace is unchanged without --save")
        # allocated by tensors against reserved at the peak: only with both levels
        dev = (merged or {}).get("traces", [{}])[0].get("devices", [{}])[0] if merged else {}
        check(0 < dev.get("tensor_at_peak_bytes", 0) <= dev.get("peak_bytes", 0)
              and dev.get("tensor_peak_bytes", 0) >= dev.get("tensor_at_peak_bytes", 1),
              "JSON: tensors at the peak %s <= reserved peak %s, tensor peak %s"
              % (dev.get("tensor_at_peak_bytes"), dev.get("peak_bytes"), dev.get("tensor_peak_bytes")))
        p = subprocess.run([vt, "analyze", trace, "--snapshot", snap, "--format", "html"], capture_output=True,
                           text=True)
        check("allocated / reserved / device used:</em> at the reserved peak" in p.stdout, "HTML: the peak reconciled")
        ooms = [f for f in (merged or {}).get("findings", []) if f.get("kind") == "oom"]
        check(len(ooms) == 1 and "allocated by tensors" in ooms[0].get("evidence", "")
              and "79.0 GiB in use as nvidia-smi shows it" in ooms[0].get("evidence", ""),
              "the OOM reconciles allocated, cached and device used: "
              + (ooms[0].get("evidence", "")[-400:] if ooms else "no oom finding"))
        sooms = [f for f in (segs or {}).get("findings", []) if f.get("kind") == "oom"]
        check(len(sooms) == 1 and "allocated by tensors" not in sooms[0].get("evidence", ""),
              "segment level alone: no tensor figure at the OOM")
        sdev = (segs or {}).get("traces", [{}])[0].get("devices", [{}])[0] if segs else {}
        check("tensor_at_peak_bytes" not in sdev, "JSON: no tensor figures at segment level alone")
        p = subprocess.run([vt, "analyze", trace, "--snapshot", snap], capture_output=True, text=True)
        check("allocated by tensors" in p.stdout and "reserved by the caching allocator" in p.stdout,
              "text: the peak reconciled")

        # another time: the trace's wall-clock anchor an hour later
        shifted = os.path.join(tmp, "shifted.trace")
        shutil.copy(trace, shifted)
        db = sqlite3.connect(shifted)
        db.execute("UPDATE meta SET value = value + 3600000000000 WHERE key = 'clock_anchor_wall_ns'")
        db.commit()
        db.close()
        rc, _, err = run(vt, shifted, "--snapshot", snap)
        check(rc == 2 and "outside the trace" in err, "a snapshot of another time is refused (rc %d)" % rc)
        # its times are the reports' (from the trace's first event): the trace's end is info's duration
        info = json.loads(subprocess.run([vt, "info", "--json", shifted], capture_output=True, text=True).stdout)
        dur = info["traces"][0]["time"]["duration_ns"] / 1e9
        check("lies outside the trace (0 to %.3f s; times from the trace's first event" % dur in err,
              "the refusal counts from the trace's first event, as info (duration %.3f s): %s" % (dur, err.strip()))
        # another process, by name
        other = os.path.join(tmp, "vramtrace-hostB-1.snapshot.pickle")
        shutil.copy(snap, other)
        rc, _, err = run(vt, trace, "--snapshot", other)
        check(rc == 2 and "host hostA, pid 4242" in err, "a snapshot named for another process is refused")
        os.unlink(other)
        # not a snapshot
        rc, _, err = run(vt, trace, "--snapshot", trace)
        check(rc == 2, "a trace given as --snapshot is refused (rc %d)" % rc)
        rc, _, err = run(vt, trace, trace, "--snapshot", snap)
        check(rc == 2, "--snapshot with two traces is a usage error (rc %d)" % rc)

        # found beside the trace by name, left out with --no-snapshot
        shutil.copy(snap, os.path.join(tmp, "vramtrace-hostA-4242.snapshot.pickle"))
        rc, found, err = run(vt, trace)
        check(rc == 0 and found is not None and len(found["findings"]) == len(merged["findings"]),
              "the snapshot beside the trace is merged without the option")
        rc, plain, err = run(vt, trace, "--no-snapshot")
        check(rc == 0 and plain is not None and len(plain["findings"]) == len(segs["findings"]),
              "--no-snapshot leaves it out")
        check(digest(trace) == before, "the trace is still unchanged")

        # --save: into the trace, once
        rc, _, err = run(vt, trace, "--save")
        db = sqlite3.connect(trace)
        n_saved = db.execute("SELECT count(*) FROM tensor_event WHERE source = 1").fetchone()[0]
        named = db.execute("SELECT value FROM meta WHERE key = 'pytorch_history_merged'").fetchone()
        db.close()
        check(rc == 0 and n_saved >= n_hist and named is not None, "--save merges into the trace (%d rows)" % n_saved)
        rc, _, err = run(vt, trace, "--save")
        db = sqlite3.connect(trace)
        n_again = db.execute("SELECT count(*) FROM tensor_event WHERE source = 1").fetchone()[0]
        db.close()
        check(rc == 0 and n_again == n_saved, "a second --save does not merge again")
        rc, _, err = run(vt, trace, "--snapshot", snap)
        check(rc == 2 and "already holds" in err, "--snapshot on a merged trace is refused")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d check(s) failed" % len(FAILED) if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())

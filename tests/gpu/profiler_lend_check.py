"""Check a traced PyTorch job that ran its own torch.profiler (tests/gpu/profiler_lend_check.sh).

    python profiler_lend_check.py OUTDIR       check OUTDIR (job.json, kineto-N.json, lend-PID.db)
    python profiler_lend_check.py --self-test  the checks on made-up files: a good run passes, bad ones fail

What must hold: each profiler window's chrome trace has the job's kernels (the profiler got its
GPU activity); the vramtrace trace has a lend window per profiler window (meta cupti_lend.N, to
torch.profiler, with both ends), kernels and the new allocation of every phase outside the
windows (before, between, after: recorded again after each window, on the trace's clock), no
kernel inside a window, and no takeover. Prints one line per check and the facts
(CUPTI's clock, whether the profiler kept CUPTI's subscription); exit 1 on a failed check.
"""
import glob
import json
import os
import sqlite3
import sys
import tempfile

SLACK = 50_000_000  # ns: a kernel's GPU time against the host clock read around its phase
OUTSIDE = ("before", "between", "step0", "step4", "after")
INSIDE = ("window1", "step1", "step2", "step3", "step5", "step6", "step7")
ALLOC_MIB = {"before": 64, "between": 96, "after": 128}


def check_run(out):
    """Run every check on the files in out; returns the list of failures (printed as it goes)."""
    fails = []

    def check(name, cond, detail=""):
        print(("ok     " if cond else "FAIL   ") + name + ("" if cond else ": " + str(detail)))
        if not cond:
            fails.append(name)

    with open(os.path.join(out, "job.json")) as f:
        job = json.load(f)
    times = job["times"]
    print("facts  torch %s, CUDA %s, %d profiler windows" % (job.get("torch"), job.get("cuda"), job["windows"]))

    # the profiler's own traces: kernels in each window
    for n in range(1, job["windows"] + 1):
        path = os.path.join(out, "kineto-%d.json" % n)
        try:
            with open(path) as f:
                events = json.load(f).get("traceEvents", [])
        except (OSError, ValueError) as e:
            check("profiler window %d: chrome trace readable" % n, False, e)
            continue
        kernels = [e for e in events if str(e.get("cat", "")).lower() == "kernel"]
        check("profiler window %d: its trace has the job's kernels" % n, len(kernels) >= 10,
              "%d kernel events" % len(kernels))

    db_path = os.path.join(out, "lend-%d.db" % job["pid"])
    if not os.path.exists(db_path):
        check("the job's vramtrace trace exists", False, db_path)
        return fails
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    print("facts  cupti_clock %s, cupti_version %s, subscription kept by the profiler: %s"
          % (meta.get("cupti_clock"), meta.get("cupti_version"),
             meta.get("cupti_lend.1.api_held_by", "no (taken back after its start)")))
    check("no takeover: CUPTI was lent, not taken", "cupti_takeover_ns" not in meta)
    check("the trace's clock is the tracer's", meta.get("cupti_clock") in ("CLOCK_REALTIME", "CLOCK_MONOTONIC_RAW"),
          meta.get("cupti_clock"))
    windows = []
    for n in range(1, job["windows"] + 2):
        if "cupti_lend.%d.from_ns" % n not in meta:
            break
        windows.append((meta.get("cupti_lend.%d.client" % n), int(meta["cupti_lend.%d.from_ns" % n]),
                        int(meta.get("cupti_lend.%d.until_ns" % n, "-1"))))
    check("one lend window per profiler window", len(windows) == job["windows"], windows)
    check("each window lent to torch.profiler, with both ends",
          all(c == "torch.profiler" and 0 < a < b for c, a, b in windows), windows)
    kernels = db.execute("SELECT start FROM kernel WHERE start IS NOT NULL").fetchall()
    for tag in OUTSIDE:
        lo, hi = times[tag + ".from"] - SLACK, times[tag + ".until"] + SLACK
        k = sum(1 for (s,) in kernels if lo <= s <= hi)
        check("phase %s (outside the windows): its kernels are in the trace" % tag, k >= 10, "%d kernels" % k)
    for tag in INSIDE:
        lo, hi = times[tag + ".from"], times[tag + ".until"]
        inside = [w for w in windows if w[1] <= lo and hi <= w[2]]
        check("phase %s lies in a lend window" % tag, len(inside) == 1, (lo, hi, windows))
    stray = sum(1 for (s,) in kernels for _, a, b in windows if a + SLACK < s < b - SLACK)
    check("no kernel of the trace inside a window", stray == 0, "%d kernels" % stray)
    for tag, mib in ALLOC_MIB.items():
        lo, hi = times[tag + ".from"] - SLACK, times[tag + ".until"] + SLACK
        n = db.execute("SELECT count(*) FROM memory_event WHERE op = 1 AND bytes >= ? AND ts BETWEEN ? AND ?",
                       (mib << 20, lo, hi)).fetchone()[0]
        check("phase %s: its new %d MiB allocation is in the trace" % (tag, mib), n >= 1, n)
    db.close()
    return fails


def self_test():
    """The checks on a made-up good run (no failure) and two broken ones (the expected failures)."""
    ms = 1_000_000
    t0 = 1_800_000_000_000_000_000
    phases = ("before", "window1", "between") + tuple("step%d" % i for i in range(8)) + ("after",)
    times = {}
    for i, tag in enumerate(phases):
        times[tag + ".from"], times[tag + ".until"] = t0 + i * 100 * ms, t0 + i * 100 * ms + 80 * ms
    windows = [(times["window1.from"] - ms, times["window1.until"] + ms),
               (times["step1.from"] - ms, times["step3.until"] + ms),
               (times["step5.from"] - ms, times["step7.until"] + ms)]

    def make(out, kineto_kernels=20, kernel_in_window=False, drop_after=False):
        with open(os.path.join(out, "job.json"), "w") as f:
            json.dump({"pid": 4242, "windows": 3, "torch": "x", "cuda": "y", "times": times}, f)
        for n in range(1, 4):
            with open(os.path.join(out, "kineto-%d.json" % n), "w") as f:
                json.dump({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1}] * kineto_kernels}, f)
        db = sqlite3.connect(os.path.join(out, "lend-4242.db"))
        db.execute("CREATE TABLE meta(key TEXT, value TEXT)")
        db.execute("CREATE TABLE kernel(start INTEGER)")
        db.execute("CREATE TABLE memory_event(op INTEGER, bytes INTEGER, ts INTEGER)")
        db.execute("INSERT INTO meta VALUES('cupti_clock', 'CLOCK_REALTIME')")
        for n, (a, b) in enumerate(windows, 1):
            db.executemany("INSERT INTO meta VALUES(?, ?)", [("cupti_lend.%d.client" % n, "torch.profiler"),
                                                             ("cupti_lend.%d.from_ns" % n, str(a)),
                                                             ("cupti_lend.%d.until_ns" % n, str(b))])
        for tag in OUTSIDE:
            if drop_after and tag == "after":
                continue
            db.executemany("INSERT INTO kernel VALUES(?)", [(times[tag + ".from"] + i * ms,) for i in range(10)])
        for tag, mib in ALLOC_MIB.items():
            if not (drop_after and tag == "after"):
                db.execute("INSERT INTO memory_event VALUES(1, ?, ?)", (mib << 20, times[tag + ".from"] + ms))
        if kernel_in_window:
            db.execute("INSERT INTO kernel VALUES(?)", (times["step2.from"] + 5 * ms,))
        db.commit()
        db.close()

    ok = True
    for name, kw, want in (("a good run", {}, set()),
                           ("the profiler without kernels", {"kineto_kernels": 0},
                            {"profiler window 1: its trace has the job's kernels"}),
                           ("a kernel in a window, nothing after", {"kernel_in_window": True, "drop_after": True},
                            {"no kernel of the trace inside a window",
                             "phase after (outside the windows): its kernels are in the trace",
                             "phase after: its new 128 MiB allocation is in the trace"})):
        with tempfile.TemporaryDirectory() as out:
            make(out, **kw)
            print("-- self-test: %s" % name)
            got = set(check_run(out))
            good = want <= got and (bool(want) or not got)
            print("-- %s" % ("as expected" if good else "NOT as expected: %s" % sorted(got)))
            ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(1 if check_run(sys.argv[1]) else 0)

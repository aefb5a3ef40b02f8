#!/usr/bin/env python3
"""Every input gets an answer: one case per kind of input the readers can be given (docs/cli.md, "Inputs").

Usage: check_inputs.py VRAMTRACE DATA_DIR
Each case runs the command with a private TMPDIR and a time limit far above what it needs (no
case waits on the clock except the silent FIFO, whose bound is the command's own), and checks the
exit status, the words of its answer and that no temporary file outlives the run.
"""
import fcntl
import gzip
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading

VT = None
DATA = None
LIMIT_S = 300  # a hang shows as a failure long before ctest's own timeout


def run(args, tmp, stdin=None, pass_fds=(), cwd=None):
    """Run vramtrace with args in TMPDIR tmp; returns (status, stdout, stderr)."""
    env = dict(os.environ, TMPDIR=tmp)
    p = subprocess.run([VT] + args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       pass_fds=pass_fds, cwd=cwd, timeout=LIMIT_S)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def leftovers(tmp):
    return sorted(f for f in os.listdir(tmp) if f.startswith("vramtrace-"))


def expect(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")


def case_stdin(tmp):
    """'-': a trace piped into standard input is read like the file."""
    trace = os.path.join(DATA, "example-train.db")
    with open(trace, "rb") as fh:
        data = fh.read()
    p = subprocess.run([VT, "info", "-"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, TMPDIR=tmp), timeout=LIMIT_S)
    out = p.stdout.decode()
    expect("info -", p.returncode == 0, p.stderr.decode())
    expect("info -", "trace       -" in out and "pid 40116" in out and "741376 bytes" in out, out[:400])
    # another tool's file on standard input (a Kineto trace, uncompressed by the caller)
    with open(os.path.join(DATA, "import", "kineto_small.json"), "rb") as fh:
        p = subprocess.run([VT, "analyze", "--format", "json", "-"], stdin=fh, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=tmp), timeout=LIMIT_S)
    expect("analyze - (kineto)", p.returncode == 0, p.stderr.decode())
    expect("analyze - (kineto)", '"path": "-"' in p.stdout.decode(), p.stdout.decode()[:300])


def case_redact_stdin(tmp):
    """redact reads '-' as the other readers do (it said '-: No such file or directory')."""
    out = os.path.join(tmp, "shareable.db")
    with open(os.path.join(DATA, "example-train.db"), "rb") as fh:
        p = subprocess.run([VT, "redact", "-", "-o", out], stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, TMPDIR=tmp), timeout=LIMIT_S)
    expect("redact -", p.returncode == 0 and os.path.exists(out), p.stderr.decode())
    status, text, err = run(["info", out], tmp)
    expect("redact - (info)", status == 0 and "<host-1>" in text, f"{status} {err}")


def case_terminal(tmp):
    """'-' on a terminal: refused at once (usage), nothing waits for typing."""
    master, slave = pty.openpty()
    try:
        status, _, err = run(["info", "-"], tmp, stdin=slave)
    finally:
        os.close(master)
        os.close(slave)
    expect("info - (terminal)", status == 2 and "terminal" in err, f"{status} {err}")


def case_pipe(tmp):
    """/dev/fd/N (a shell's <(zcat ...)): a gzip'd Kineto trace decompressed into a pipe is imported."""
    with open(os.path.join(DATA, "import", "kineto_small.json"), "rb") as fh:
        data = fh.read()
    r, w = os.pipe()

    def writer():
        with os.fdopen(w, "wb") as out:
            out.write(gzip.decompress(gzip.compress(data)))

    t = threading.Thread(target=writer)
    t.start()
    try:
        status, out, err = run(["analyze", f"/dev/fd/{r}"], tmp, pass_fds=(r,))
    finally:
        os.close(r)
        t.join()
    expect("analyze /dev/fd/N", status == 0, err)
    expect("analyze /dev/fd/N", "empty file" not in err and f"/dev/fd/{r}" in out, out[:300] + err)


def case_fifo(tmp):
    """A FIFO: read when a writer comes; refused (no hang) when none does."""
    fifo = os.path.join(tmp, "trace.fifo")
    os.mkfifo(fifo)
    trace = os.path.join(DATA, "example-train.db")

    def writer():
        with open(fifo, "wb") as out, open(trace, "rb") as fh:
            shutil.copyfileobj(fh, out)

    t = threading.Thread(target=writer)
    t.start()
    status, out, err = run(["info", fifo], tmp)
    t.join()
    expect("info FIFO (written)", status == 0 and "pid 40116" in out, err)
    status, out, err = run(["info", fifo], tmp)  # nobody writes: the command's own bound, then exit 3
    expect("info FIFO (silent)", status == 3 and "FIFO" in err, f"{status} {err}")


def case_directory(tmp):
    """A directory as `record -o DIR/` or `import -o DIR/` fills it: its traces (with their journals left alone); none: exit 3."""
    d = os.path.join(tmp, "runs")
    os.mkdir(d)
    for pid in (11, 12):  # two processes (one process's trace given twice would be counted once)
        shutil.copy(os.path.join(DATA, "example-train.db"), os.path.join(d, f"vramtrace-host-{pid}.db"))
        db = sqlite3.connect(os.path.join(d, f"vramtrace-host-{pid}.db"))
        db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(pid),))
        db.commit()
        db.close()
    open(os.path.join(d, "vramtrace-host-12.db-wal"), "wb").close()
    open(os.path.join(d, "notes.txt"), "w").write("not a trace\n")
    status, out, err = run(["info", d], tmp)
    expect("info DIR", status == 0, err)
    expect("info DIR", out.count("trace       ") == 2 and "vramtrace-host-11.db" in out
           and "vramtrace-host-12.db" in out, out[:500])
    status, out, err = run(["analyze", d + "/"], tmp)
    expect("analyze DIR/", status == 0 and "2 traces" in err + out, err[:300])
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    status, out, err = run(["analyze", empty], tmp)
    expect("analyze empty DIR", status == 3 and "without traces" in err, f"{status} {err}")
    # a directory's name is read as it is, never as a pattern: 'runs[1]' is that directory (it read as
    # "without traces"), and 'run*' reads its own trace, not those of every directory the pattern matches
    for name in ("runs[1]", "run*"):
        g = os.path.join(tmp, name)
        os.mkdir(g)
        shutil.copy(os.path.join(DATA, "example-train.db"), os.path.join(g, "vramtrace-host-13.db"))
        status, out, err = run(["info", g], tmp)
        expect(f"info {name}", status == 0 and out.count("trace       ") == 1
               and f"{name}/vramtrace-host-13.db" in out, f"{status} {err} {out[:300]}")
    # what `import -o DIR/` writes (NAME.db) is read from the directory by every reader, diff as analyze
    imp = os.path.join(tmp, "imported")
    status, out, err = run(["import", "-q", "-o", imp + "/", os.path.join(DATA, "import", "kineto_small.json"),
                            os.path.join(DATA, "import", "snap_small.pickle")], tmp)
    expect("import -o DIR/", status == 0 and sorted(os.listdir(imp)) == ["kineto_small.db", "snap_small.db"],
           f"{status} {err} {os.listdir(imp) if os.path.isdir(imp) else None}")
    status, out, err = run(["info", imp], tmp)
    expect("info DIR of imports", status == 0 and out.count("trace       ") == 2, f"{status} {err}")
    status, out, err = run(["diff", d, imp], tmp)
    expect("diff DIR DIR", status == 0 and "vramtrace diff:" in out, f"{status} {err}")
    # diff reads standard input and pipes as the other readers do ("-: No such file", "empty file" before)
    with open(os.path.join(DATA, "example-train.db"), "rb") as fh:
        p = subprocess.run([VT, "diff", "-", os.path.join(d, "vramtrace-host-11.db")], stdin=fh,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=tmp),
                           timeout=LIMIT_S)
    expect("diff - TRACE", p.returncode == 0 and "vramtrace diff: -" in p.stdout.decode(),
           f"{p.returncode} {p.stderr.decode()}")
    status, out, err = run(["diff", empty, d], tmp)
    expect("diff empty DIR", status == 3 and "without traces" in err, f"{status} {err}")


def case_recursive_view(tmp):
    """An Nsight export whose table is a view that never ends: stopped by the read bound, exit 6, not a spin."""
    path = os.path.join(tmp, "recursive.sqlite")
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER);
        CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
          WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)
          SELECT x AS start, x + 1 AS "end", 0 AS deviceId, 0 AS streamId, x AS correlationId,
                 1 AS globalPid, 0 AS demangledName, 0 AS shortName FROM r;
    """)
    db.close()
    for cmd in (["import", "-f", path, "-o", os.path.join(tmp, "out.db")], ["analyze", path], ["info", path]):
        status, out, err = run(cmd, tmp)
        expect(" ".join(cmd[:1]) + " recursive view", status == 6 and "virtual machine" in err, f"{status} {err}")


def case_stale_temp(tmp):
    """A temporary file a killed run left is removed by the next run; a live process's is not, locked or not."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now
    stale = os.path.join(tmp, "vramtrace-import-%d-AbCdEf" % gone.pid)
    held = os.path.join(tmp, "vramtrace-import-%d-GhIjKl" % os.getpid())
    # a live process's file before it took its lock (or where the file system takes none)
    unlocked = os.path.join(tmp, "vramtrace-import-%d-MnOpQr" % os.getpid())
    for p in (stale, held, unlocked):
        with open(p, "wb") as fh:
            fh.write(b"x" * 100)
    open(stale + "-journal", "wb").close()
    fd = os.open(held, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        status, out, err = run(["analyze", os.path.join(DATA, "import", "snap_small.pickle")], tmp)
        expect("stale temporary files", status == 0, err)
        left = leftovers(tmp)
        expect("stale temporary files", left == sorted([os.path.basename(held), os.path.basename(unlocked)]),
               str(left))
    finally:
        os.close(fd)
        os.unlink(held)
        os.unlink(unlocked)


def snapshot_u64(path):
    """A PyTorch snapshot whose segment lies at 2^64 - 2 MiB and one of whose blocks lies at 2^63."""
    import pickle
    top, mid = (1 << 64) - (1 << 21), 1 << 63
    snap = {"segments": [{"device": 0, "address": top, "total_size": 1 << 21, "stream": 0,
                          "segment_type": "small", "blocks": [
                              {"address": top, "size": 512, "requested_size": 512, "state": "active_allocated",
                               "frames": []}]}],
            "device_traces": [[
                {"action": "segment_alloc", "addr": top, "size": 1 << 21, "stream": 0, "time_us": 1000,
                 "frames": []},
                {"action": "alloc", "addr": top, "size": 512, "stream": 0, "time_us": 1001, "frames": []},
                {"action": "alloc", "addr": mid, "size": 256, "stream": 0, "time_us": 1002, "frames": []},
                {"action": "free_completed", "addr": mid, "size": 256, "stream": 0, "time_us": 1004, "frames": []}]]}
    with open(path, "wb") as fh:
        pickle.dump(snap, fh, protocol=4)


def case_unsigned_address(tmp):
    """Addresses of 2^63 and more: stored as their 64-bit pattern, read back as they were, paired."""
    snap = os.path.join(tmp, "high.pickle")
    out = os.path.join(tmp, "high.db")
    snapshot_u64(snap)
    status, _, err = run(["import", "-f", snap, "-o", out], tmp)
    expect("import high addresses", status == 0, err)
    status, got, err = run(["sql", "--format", "csv", "--no-header", out,
                            "SELECT op, printf('0x%x', address), bytes FROM tensor_event ORDER BY id"], tmp)
    expect("sql high addresses", status == 0 and got.split() == [
        "1,0xffffffffffe00000,512", "1,0x8000000000000000,256", "2,0x8000000000000000,256"], got + err)
    status, got, err = run(["analyze", "--format", "json", snap], tmp)
    expect("analyze high addresses", status == 0 and '"free_unknown": 0' in got and '"tensor_allocations": 2' in got
           and '"address": %d' % ((1 << 64) - (1 << 21)) in got, err + got[:600])


def case_kineto_out_of_range(tmp):
    """Kineto [memory] events with values out of range: left out, counted, and said so (not 'no Addr')."""
    import json
    events = [{"ph": "i", "name": "[memory]", "cat": "cpu_instant_event", "pid": 7, "tid": 1, "ts": 100 + i,
               "s": "t", "args": {"Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": b,
                                  "Total Allocated": 4096, "Total Reserved": 8192}}
              for i, (addr, b) in enumerate([(-5, 512), (2 ** 64, 512), (1.5, 512), (4096, 2 ** 60),
                                            (4096, 0.5), (8192, 512)])]
    path = os.path.join(tmp, "bad.json")
    with open(path, "w") as fh:
        json.dump({"traceEvents": events}, fh)
    status, _, err = run(["import", "-f", path, "-o", os.path.join(tmp, "bad.db")], tmp)
    expect("kineto out of range", status == 0, err)
    expect("kineto out of range", "5 CUDA [memory] events left out for values out of range: 2 with a 'Bytes'" in err
           and "3 with an 'Addr'" in err and "no 'Addr'" not in err and "profile_memory" not in err, err)


def case_sql_limits(tmp):
    """sql: printf()/format() past the 64 MiB bound stop the query with exit 10, as zeroblob() does."""
    trace = os.path.join(DATA, "example-train.db")
    for q in ("SELECT printf('%.*c', 70000000, 'x')", "SELECT format('%080000000d', 1)",
              "SELECT length(printf('%s%s', printf('%.*c', 40000000, 'x'), printf('%.*c', 40000000, 'y')))"):
        status, out, err = run(["sql", trace, q], tmp)
        expect("sql " + q, status == 10 and "64 MiB" in err, f"{status} {out[:200]} {err}")
    status, out, err = run(["sql", "--format", "csv", "--no-header", trace,
                            "SELECT printf('%5.2f|%-3s|%q|%c', 3.14159, 'a', 'it''s', 'xyz')"], tmp)
    expect("sql printf", status == 0 and out.rstrip("\n") == " 3.14|a  |it''s|x", repr(out))


def case_record_output(tmp):
    """record -o into a directory that takes no file (/proc): refused before the job runs (exit 3)."""
    status, out, err = run(["record", "-o", "/proc/x-%p.db", "--", "true"], tmp)
    if status == 8:  # no tracer library in this build: record stops there first
        return
    expect("record -o /proc", status == 3 and "/proc" in err and "takes no new file" in err, f"{status} {err}")


def case_long_path(tmp):
    """A path longer than SQLite opens (about 500 bytes): that cause named, exit 3 (not 'unable to open database file')."""
    deep = os.path.join(tmp, *(["d" * 100] * 6))
    os.makedirs(deep)
    trace = os.path.join(deep, "t.db")
    shutil.copy(os.path.join(DATA, "example-train.db"), trace)
    for args in (["info", trace], ["analyze", trace], ["upgrade", trace], ["import", "-o", os.path.join(tmp, "x.db"), trace],
                 ["upgrade", "-o", os.path.join(deep, "u.db"), os.path.join(DATA, "example-train.db")],
                 ["import", "-o", deep + "/", os.path.join(DATA, "import", "snap_small.pickle")]):
        status, out, err = run(args, tmp)
        expect(" ".join(args[:2]), status == 3 and "SQLite opens no file at a path over" in err
               and err.count("\n") == 1, f"{status} {err}")
    status, out, err = run(["record", "-o", deep + "/", "--", "true"], tmp)
    if status == 8:  # no tracer library in this build: record stops there first
        return
    expect("record -o DEEP/", status == 3 and "use a shorter -o" in err, f"{status} {err}")


def case_endless(tmp):
    """A stream that begins no input (/dev/zero, /dev/urandom, zeros on a pipe): refused at its first 4 KiB, exit 4,
    not read to its end into TMPDIR (it filled the disk)."""
    for dev in ("/dev/zero", "/dev/urandom"):
        status, out, err = run(["info", dev], tmp)
        expect(f"info {dev}", status == 4 and "not read further" in err, f"{status} {err}")
    # what /dev/urandom begins with now and then: a JSON bracket, a pickle's or gzip's first bytes, then noise
    # (a '{' once in about 128 reads was taken for JSON and read on without end, filling the disk)
    for name, head in (("zeros", b""), ("'{' then noise", b"{"), ("blanks, '[' then noise", b"  \n["),
                       ("PROTO 4 then noise", b"\x80\x04"), ("PROTO 2 then noise", b"\x80\x02"),
                       ("gzip magic then noise", b"\x1f\x8b"), ("'{' then text and a NUL", b"{" + b"a" * 4000 + b"\0")):
        noise = bytes(b | 0x80 if i % 7 == 0 else b for i, b in enumerate(os.urandom(1 << 20))) if head else b""
        data = (head + (noise or b"\0" * (1 << 20)))[:1 << 20]
        if head == b"\x1f\x8b":
            data = head + b"\x00" + data[3:]  # no deflate method: noise, whatever follows
        p = subprocess.run([VT, "analyze", "-"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, TMPDIR=tmp), timeout=LIMIT_S)
        expect(f"analyze - ({name})", p.returncode == 4 and b"not read further" in p.stderr,
               f"{p.returncode} {p.stderr.decode()}")


def case_spool_bound(tmp):
    """A stream that looks like an input and never ends (blanks): stopped short of filling TMPDIR, exit 3, no file left.
    TMPDIR is a 64 MiB tmpfs in a namespace of its own (unshare); where none can be made the case says so and passes."""
    mnt = os.path.join(tmp, "small")
    os.mkdir(mnt)
    script = ('mount -t tmpfs -o size=64m tmpfs "$1" 2>/dev/null || exit 77; TMPDIR="$1" "$2" analyze -; rc=$?; '
              'ls -A "$1" >&2; exit $rc')
    p = subprocess.Popen(["unshare", "-r", "-m", "sh", "-c", script, "sh", mnt, VT], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    hang = threading.Timer(LIMIT_S, p.kill)  # a hang shows as a failure, not as a test that never ends

    def writer():
        chunk = b" " * 65536
        try:
            while True:
                p.stdin.write(chunk)
        except (BrokenPipeError, OSError):
            pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    hang.start()
    try:
        err = p.stderr.read().decode(errors="replace")
        p.wait()
    finally:
        hang.cancel()
        p.kill()
    if p.returncode in (77, 1) and "stopped after" not in err:  # unshare or mount refused (no user namespaces)
        print(f"note case_spool_bound: no private tmpfs could be mounted here ({p.returncode} {err.strip()[:120]})")
        return
    expect("analyze - (endless blanks)", p.returncode == 3 and "stopped after" in err and "TMPDIR" in err,
           f"{p.returncode} {err}")
    lines = err.strip().splitlines()
    expect("analyze - (endless blanks)", len(lines) == 1, f"left in TMPDIR: {lines[1:]}")


def case_output_is_input(tmp):
    """An output that is one of the inputs, under any name (./t.db, a link): refused (exit 2), the input untouched."""
    trace = os.path.join(tmp, "t.db")
    shutil.copy(os.path.join(DATA, "example-train.db"), trace)
    os.symlink(trace, os.path.join(tmp, "link.db"))
    snap = os.path.join(tmp, "s.pickle")
    shutil.copy(os.path.join(DATA, "import", "snap_small.pickle"), snap)
    size = {trace: os.path.getsize(trace), snap: os.path.getsize(snap)}
    for args in (["diff", "-o", "./t.db", trace, os.path.join(DATA, "example-train.db")],
                 ["diff", "-o", "link.db", os.path.join(DATA, "example-train.db"), "t.db"],
                 ["export", "--perfetto", "./t.db", "t.db"], ["export", "--snapshot", "link.db", "t.db"],
                 ["analyze", "-o", "link.db", "t.db"], ["import", "-f", "-o", "./s.pickle", "s.pickle"]):
        status, out, err = run(args, tmp, cwd=tmp)
        expect(" ".join(args[:3]), status == 2 and "writing it would replace the trace" in err
               and err.count("\n") == 1, f"{status} {err}")
        expect(" ".join(args[:3]), all(os.path.getsize(f) == n for f, n in size.items()), "an input was written over")


CASES = [case_stdin, case_terminal, case_pipe, case_fifo, case_directory, case_recursive_view, case_stale_temp,
         case_unsigned_address, case_kineto_out_of_range, case_sql_limits, case_record_output, case_long_path,
         case_output_is_input, case_endless, case_spool_bound, case_redact_stdin]


def main():
    global VT, DATA
    VT, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])  # some cases run in their own folder
    failed = 0
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                case(tmp)
                left = [f for f in leftovers(tmp)]
                expect("temporary files", not left, f"left behind: {left}")
                print(f"ok   {case.__name__}: {case.__doc__.splitlines()[0]}")
            except (AssertionError, subprocess.TimeoutExpired) as e:
                failed += 1
                print(f"FAIL {case.__name__}: {e}")
    print(f"{len(CASES) - failed} of {len(CASES)} input kinds answered")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

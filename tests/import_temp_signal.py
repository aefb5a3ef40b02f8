#!/usr/bin/env python3
"""Temporary traces of imported inputs are removed when analyze dies of SIGPIPE or SIGTERM, and at a normal exit."""
import os
import signal
import subprocess
import sys
import tempfile
import time


def run_case(vramtrace, fixture, how):
    """Run analyze on fixture with a private TMPDIR; make it die by `how`; return (status, files left)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        if how == "pipe":
            # the reading end is closed before analyze starts: its first write gets SIGPIPE
            r, w = os.pipe()
            os.close(r)
            p = subprocess.Popen([vramtrace, "analyze", fixture], stdout=w, stderr=subprocess.DEVNULL, env=env)
            os.close(w)
            status = p.wait(timeout=120)
        elif how == "term":
            # stopped once its temporary trace exists, then terminated: the handler runs on SIGCONT
            p = subprocess.Popen([vramtrace, "analyze", "--format", "json", fixture], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=env)
            deadline = time.monotonic() + 60
            while not os.listdir(tmp) and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.001)
            p.send_signal(signal.SIGTERM)
            status = p.wait(timeout=120)
        else:
            status = subprocess.run([vramtrace, "analyze", fixture], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env, timeout=120).returncode
        return status, sorted(os.listdir(tmp))


def main():
    vramtrace, data = sys.argv[1], sys.argv[2]
    fixture = os.path.join(data, "import", "snap_small.pickle")
    failures = 0
    for how, want in (("exit", 0), ("pipe", -signal.SIGPIPE)):
        status, left = run_case(vramtrace, fixture, how)
        ok = status == want and not left
        failures += not ok
        print("%-4s status %s (want %s), left in TMPDIR: %s: %s" % (how, status, want, left or "nothing",
                                                                    "ok" if ok else "FAIL"))
    # SIGTERM lands at an unpredictable point: before the temporary trace exists (nothing to remove),
    # during the import or after the report (exit 0); in every case nothing may be left behind
    for _ in range(10):
        status, left = run_case(vramtrace, fixture, "term")
        ok = status in (0, -signal.SIGTERM) and not left
        failures += not ok
        print("term status %s, left in TMPDIR: %s: %s" % (status, left or "nothing", "ok" if ok else "FAIL"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

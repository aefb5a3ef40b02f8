#!/usr/bin/env python3
"""Tests of data_verdicts.py on the example trace (tests/data/example-train.db): a kept verdict
holds; a changed severity, byte count or missing trace fails, naming what is reported now; a
finding at or above forbid_from that was not kept fails; an empty folder is skipped (77).

    data_verdicts_test.py VRAMTRACE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testlib import check, finish  # noqa: E402

EXAMPLE = os.path.join(HERE, "..", "data", "example-train.db")


def verdicts(vramtrace, folder):
    p = subprocess.run([sys.executable, os.path.join(HERE, "data_verdicts.py"), vramtrace, folder],
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: data_verdicts_test.py VRAMTRACE\n")
        return 2
    vt = argv[1]
    report = json.loads(subprocess.run([vt, "analyze", "--no-write", "--format", "json", EXAMPLE],
                                       capture_output=True, text=True, check=True, timeout=600).stdout)
    found = [{k: f.get(k) for k in ("kind", "severity", "bytes", "count")} for f in report["findings"]]
    spike = next(f for f in found if f["kind"] == "validation_spike")
    with tempfile.TemporaryDirectory(prefix="vt-data-verdicts-") as tmp:
        rc, out = verdicts(vt, tmp)
        check(rc == 77 and "skipped: no trace recorded on a GPU" in out, f"empty folder skipped: {rc} {out}")
        shutil.copyfile(EXAMPLE, os.path.join(tmp, "example.db"))

        def expect(doc):
            with open(os.path.join(tmp, "example.expected.json"), "w") as f:
                json.dump(doc, f)
            return verdicts(vt, tmp)

        rc, out = expect({"findings": found, "forbid_from": "medium"})
        check(rc == 0 and "example.db: ok" in out and "1 of 1 GPU traces hold" in out, f"verdicts hold: {out}")
        rc, out = expect({"findings": [dict(spike, severity="medium")]})
        check(rc == 1 and f"expected medium validation_spike ({spike['bytes']} B, {spike['count']}): not reported; "
              f"that kind now: high validation_spike ({spike['bytes']} B, {spike['count']})" in out,
              f"a changed severity fails: {out}")
        rc, out = expect({"findings": [dict(spike, bytes=spike["bytes"] + 1)]})
        check(rc == 1 and "not reported" in out, f"changed bytes fail: {out}")
        rc, out = expect({"findings": [dict(spike, bytes=None, count=None)]})
        check(rc == 0, f"unknown bytes and count are not compared: {out}")
        rc, out = expect({"findings": [f for f in found if f["kind"] != "validation_spike"], "forbid_from": "high"})
        check(rc == 1 and "new finding high validation_spike" in out, f"a new finding at forbid_from fails: {out}")
        os.remove(os.path.join(tmp, "example.db"))
        rc, out = expect({"findings": found})
        check(rc == 1 and "example.db is missing" in out, f"a missing trace fails: {out}")
    return finish("data_verdicts_test")


if __name__ == "__main__":
    sys.exit(main(sys.argv))

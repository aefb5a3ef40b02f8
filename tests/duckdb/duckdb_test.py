"""The DuckDB recipe of docs/queries.md on 64 ranks: export --csv, then ranks.mjs in Node.js.

    duckdb_test.py VRAMTRACE EXAMPLE_TRACE

Skips (exit 77) when Node.js or the @duckdb/node-api package is not installed
($VT_NPM_PREFIX, default ~/.cache/vramtrace-npm, where .ci/run installs it).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

vramtrace, example = sys.argv[1], sys.argv[2]
prefix = os.environ.get("VT_NPM_PREFIX") or os.path.expanduser("~/.cache/vramtrace-npm")
module = os.path.join(prefix, "node_modules", "@duckdb", "node-api", "lib", "index.js")
if not shutil.which("node") or not os.path.exists(module):
    print("skipped: Node.js or @duckdb/node-api not installed (npm install --prefix %s @duckdb/node-api)" % prefix)
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="vt_duckdb_")
traces = []
for rank in range(64):  # 64 ranks of the same job; rank 5 allocates 256 MiB more at its start
    path = os.path.join(tmp, "rank%02d.db" % rank)
    shutil.copy(example, path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'rank'", (str(rank),))
    db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(1000 + rank),))
    if rank == 5:
        db.execute("INSERT INTO memory_event(t, op, mem_kind, address, bytes, device)"
                   " SELECT min(t), 1, 3, 1, 268435456, 0 FROM memory_event")
    db.commit()
    db.close()
    traces.append(path)
out = os.path.join(tmp, "csv")
subprocess.run([vramtrace, "export", "--csv", out] + traces, check=True, capture_output=True)
p = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranks.mjs"), out, module],
                   capture_output=True, text=True, timeout=300)
if p.returncode != 0:
    print("ranks.mjs failed:", p.stderr)
    sys.exit(1)
res = json.loads(p.stdout)
# what one trace says, through vramtrace sql (SQLite's window functions: the same definition)
q = ("SELECT max(live) FROM (SELECT sum(CASE op WHEN 1 THEN bytes WHEN 2 THEN -bytes ELSE 0 END)"
     " OVER (PARTITION BY device ORDER BY ts, id) AS live FROM memory_event WHERE mem_kind = 3)")
one = subprocess.run([vramtrace, "sql", "--format", "csv", "--no-header", traces[0], q],
                     check=True, capture_output=True, text=True).stdout.strip()
kernels = subprocess.run([vramtrace, "sql", "--format", "csv", "--no-header", traces[0],
                          "SELECT count(*) FROM kernel"], check=True, capture_output=True, text=True).stdout.strip()
fail = []
if len(res["work"]) != 64:
    fail.append("%d ranks in the work table, 64 expected" % len(res["work"]))
if any(str(r["kernels"]) != kernels for r in res["work"]):
    fail.append("a rank's kernel count differs from %s" % kernels)
top = res["peak"][0]
if str(top["rank"]) != "5" or str(top["above_lowest"]) != str(268435456):
    fail.append("rank 5 should lead by 256 MiB: %s" % top)
if str(res["peak"][1]["peak_bytes"]) != one:
    fail.append("peak of an ordinary rank %s != %s from vramtrace sql" % (res["peak"][1]["peak_bytes"], one))
print("64 ranks joined in DuckDB: %s kernels each, peak %s bytes, rank 5 +%s" % (kernels, one, top["above_lowest"]))
shutil.rmtree(tmp)
for f in fail:
    print("FAIL", f)
sys.exit(1 if fail else 0)

#!/usr/bin/env python3
"""vramtrace redact: what it replaces, that the copy analyzes to the same findings, and its refusals.

usage: check_redact.py VRAMTRACE EXAMPLE_TRACE
"""
import json, os, shutil, sqlite3, subprocess, sys, tempfile

V, EXAMPLE = sys.argv[1], sys.argv[2]
SECRETS = [b"alice", b"s3cret", b"gpu-node-17", b"GPU-8f3a", b"5d1e0c2b", b"/scratch/team"]
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def run(*args):
    p = subprocess.run([V, *args], capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def findings(path):
    rc, out, err = run("analyze", "--format", "json", path)
    check(rc == 0, f"analyze {os.path.basename(path)} exits 0 ({rc}: {err[-200:]!r})")
    return json.loads(out)["findings"] if rc == 0 else None


d = tempfile.mkdtemp(prefix="vt_redact_")
try:
    src = os.path.join(d, "in.db")
    shutil.copy(EXAMPLE, src)
    db = sqlite3.connect(src)
    db.executescript("""
      UPDATE string SET value=replace(value, '/home/alice/projects/trainer/', '/home/alice/proj/');
      INSERT INTO string(value) VALUES('/home/alice/proj/model.py');
      UPDATE string SET value='/home/alice/venv/lib/python3.11/site-packages/torch/nn/modules/module.py'
        WHERE value LIKE '%torch/nn/modules/module.py';
      INSERT INTO string(value) VALUES('/tmp/torchinductor_alice/ab/cd.py');
      INSERT INTO string(value) VALUES('loaded on gpu-node-17.corp.example from /scratch/team/x/data.bin');
      UPDATE meta SET value='gpu-node-17.corp.example' WHERE key='hostname';
      UPDATE meta SET value='python /home/alice/proj/train.py --token s3cret' WHERE key='cmdline';
      INSERT OR REPLACE INTO meta VALUES('exe', '/home/alice/venv/bin/python3.11');
      UPDATE device SET uuid='GPU-8f3a0c1e-0000-1111-2222-333344445555';
      INSERT INTO string(value) VALUES('/croot/python-split_1728047642222/work/Python/ceval.c');
      INSERT INTO frame(stack_id, idx, kind, file_id, line)
        SELECT stack_id, 99, 0, (SELECT max(id) FROM string), 1 FROM frame LIMIT 1;
      INSERT OR REPLACE INTO meta VALUES('env.CUDA_VISIBLE_DEVICES', 'GPU-8f3a0c1e-0000-1111-2222-333344445555,MIG-GPU-5d1e0c2b-aaaa-bbbb-cccc-ddddeeeeffff/1/0');
    """)
    db.commit()
    db.close()
    before = open(src, "rb").read()
    out = os.path.join(d, "out.db")
    rc, _, err = run("redact", src, "-o", out)
    check(rc == 0, f"redact exits 0 ({rc}: {err!r})")
    raw = open(out, "rb").read()
    for s in SECRETS:
        check(s not in raw, f"{s.decode()} appears nowhere in the copy's bytes")
    check(open(src, "rb").read() == before, "the input is unchanged")
    check((os.stat(out).st_mode & 0o777) == 0o600, "the copy is mode 0600")
    db = sqlite3.connect(out)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    strings = {v for (v,) in db.execute("SELECT value FROM string")}
    uuid = db.execute("SELECT uuid FROM device WHERE id = 0").fetchone()[0]
    db.close()
    check(meta.get("hostname") == "<host-1>", f"hostname -> <host-1> ({meta.get('hostname')!r})")
    check(meta.get("cmdline") == "<cmdline>", f"cmdline -> <cmdline> ({meta.get('cmdline')!r})")
    check(meta.get("exe") == "<home>/venv/bin/python3.11", f"exe -> <home>/... ({meta.get('exe')!r})")
    check(uuid == "<gpu-0>", f"device uuid -> <gpu-0> ({uuid!r})")
    cvd = meta.get("env.CUDA_VISIBLE_DEVICES")
    check(cvd == "<gpu-uuid-1>,<gpu-uuid-2>", f"CUDA_VISIBLE_DEVICES UUIDs -> <gpu-uuid-N> ({cvd!r})")
    for want in ["train.py", "model.py", "<env>/site-packages/torch/nn/modules/module.py",
                 "<tmp>/torchinductor_<user>/ab/cd.py", "loaded on <host-1> from <path-1>/data.bin"]:
        check(want in strings, f"string {want!r} present")

    # same findings: the redacted copy as the original (paths relative to the project root,
    # found as the common directory of the program's files); the input modulo that root
    f0 = findings(EXAMPLE)
    f1 = findings(out)
    fin = findings(src)
    check(f0 is not None and json.loads(json.dumps(f0).replace("/home/alice/projects/trainer/", "")) == f1,
          "the copy's findings equal the original example's, paths relative to the root")
    check(fin is not None and json.loads(json.dumps(fin).replace("/home/alice/proj/", "")) == f1,
          "the copy's findings equal the input's, paths relative to the root")
    check(len(f1 or []) > 0, f"there are findings to compare ({len(f1 or [])})")

    # stable: a second run gives the same tables
    out2 = os.path.join(d, "out2.db")
    rc, _, _ = run("redact", src, "-o", out2)
    dump = lambda p: list(sqlite3.connect(p).iterdump())
    check(rc == 0 and dump(out) == dump(out2), "a second run writes the same rows")
    # --root: paths under it relative to it
    out3 = os.path.join(d, "out3.db")
    rc, _, _ = run("redact", "--root", "/home/alice", src, "-o", out3)
    s3 = {v for (v,) in sqlite3.connect(out3).execute("SELECT value FROM string")}
    check(rc == 0 and "proj/train.py" in s3, "--root /home/alice: proj/train.py")

    # refusals, with the documented exit codes; nothing overwritten
    rc, _, err = run("redact", src, "-o", src)
    check(rc == 3 and b"the trace itself" in err and open(src, "rb").read() == before, f"-o TRACE refused, exit 3 ({rc})")
    rc, _, err = run("redact", src, "-o", out)
    check(rc == 3 and b"exists" in err, f"existing OUT refused, exit 3 ({rc})")
    rc, _, _ = run("redact", src)
    check(rc == 2, f"no -o: exit 2 ({rc})")
    rc, _, _ = run("redact", "--root", "rel", src, "-o", os.path.join(d, "r.db"))
    check(rc == 2, f"relative --root: exit 2 ({rc})")
    rc, _, _ = run("redact", os.path.join(d, "missing.db"), "-o", os.path.join(d, "m.db"))
    check(rc == 3, f"missing trace: exit 3 ({rc})")
    rc, _, err = run("redact", d, "-o", os.path.join(d, "dir.db"))
    check(rc == 3 and b"is a directory, not a trace" in err, f"a directory: exit 3, said as one ({rc}, {err})")
    txt = os.path.join(d, "t.txt")
    open(txt, "w").write("not a trace\n")
    rc, _, _ = run("redact", txt, "-o", os.path.join(d, "t.db"))
    check(rc == 4, f"not a trace: exit 4 ({rc})")
    rc, _, _ = run("redact", src, "-o", os.path.join(d, "no", "dir", "x.db"))
    check(rc == 3, f"unwritable OUT: exit 3 ({rc})")
    bad = os.path.join(d, "bad.db")
    shutil.copy(EXAMPLE, bad)
    sqlite3.connect(bad).executescript("UPDATE meta SET value='999' WHERE key='schema_version';")
    rc, _, _ = run("redact", bad, "-o", os.path.join(d, "b.db"))
    check(rc == 6, f"damaged trace (version stamps disagree): exit 6 ({rc})")
    left = sorted(f for f in os.listdir(d) if "partial" in f)
    check(not left, f"no temporary file left ({left})")
finally:
    shutil.rmtree(d, ignore_errors=True)
print("FAILED: %d" % len(fails) if fails else "all passed")
sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""Damaged-trace campaign: seeded damaged variants of traces, every reader run on each.

usage: damage_campaign.py --vramtrace PATH [--gen MAKE_EXAMPLE_TRACE] [--count N] [--seed S]
                          [--timeout CPU_SEC] [--wall SEC] TRACE...

From each base TRACE, variants are made in turn by one of: byte flips, truncations, schema
edits (tables, columns, indexes, version stamps), impossible values, NULLs, hostile strings
(invalid UTF-8, 1 MB names, control characters, quotes, format directives), or several of
these at once. Each variant is read by `analyze` (text and JSON), `info --json`, `export
--perfetto` and `sql --format json`; the campaign fails when a command dies of a signal,
hangs, exits with a code not in docs/cli.md's list for it, writes JSON that
is not valid UTF-8 JSON, or fails without a `vramtrace` line on standard error. It prints
the variants by kind, the exit codes by command, and the time taken. The same seed gives
the same variants.

A hang is judged by CPU time, which a loaded machine does not stretch: a command that spins
past --timeout CPU seconds is stopped by SIGXCPU (RLIMIT_CPU); one blocked for --wall seconds
(default 900, far beyond any loaded machine's delay) is stopped too.
"""
import argparse, collections, json, os, random, resource, shutil, sqlite3, subprocess, sys, tempfile, time

INT64_MAX, INT64_MIN = 2**63 - 1, -2**63
BAD_VALUES = [-1, -4096, 0, INT64_MAX, INT64_MIN, 2**62, 2**53 + 1, 1e308, -1e308, 0.5, "abc", "12x", "",
              b"\x00\xff", None]
HOSTILE = [
    "CAST(x'ff' AS TEXT)", "CAST(x'c0af' AS TEXT)", "CAST(x'eda080' AS TEXT)", "CAST(x'f4908080' AS TEXT)",
    "CAST(x'e282' AS TEXT)", "CAST(x'41004200ff' AS TEXT)", "'%n%s%x%p'", "'\"''\\<script>&amp;'",
    "char(1,2,27,91,51,49,109,127,10,13,9)", "replace(hex(zeroblob(524288)),'0','n')",
    "CAST(replace(hex(zeroblob(262144)),'00',x'ff') AS TEXT)", "char(65533,8232,8233,65279,1114111)",
]
SCHEMA_EDITS = [
    "DROP TABLE {t}", "ALTER TABLE {t} RENAME TO {t}_old", "DELETE FROM {t}", "DROP TABLE meta",
    "PRAGMA user_version = {v}", "UPDATE meta SET value = {sv} WHERE key = 'schema_version'",
    "DELETE FROM meta WHERE key = 'schema_version'", "INSERT OR REPLACE INTO meta VALUES('time_base_ns', {bad})",
    "CREATE TABLE extra_{n}(x)", "ALTER TABLE {t} ADD COLUMN extra_{n} TEXT DEFAULT 'x'",
    "DROP TABLE {t}; CREATE VIEW {t} AS SELECT 1 AS id",
]
# documented exit codes (docs/cli.md): what each command may answer about one trace
CODES = {"analyze": {0, 3, 4, 5, 6, 7}, "analyze-json": {0, 3, 4, 5, 6, 7}, "info-json": {0, 3, 4, 5, 6, 7},
         "export": {0, 3, 4, 5, 6, 7}, "sql-json": {0, 2, 3, 4, 5, 6, 7, 10}}
JSON_CMDS = {"analyze-json", "info-json", "export", "sql-json"}


def sql_lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return "x'" + v.hex() + "'"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def tables(db):
    return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]


def columns(db, t):
    return [r[1] for r in db.execute(f"PRAGMA table_info('{t}')")]


def edit_sql(rng, db, kind):
    """One SQL edit of the given kind for the open database, as text."""
    ts = tables(db)
    t = rng.choice(ts)
    cols = columns(db, t) or ["rowid"]
    c = rng.choice(cols)
    nrows = db.execute(f"SELECT count(*) FROM \"{t}\"").fetchone()[0]
    where = f"rowid IN (SELECT rowid FROM \"{t}\" ORDER BY random() LIMIT {rng.choice([1, 3, 1000000])})"
    if kind == "schema":
        return rng.choice(SCHEMA_EDITS).format(t=t, v=rng.choice([0, -1, 1, 999, 2**31 - 1]),
                                               sv=sql_lit(rng.choice(["999", "-1", "abc", None, "2.0", " 3", 3])),
                                               bad=sql_lit(rng.choice(BAD_VALUES)), n=rng.randrange(1000))
    if kind == "value":
        return f"UPDATE \"{t}\" SET \"{c}\" = {sql_lit(rng.choice(BAD_VALUES))} WHERE {where}"
    if kind == "null":
        return f"UPDATE \"{t}\" SET \"{c}\" = NULL WHERE {where}"
    if kind == "hostile":
        st = rng.choice(["string", "meta", "device", "dropped", "overhead"])
        if st not in ts:
            st = "string"
        col = {"string": "value", "meta": "value", "device": "name", "dropped": "what", "overhead": "kind"}[st]
        return f"UPDATE \"{st}\" SET \"{col}\" = {rng.choice(HOSTILE)} WHERE rowid IN (SELECT rowid FROM \"{st}\" ORDER BY random() LIMIT {rng.choice([1, 4])})"
    raise ValueError(kind)


def make_variant(rng, base, path, kind):
    """Write a damaged copy of base at path; returns a short description."""
    shutil.copy(base, path)
    if kind in ("flip", "truncate"):
        data = bytearray(open(path, "rb").read())
        if kind == "flip":
            offs = [rng.randrange(len(data)) for _ in range(rng.choice([1, 2, 8, 64]))]
            for o in offs:
                data[o] ^= 1 << rng.randrange(8)
            desc = f"flip {len(offs)} bytes from {min(offs)}"
        else:
            cut = rng.choice([0, 1, 99, 100, 4096, rng.randrange(len(data)), len(data) - 1])
            data = data[:cut]
            desc = f"truncate at {cut}"
        open(path, "wb").write(data)
        return desc
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    edits = []
    kinds = [kind] if kind != "mixed" else [rng.choice(["schema", "value", "null", "hostile"]) for _ in range(3)]
    for k in kinds:
        s = edit_sql(rng, db, k)
        try:
            db.executescript(s)
            edits.append(s[:80])
        except sqlite3.Error as e:  # an edit the schema does not allow is skipped (recorded)
            edits.append(f"(skipped: {e}) {s[:60]}")
    db.commit()
    db.close()
    return "; ".join(edits)


def valid_json(data):
    try:
        json.loads(data.decode("utf-8", errors="strict"))
        return True
    except (UnicodeDecodeError, ValueError):
        return False


# the bounds of one command: CPU seconds (RLIMIT_CPU) and wall seconds (main sets them)
LIMITS = {"cpu": 30, "wall": 900}


def run_bounded(argv):
    """Run argv within LIMITS: (CompletedProcess, '') or (None, why it was stopped as a hang).
    The CPU limit is set on the started process (prlimit): RLIMIT_CPU counts all of a process's CPU
    time, so the moment it is set does not matter, and the start stays vfork's (a preexec_fn
    would fork this interpreter for each command: 30 ms of CPU a command, a third of the campaign)."""
    cpu = int(LIMITS["cpu"])
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            resource.prlimit(proc.pid, resource.RLIMIT_CPU, (cpu, cpu + 5))
        except ProcessLookupError:  # it has already ended (and is waited for below)
            pass
        try:
            out, err = proc.communicate(timeout=LIMITS["wall"])
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return None, f"hang: blocked for more than {LIMITS['wall']} s"
    if proc.returncode == -24:  # SIGXCPU
        return None, f"hang: more than {cpu} s of CPU"
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), ""


def run_one(vt, path, d):
    """Run every command on path: a list of (command, exit code or None on hang, problem or '')."""
    out = os.path.join(d, "export.json")
    cmds = {
        "analyze": [vt, "analyze", path],
        "analyze-json": [vt, "analyze", "--format", "json", path],
        "info-json": [vt, "info", "--json", path],
        "export": [vt, "export", "--perfetto", out, path],
        "sql-json": [vt, "sql", "--format", "json", path,
                     "SELECT s.value, m.key, m.value FROM string s, meta m LIMIT 50"],
    }
    res = []
    for name, argv in cmds.items():
        if os.path.exists(out):
            os.unlink(out)
        p, hang = run_bounded(argv)
        if p is None:
            res.append((name, None, hang))
            continue
        rc, problem = p.returncode, ""
        if rc < 0:
            problem = f"killed by signal {-rc}"
        elif rc not in CODES[name]:
            problem = f"exit {rc} not documented for {name}"
        elif rc != 0 and b"vramtrace" not in p.stderr:
            problem = f"exit {rc} without a message"
        elif name in JSON_CMDS:
            data = p.stdout if name != "export" else (open(out, "rb").read() if os.path.exists(out) else b"")
            if (rc == 0 or data.strip()) and not valid_json(data):
                problem = "invalid JSON (or not UTF-8)"
        if problem and p.stderr:
            problem += ": " + p.stderr.decode("utf-8", "replace").strip().splitlines()[-1][:200]
        res.append((name, rc, problem))
    return res


# defects the campaign found, each with the exit codes now expected of every command
REGRESS = [
    ("meta value NULL (info reported 'out of memory', exit 7)",
     "INSERT OR REPLACE INTO meta VALUES('time_base_ns', NULL)",
     {"analyze": 0, "analyze-json": 0, "info-json": 0, "export": 0, "sql-json": 0}),
    ("a device column renamed in the stored schema (info: 'SQL logic error', exit 7)",
     "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, 'sm_count', 'sm_coun_') "
     "WHERE name = 'device'",
     {"info-json": 6}),
    ("a lookup table gone (export: 'no such table', exit 7)",
     "DROP TABLE enum_api", {"export": 6}),
    ("the frame table gone (analyze: 'out of memory or write-back failed', exit 7)",
     "DROP TABLE frame", {"analyze": 6, "analyze-json": 6}),
]


def regress(vt, base, d):
    """Run the REGRESS cases on copies of base: a list of failures."""
    fails = []
    for i, (what, edit, want) in enumerate(REGRESS):
        path = os.path.join(d, f"r{i}.db")
        shutil.copy(base, path)
        db = sqlite3.connect(path)
        db.executescript(edit)
        db.commit()
        db.close()
        for name, rc, problem in run_one(vt, path, d):
            if problem or (name in want and rc != want[name]):
                fails.append(f"regression '{what}': {name}: exit {rc}, expected {want.get(name)} {problem}")
    return fails


def several(vt, base, d):
    """One unreadable trace between two good ones (one file given twice): every command names it,
    reports the good ones (analyze once: the same file) and exits 9 (analyze printed nothing and
    sql refused all before). A list of failures."""
    bad = os.path.join(d, "unreadable.db")
    open(bad, "wb").write(b"not a trace\n")
    out = os.path.join(d, "several.json")
    q = "SELECT count(*) AS n FROM process"
    cmds = {
        "analyze": ([vt, "analyze", base, bad, base], lambda o: o.count(b"== ") > 0),
        # the good file given twice is one process to analyze: read once, said in a note
        "analyze-json": ([vt, "analyze", "--format", "json", base, bad, base],
                         lambda o: len(json.loads(o)["traces"]) == 1 and
                         any("the same file, analyzed and counted once" in n for n in json.loads(o)["traces"][0]["notes"])),
        "info-json": ([vt, "info", "--json", base, bad, base], lambda o: len(json.loads(o)["traces"]) == 2),
        "export": ([vt, "export", "--perfetto", out, base, bad, base],
                   lambda o: len(json.load(open(out))["traceEvents"]) > 0),
        "sql-json": ([vt, "sql", "--format", "json", base, bad, base, q], lambda o: json.loads(o)[0]["n"] == 2),
    }
    fails = []
    for name, (argv, ok) in cmds.items():
        p, hang = run_bounded(argv)
        if p is None:
            fails.append(f"several traces, one unreadable: {name}: {hang}")
            continue
        try:
            good = ok(p.stdout)
        except (ValueError, KeyError, IndexError, TypeError, OSError):
            good = False
        if p.returncode != 9 or not good or b"unreadable.db" not in p.stderr:
            fails.append(f"several traces, one unreadable: {name}: exit {p.returncode} (expected 9), "
                         f"good ones reported: {good}, stderr {p.stderr[-200:]!r}")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramtrace", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--timeout", type=int, default=30, help="CPU seconds a command may use")
    ap.add_argument("--wall", type=float, default=900.0, help="seconds a command may take")
    ap.add_argument("--gen", help="make_example_trace: a trace of the current schema is made and added to the bases")
    ap.add_argument("bases", nargs="+")
    a = ap.parse_args()
    LIMITS.update(cpu=a.timeout, wall=a.wall)
    rng = random.Random(a.seed)
    kinds = ["flip", "truncate", "schema", "value", "null", "hostile", "mixed"]
    byKind, codes, failures = collections.Counter(), collections.defaultdict(collections.Counter), []
    t0 = time.monotonic()
    d = tempfile.mkdtemp(prefix="vt_damage_")
    try:
        if a.gen:
            a.bases.append(os.path.join(d, "current.db"))
            subprocess.run([a.gen, a.bases[-1]], check=True, capture_output=True)
        failures += regress(a.vramtrace, a.bases[-1], d)
        failures += several(a.vramtrace, a.bases[-1], d)
        for i in range(a.count):
            base = a.bases[i % len(a.bases)]
            kind = kinds[i % len(kinds)]
            path = os.path.join(d, f"v{i}.db")
            desc = make_variant(rng, base, path, kind)
            byKind[kind] += 1
            for name, rc, problem in run_one(a.vramtrace, path, d):
                codes[name]["hang" if rc is None else rc] += 1
                if problem:
                    failures.append(f"variant {i} ({kind} of {os.path.basename(base)}: {desc}): {name}: {problem}")
            os.unlink(path)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    dt = time.monotonic() - t0
    print(f"{a.count} variants (seed {a.seed}) of {len(a.bases)} traces in {dt:.1f} s; "
          f"by kind: {dict(sorted(byKind.items()))}")
    for name in CODES:
        print(f"  {name:13s} exit codes: {dict(sorted(codes[name].items(), key=lambda kv: str(kv[0])))}")
    for f in failures[:50]:
        print("FAIL " + f)
    print(f"{len(failures)} failures" if failures else "no failure")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

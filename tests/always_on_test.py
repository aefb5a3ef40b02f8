#!/usr/bin/env python3
"""The always-on mode (record --kernels summary) as analyze sees it.

usage: always_on_test.py VRAMTRACE KSUM_CONVERT EXAMPLE_TRACE

The example trace, upgraded to the current schema, is rewritten by ksum_convert as the tracer's
summary mode would have written it (kernels after 30 % of the kernel span folded into
kernel_summary rows, their launch calls counted, each address's first and last kernel use per
period kept). Then:
- every kernel is accounted for (rows plus summaries), and no launch call after the warm-up remains;
- each allocation's first and last kernel use are the same as in full mode;
- analyze finds the same findings (leaks, the validation spike, the start-up copies: none needs
  single kernels), the same peaks and phases (NVTX), and says the mode in text and JSON; the last
  use of an allocation as of a moment inside a period (a phase's peak) is that period's last
  before it, up to one period early;
- what needs single kernels is judged only before the summaries: the copy/compute overlap counts
  only the copies that started before them (copy_ns), never more than in full mode.
"""
import json, os, shutil, sqlite3, subprocess, sys, tempfile

V, KSUM, EXAMPLE = sys.argv[1], sys.argv[2], sys.argv[3]
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def run(*args):
    p = subprocess.run(list(args), capture_output=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def q(path, sql):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def report(path, fmt):
    rc, out, err = run(V, "analyze", "--format", fmt, path)
    check(rc == 0, f"analyze --format {fmt} {os.path.basename(path)} exits 0 ({rc}: {err[-200:]!r})")
    return out.decode() if rc == 0 else ""


def findings(js):
    """The findings without what names the file."""
    out = []
    for f in js["findings"]:
        f = dict(f)
        f.pop("trace", None)
        f.pop("traces", None)
        out.append(f)
    return out


d = tempfile.mkdtemp(prefix="vt_alwayson_")
try:
    full, summ = os.path.join(d, "full.db"), os.path.join(d, "summary.db")
    shutil.copy(EXAMPLE, full)
    rc, _, err = run(V, "upgrade", full)
    check(rc == 0, f"upgrade exits 0 ({rc}: {err!r})")
    shutil.copy(full, summ)
    rc, out, err = run(KSUM, summ, "0.3", "20")
    check(rc == 0, f"ksum_convert exits 0 ({rc}: {err!r})")
    if fails:
        sys.exit(1)

    nFull = q(full, "SELECT count(*) FROM kernel WHERE start > 0")[0][0]
    nRows, nSum, nSumRows = q(summ, "SELECT (SELECT count(*) FROM kernel WHERE start > 0),"
                                    " (SELECT sum(count) FROM kernel_summary), (SELECT count(*) FROM kernel_summary)")[0]
    frm = int(q(summ, "SELECT value FROM meta WHERE key = 'kernel_summary_from_ns'")[0][0])
    check(nRows > 0 and nSum > 0 and nRows + nSum == nFull,
          f"kernels: {nRows} single + {nSum} summarized = {nFull} of full mode")
    check(nSumRows * 4 < nSum, f"{nSum} kernels in {nSumRows} summary rows")
    check(q(summ, "SELECT count(*) FROM kernel WHERE start >= %d" % frm)[0][0] == 0, "no single kernel after the warm-up")
    launches = "SELECT count(*) FROM api_call c JOIN enum_api a ON a.id = c.api WHERE a.family = 'launch' AND c.start >= %d"
    check(q(full, launches % frm)[0][0] > 0 and q(summ, launches % frm)[0][0] == 0,
          "launch calls after the warm-up: counted, not written")
    uses = "SELECT address, min(ts), max(ts) FROM buffer_use WHERE kind = 0 GROUP BY address ORDER BY address"
    uFull, uSum = q(full, uses), q(summ, uses)
    check(len(uFull) > 100 and uFull == uSum, f"each of {len(uFull)} addresses keeps its first and last kernel use")
    nUseFull = q(full, "SELECT count(*) FROM buffer_use WHERE kind = 0")[0][0]
    nUseSum = q(summ, "SELECT count(*) FROM buffer_use WHERE kind = 0")[0][0]
    check(nUseSum < nUseFull, f"kernel uses {nUseFull} -> {nUseSum}")

    jFull, jSum = json.loads(report(full, "json") or "{}"), json.loads(report(summ, "json") or "{}")
    if not jFull or not jSum:
        sys.exit(1)
    fFull, fSum = findings(jFull), findings(jSum)
    check(len(fFull) >= 3 and fFull == fSum,
          "the same findings: " + ", ".join(f["kind"] for f in fFull))
    tFull, tSum = jFull["traces"][0], jSum["traces"][0]
    for key in ("devices", "iterations", "ooms", "live_at_exit"):
        check(tFull[key] == tSum[key], f"the same {key}")
    # a phase's peak: the same, but an allocation's last use as of that moment is known to its period
    period = int(q(summ, "SELECT value FROM meta WHERE key = 'config.kernel_period_ns'")[0][0])
    gaps = []
    for pFull, pSum in zip(tFull["phases"], tSum["phases"]):
        for gFull, gSum in zip(pFull.get("live_at_peak_groups", []), pSum.get("live_at_peak_groups", [])):
            a, b = gFull["largest"].pop("last_use_ts", None), gSum["largest"].pop("last_use_ts", None)
            if a != b:
                gaps.append(a - b if a is not None and b is not None else None)
    check(tFull["phases"] == tSum["phases"], "the same phases, peaks and groups")
    check(all(g is not None and 0 < g < period for g in gaps),
          f"last uses as of a phase's peak: {len(gaps)} earlier, each by less than a period ({gaps})")
    note = [n for n in tSum["notes"] if "always-on mode" in n]
    check(len(note) == 1 and "copy/compute overlap cover only the time before" in note[0],
          "JSON notes say the mode and what it cannot judge")
    check(not any("always-on" in n for n in tFull["notes"]), "full mode has no such note")
    check(tSum["transfers"]["copy_ns"] <= tFull["transfers"]["copy_ns"],
          f"copy/compute overlap judged on fewer copies ({tFull['transfers']['copy_ns']} -> "
          f"{tSum['transfers']['copy_ns']} ns)")
    text = report(summ, "text")
    check("recorded in the always-on mode (record --kernels summary)" in text, "the text report says the mode")
finally:
    shutil.rmtree(d, ignore_errors=True)

print(f"{len(fails)} failed")
sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""Score `vramtrace analyze` on the accuracy suite: recall, precision and the longest list per root cause.

    score.py --accgen build/tests/accgen --vramtrace build/analyzer/vramtrace [--suite full|quick]
             [--only SCENARIO] [--out DIR] [--jobs N] [--json FILE]
             [--check BASELINE] [--write-baseline FILE]
    score.py ... --split dev [--suite full|quick] [--only FAMILY[,FAMILY...]] [--draws N] [--first-draw N] [--out DIR] [--json FILE]
             [--check BASELINE] [--write-baseline FILE]
    score.py ... --split blind --i-am-done

Without --split, accgen writes the recorded scenarios; with --split, it draws job shapes from
the families (fam.c) with the split's key (splits.json: dev, and the blind key in blind.key).
Each run is analyzed with `vramtrace analyze --no-write --format json` and its findings are
matched to the expectations of its truth.json (docs/accuracy.md):

* a finding matches an expectation when its kind is the expected one and its site, phase,
  title and rank contain one of the accepted values (where the expectation names some) and
  its title none of the refused ones; a finding grouped across ranks counts as one finding on
  each of its processes (traces of one process, the same file given twice, count once);
* recall: required expectations met by a finding of the right kind (and rank) at severity low
  or above; strict recall: by a finding whose site, severity, phase and verdict are right too;
* precision: findings at severity low or above that match an expectation (required or
  optional) and are not duplicates, out of all findings at low or above; a duplicate is a
  finding beyond an expectation's "max" in one process, or beyond the run's "cause_max"
  findings for one root cause;
* longest list: the most findings (any severity) one root cause produced in one run;
* facts: report figures the truth names (iterations, an import's headline peaks, peaks
  counted once) that the report gets right.

The blind split is scored only with --i-am-done (when the detector work is finished): its
traces go to a temporary folder that is removed, and only the aggregate figures are printed.

With --check, exits 1 when an expectation or fact the baseline lists got worse, or a run gained
false findings. Exit codes: 0 ok, 1 check failed, 2 bad arguments, 3 generator or analyzer failed.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SEVERITIES = ["info", "low", "medium", "high"]
SCREEN = 10  # findings a terminal shows for one root cause (a finding takes 4-6 lines of the text report)
BASE_VARIANT = "SN1s"
AXES = [("mode", "tensor mode (cudaMallocAsync, --tensors)"),
        ("nvtx", "NVTX"),
        ("ranks", "several ranks"),
        ("length", "long run (thousands of iterations)"),
        ("paths", "Windows paths in frames")]


def sev_rank(s):
    return SEVERITIES.index(s) if s in SEVERITIES else -1


def contains_any(value, accepted):
    """Whether value contains one of the accepted substrings (accepted None: anything)."""
    if accepted is None:
        return True
    if value is None:
        return False
    return any(a in value for a in accepted)


def proc_of(finding, truth):
    """The process a finding is about: its trace, mapped through the truth's process_of (the same process twice)."""
    t = finding.get("trace")
    po = truth.get("process_of")
    if isinstance(t, int) and po and t < len(po):
        return po[t]
    return t


def rank_of(finding, report):
    r = finding.get("rank")
    if r is None and isinstance(finding.get("trace"), int) and finding["trace"] < len(report["traces"]):
        r = report["traces"][finding["trace"]].get("rank")
    return r


def criteria(finding, exp, report):
    """The criteria of exp that finding fails, severity excluded (empty: it matches)."""
    bad = []
    if finding.get("kind") != exp["kind"]:
        return ["kind"]
    if exp["ranks"] is not None:
        r = rank_of(finding, report)
        if r is not None and str(r) not in exp["ranks"]:
            bad.append("rank")
    if not contains_any(finding.get("site"), exp["site"]):
        bad.append("site")
    if not contains_any(finding.get("phase"), exp["phase"]):
        bad.append("phase")
    if not contains_any(finding.get("title"), exp["title"]) or (
            exp.get("title_not") and contains_any(finding.get("title"), exp["title_not"])):
        bad.append("verdict" if exp["kind"] == "oom" else "title")
    return bad


def title_class(f):
    """A false finding's group: its kind and its title with the numbers taken out."""
    t = re.sub(r"[0-9][0-9.,]*( ?[KMGT]i?B| B| allocations?| copies| iterations| slices)?", "#", f.get("title", ""))
    t = re.sub(r"'[^']*'", "'…'", t)
    return f"{f.get('kind')}: {t}"


def per_rank(report, truth=None):
    """
    The report's findings, one per process they occurred on: a finding grouped across ranks
    ("traces": [0, 1, 2, 3], "ranks": ["0", "1", "2", "3"]) counts once for each of its ranks,
    as the same finding reported per rank would; traces the truth says are one process
    ("process_of") count once. Each copy keeps the grouped finding's index ("group") so that a
    list counts it once.
    """
    out = []
    for i, f in enumerate(report.get("findings", [])):
        traces = f.get("traces")
        if not isinstance(traces, list) or len(traces) < 2:
            out.append(dict(f, group=i))
            continue
        ranks = f.get("ranks") if isinstance(f.get("ranks"), list) else [None] * len(traces)
        seen = set()
        for t, r in zip(traces, ranks):
            p = proc_of({"trace": t}, truth or {})
            if p in seen:
                continue
            seen.add(p)
            out.append(dict(f, trace=t, rank=r, group=i))
    return out


def fact_ok(fact, report):
    """Whether the report gets a fact of the truth right (see the module's comment)."""
    traces = report.get("traces", [])
    t = traces[fact["trace"]] if fact["trace"] < len(traces) else {}
    v, tol = fact["value"], fact["tol"]
    if fact["fact"] == "iterations":
        n = t.get("iterations")
        return isinstance(n, int) and abs(n - v) <= tol
    if fact["fact"] in ("peak_allocated", "peak_reserved"):
        # the device summaries' peaks, and the per-device figures of the report's figure source
        # (traces[].peaks[]: headline, allocated, reserved, and the process's own for an import)
        rows = [(d, "id") for d in t.get("devices", [])] + [(p, "device") for p in t.get("peaks", [])]
        for d, idk in rows:
            if not isinstance(d.get(idk), int) or d[idk] < 0:
                continue
            for k, x in d.items():
                if ("peak" in k or idk == "device") and k.endswith("_bytes") and k != "total_bytes" \
                        and isinstance(x, (int, float)) and abs(x - v) <= tol * v:
                    return True
        return False
    if fact["fact"] == "phase_peak_known":
        ph = t.get("phases") or []
        return bool(ph) and all(p.get("peak_bytes") is not None for p in ph)
    if fact["fact"] == "counted_once":
        s = report.get("summary", {})
        total, peak = s.get("sum_of_device_peaks_bytes"), s.get("max_device_peak_bytes")
        return isinstance(total, (int, float)) and isinstance(peak, (int, float)) and total <= peak * (1 + tol)
    return False


def score_run(run, truth, report):
    """Match one run's findings (one per process they occurred on) to its truth. Returns a dict of results."""
    findings = per_rank(report, truth)
    exps = truth["expect"]
    cause_max = truth.get("cause_max") or 0
    res = {"run": run, "scenario": truth["scenario"], "variant": truth["variant"], "group": truth["group"],
           "family": truth.get("family"), "tests": truth.get("tests"), "code": truth.get("code"),
           "axes": {a: truth[a] for a, _ in AXES}, "expected": [], "false": [], "true": 0, "true_kinds": {},
           "lists": {}, "kind_lists": {}, "facts": []}
    cause_counts = collections.Counter()
    kind_counts = collections.Counter()
    listed = set()  # (grouped finding, cause): a finding grouped across ranks is one item of a list
    matched = [None] * len(findings)
    dup = [None] * len(findings)
    per_exp = collections.Counter()  # (expectation, process): findings matched
    cause_groups = collections.defaultdict(list)  # cause: grouped findings, in the report's order
    for i, f in enumerate(findings):
        for k, e in enumerate(exps):
            if not criteria(f, e, report):
                matched[i] = (k, e)
                break
        if matched[i]:
            k, e = matched[i]
            per_exp[(k, proc_of(f, truth))] += 1
            if e.get("max") and per_exp[(k, proc_of(f, truth))] > e["max"]:
                dup[i] = "duplicate: more than %d %s finding(s) for one root cause in one process" % (e["max"], e["kind"])
            if f["group"] not in cause_groups[e["cause"]]:
                cause_groups[e["cause"]].append(f["group"])
            if cause_max and cause_groups[e["cause"]].index(f["group"]) >= cause_max and not dup[i]:
                dup[i] = "duplicate: more than %d findings for one root cause" % cause_max
        key = matched[i][1]["cause"] if matched[i] else "false: " + title_class(f)
        if (f["group"], key) not in listed:
            listed.add((f["group"], key))
            cause_counts[key] += 1
            kind_counts[(f.get("kind"), key)] += 1
        if sev_rank(f.get("severity")) >= 1:
            if matched[i] and not dup[i]:
                res["true"] += 1
                res["true_kinds"][f.get("kind")] = res["true_kinds"].get(f.get("kind"), 0) + 1
            else:
                res["false"].append({"kind": f.get("kind"), "severity": f.get("severity"), "site": f.get("site"),
                                     "title": f.get("title"), "phase": f.get("phase"), "rank": rank_of(f, report),
                                     "class": dup[i] + " (" + title_class(f) + ")" if dup[i] else title_class(f)})
    res["lists"] = dict(cause_counts)
    for (kind, key), n in kind_counts.items():
        res["kind_lists"][kind] = max(res["kind_lists"].get(kind, 0), n)
    # rows the analyzer's guard rejected as impossible (its notes say how many)
    res["rejected"] = 0
    for t in report.get("traces", []):
        for note in t.get("notes", []):
            m = re.match(r"([0-9]+) rows? with impossible values", note)
            if m:
                res["rejected"] += int(m.group(1))
    for e in exps:
        if not e["required"]:
            continue
        entry = {"id": f"{run}#{e['cause']}/{e['kind']}", "kind": e["kind"], "cause": e["cause"],
                 "class": e["class"], "found": False, "loose": False, "reason": None, "closest": None}
        best = None
        for f in findings:
            bad = criteria(f, e, report)
            if bad == ["kind"]:
                continue
            if "rank" not in bad and sev_rank(f.get("severity")) >= 1:
                entry["loose"] = True
            if not bad and f.get("severity") in e["severity"]:
                entry["found"] = True
                break
            if not bad:
                bad = ["severity"]
            if best is None or len(bad) < len(best[0]):
                best = (bad, f)
        if not entry["found"]:
            if best is None:
                entry["reason"] = f"no {e['kind']} finding"
            else:
                entry["reason"] = "wrong " + " and ".join(best[0])
                f = best[1]
                entry["closest"] = {"severity": f.get("severity"), "site": f.get("site"), "phase": f.get("phase"),
                                    "title": f.get("title"), "rank": rank_of(f, report)}
        res["expected"].append(entry)
    for fact in truth.get("facts", []):
        res["facts"].append({"fact": fact["fact"], "class": fact["class"], "ok": fact_ok(fact, report)})
    return res


def what_if_copies(run_dir, truth):
    """
    Copies of a run's traces with the pool release threshold -1 (UINT64_MAX, as the tracer stores it for
    PyTorch's cudaMallocAsync backend, in memory_event and pool_event) replaced by NULL, in
    run_dir/what-if/: a diagnostic showing what lies behind an analyzer that rejects those rows.
    Returns the copies' paths relative to run_dir.
    """
    os.makedirs(os.path.join(run_dir, "what-if"), exist_ok=True)
    paths = []
    for t in truth["traces"]:
        dst = os.path.join("what-if", t)
        shutil.copyfile(os.path.join(run_dir, t), os.path.join(run_dir, dst))
        db = sqlite3.connect(os.path.join(run_dir, dst))
        db.execute("UPDATE memory_event SET pool_threshold = NULL WHERE pool_threshold = -1")
        db.execute("UPDATE pool_event SET threshold = NULL WHERE threshold = -1")
        db.commit()
        db.close()
        paths.append(dst)
    return paths


def analyze(vramtrace, run_dir, truth, what_if=False):
    traces = what_if_copies(run_dir, truth) if what_if and truth["mode"] == "tensors" else truth["traces"]
    cmd = [vramtrace, "analyze", "--no-write", "--format", "json"] + traces
    # imports (snapshots, profiler traces) go through a temporary trace: in a folder of the run's own, so
    # that nothing else on a shared machine cleaning its temporary files can remove it
    tmp = os.path.join(run_dir, ".tmp")
    os.makedirs(tmp, exist_ok=True)
    p = subprocess.run(cmd, cwd=run_dir, capture_output=True, text=True, timeout=900, env=dict(os.environ, TMPDIR=tmp))
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()}"
    try:
        return json.loads(p.stdout), None
    except ValueError as e:
        return None, f"report is not JSON: {e}"


def pct(a, b):
    return f"{a / b:6.3f}" if b else "     -"


def attribute(results):
    """
    Give each miss and false finding a defect class. A run is compared with its scenario's base
    variant (segments, NVTX names, one rank, short, Linux paths): what goes wrong only in the
    variant is put down to the way the variant differs (tensor mode, no NVTX, ...); what goes wrong
    in the base too is put down to the expectation's own class and the reason.
    """
    by_scen = collections.defaultdict(dict)
    for r in results:
        by_scen[r["scenario"]][r["variant"]] = r
    misses, falses = collections.defaultdict(list), collections.defaultdict(list)
    for r in results:
        runs = by_scen[r["scenario"]]
        base = runs.get(BASE_VARIANT) or runs[sorted(runs)[0]]
        diff = []
        for a, label in AXES:
            if r["axes"][a] == base["axes"][a]:
                continue
            if a == "nvtx":
                label = ("no NVTX: phases inferred from kernel names" if r["axes"][a] == "none" else
                         "torch.profiler ProfilerStep#N ranges instead of phase ranges")
            diff.append(label)
        if r["rejected"] and not base["rejected"]:
            # rows the base run kept were rejected: that hides everything else the variant changes
            diff = [AXES[0][1] + ": the analyzer rejected the trace's pool rows as impossible"
                    if r["axes"]["mode"] != base["axes"]["mode"] else "the analyzer rejected rows as impossible"]
        where = " + ".join(diff)
        base_exp = {e["cause"] + "/" + e["kind"]: e for e in base["expected"]}
        for e in r["expected"]:
            if e["found"]:
                continue
            b = base_exp.get(e["cause"] + "/" + e["kind"])
            rejected_only_here = r["rejected"] and not base["rejected"]
            if r is not base and diff and ((b and (b["found"] or b["reason"] != e["reason"])) or
                                           (b is None and rejected_only_here)):
                cls = f"{where}: {e['reason']}"
            else:
                cls = f"{e['class']}: {e['reason']}"
            misses[cls].append((r, e))
        base_false = {f["class"] for f in base["false"]}
        for f in r["false"]:
            if r is not base and f["class"] not in base_false and diff:
                cls = f"{where}: {f['class']}"
            else:
                cls = f["class"]
            falses[cls].append((r, f))
    return misses, falses


def figures(results):
    """The aggregate figures of results: overall and per detector (recall, strict recall, precision, longest list, facts)."""
    req = [e for r in results for e in r["expected"]]
    facts = [f for r in results for f in r["facts"]]

    def block(ek, tk, fk, longest):
        return {"expected": len(ek), "recall": sum(e["loose"] or e["found"] for e in ek),
                "strict": sum(e["found"] for e in ek), "true": tk, "false": fk, "longest": longest}
    out = {"runs": len(results),
           "all": block(req, sum(r["true"] for r in results), sum(len(r["false"]) for r in results),
                        max((n for r in results for n in r["lists"].values()), default=0)),
           "facts": {"total": len(facts), "right": sum(f["ok"] for f in facts)}, "detectors": {}}
    kinds = sorted({e["kind"] for e in req} | {f["kind"] for r in results for f in r["false"]} |
                   {k for r in results for k in r["true_kinds"]})
    for k in kinds:
        out["detectors"][k] = block([e for e in req if e["kind"] == k], sum(r["true_kinds"].get(k, 0) for r in results),
                                    sum(1 for r in results for f in r["false"] if f["kind"] == k),
                                    max((r["kind_lists"].get(k, 0) for r in results), default=0))
    return out


def ratio(n, d):
    return f"{pct(n, d)} ({n}/{d})" if d else "     - (0/0)"


def print_figures(fig, out, title):
    """The aggregate figures as a table (all the blind split prints)."""
    w = out.write
    a = fig["all"]
    w(f"{title}: {fig['runs']} runs, {a['expected']} expected findings, {a['true'] + a['false']} findings at low or above\n")
    w(f"  recall         {ratio(a['recall'], a['expected'])}  expected findings met by a finding of the right kind (and rank)\n")
    w(f"  strict recall  {ratio(a['strict'], a['expected'])}  ... with the right site, severity, phase and verdict too\n")
    w(f"  precision      {ratio(a['true'], a['true'] + a['false'])}  findings at low or above that are true (duplicates are not)\n")
    w(f"  longest list   {a['longest']} findings for one root cause (goal: 2 at most)\n")
    w(f"  facts          {ratio(fig['facts']['right'], fig['facts']['total'])}  report figures right (iterations, an "
      f"import's peaks, a process counted once)\n\n")
    w("  detector          recall          strict recall   precision         longest list\n")
    for k, d in fig["detectors"].items():
        w(f"  {k:17s} {ratio(d['recall'], d['expected']):15s} {ratio(d['strict'], d['expected']):15s} "
          f"{ratio(d['true'], d['true'] + d['false']):17s} {d['longest']}\n")
    w("\n")


def print_families(results, out):
    """Per family: the figures, then each family's false findings and misses (what the detector work acts on)."""
    w = out.write
    fams = collections.OrderedDict()
    for r in sorted(results, key=lambda r: (r["group"] != "healthy", r["scenario"], r["variant"])):
        fams.setdefault(r["scenario"], []).append(r)
    w("per family              group    runs  recall        strict        precision       false  facts  tests\n")
    for name, rs in fams.items():
        ex = [e for r in rs for e in r["expected"]]
        t = sum(r["true"] for r in rs)
        fl = sum(len(r["false"]) for r in rs)
        fa = [f for r in rs for f in r["facts"]]
        w(f"  {name:21s} {rs[0]['group']:8s} {len(rs):4d}  {ratio(sum(e['loose'] or e['found'] for e in ex), len(ex)):13s} "
          f"{ratio(sum(e['found'] for e in ex), len(ex)):13s} {ratio(t, t + fl):15s} {fl:5d}  "
          f"{sum(f['ok'] for f in fa)}/{len(fa)}  {rs[0].get('tests') or ''}\n")
    w("\nper level and phase marking    runs  recall        strict        precision\n")
    for a in ("mode", "nvtx"):
        for val in sorted({r["axes"][a] for r in results}, key=str):
            rs = [r for r in results if r["axes"][a] == val]
            ex = [e for r in rs for e in r["expected"]]
            t = sum(r["true"] for r in rs)
            fl = sum(len(r["false"]) for r in rs)
            w(f"  {a + '=' + str(val):28s} {len(rs):4d}  {ratio(sum(e['loose'] or e['found'] for e in ex), len(ex)):13s} "
              f"{ratio(sum(e['found'] for e in ex), len(ex)):13s} {ratio(t, t + fl)}\n")
    w("\nfalse findings by pattern (kind and title without figures; level: segments, history, tensors):\n")
    pat = collections.defaultdict(list)
    for r in results:
        for f in r["false"]:
            pat[f["class"]].append(r)
    for cls, rs in sorted(pat.items(), key=lambda kv: -len(kv[1]))[:20]:
        levels = collections.Counter(r["axes"]["mode"] for r in rs)
        w(f"  [{len(rs)}] {cls}\n        levels {dict(levels)}; families "
          f"{', '.join(sorted({r['scenario'] for r in rs}))}\n")
    w("\nfalse findings and misses by family:\n")
    for name, rs in fams.items():
        items = []
        for r in rs:
            for f in r["false"]:
                dup = f["class"].split(" (")[0] if f["class"].startswith("duplicate") else ""
                items.append(f"    {r['variant']} {r.get('code') or ''} FALSE {f['kind']} {f['severity']} at '{f['site']}': "
                             f"{f['title']}" + (f"  [{dup}]" if dup else ""))
            for e in r["expected"]:
                if e["found"]:
                    continue
                cl = e["closest"]
                items.append(f"    {r['variant']} {r.get('code') or ''} MISS {e['cause']}/{e['kind']} ({e['reason']}"
                             + (f"; got {cl['severity']} at '{cl['site']}' phase {cl['phase']}: {cl['title']}" if cl else "")
                             + ")")
            for f in r["facts"]:
                if not f["ok"]:
                    items.append(f"    {r['variant']} {r.get('code') or ''} FACT WRONG {f['fact']} ({f['class']})")
        if items:
            w(f"  {name} ({len(items)}):\n")
            for s in items:
                w(s + "\n")
    w("\n")


def summarize(results, out):
    req = [e for r in results for e in r["expected"]]
    found = sum(e["found"] for e in req)
    true = sum(r["true"] for r in results)
    false = sum(len(r["false"]) for r in results)
    longest = max(((n, r["run"], c) for r in results for c, n in r["lists"].items()), default=(0, "-", "-"))
    w = out.write
    w(f"accuracy suite: {len(results)} runs, {len(req)} expected findings, {true + false} findings at low or above\n")
    w(f"  recall    {pct(found, len(req))}  ({found} of {len(req)} expected findings with the right kind, site, "
      f"severity, phase, verdict)\n")
    w(f"  precision {pct(true, true + false)}  ({true} of {true + false} findings at low or above match an expectation)\n")
    w(f"  longest list for one root cause: {longest[0]} findings ({longest[1]}: {longest[2]}); a screen is {SCREEN}\n\n")

    # per detector: recall of its expectations beside the precision of its findings
    w("per detector            recall  (found/expected)   precision (true/reported)\n")
    kinds = sorted({e["kind"] for e in req} | {f["kind"] for r in results for f in r["false"]})
    for k in kinds:
        ek = [e for e in req if e["kind"] == k]
        fk = sum(1 for r in results for f in r["false"] if f["kind"] == k)
        tk = sum(r["true_kinds"].get(k, 0) for r in results)
        w(f"  {k:20s} {pct(sum(e['found'] for e in ek), len(ek))}  ({sum(e['found'] for e in ek):3d}/{len(ek):3d})"
          f"          {pct(tk, tk + fk)}  ({tk}/{tk + fk}, {fk} false)\n")
    w("\nper scenario            variant  recall   precision  longest  false findings (kind severity)\n")
    for r in sorted(results, key=lambda r: (r["group"] != "healthy", r["scenario"], r["variant"])):
        n = len(r["expected"])
        fd = sum(e["found"] for e in r["expected"])
        lg = max(r["lists"].values(), default=0)
        fl = ", ".join(f"{f['kind']} {f['severity']}" for f in r["false"][:4]) + (" ..." if len(r["false"]) > 4 else "")
        w(f"  {r['scenario']:22s} {r['variant']:7s}  {pct(fd, n) if n else '   -  '}  {pct(r['true'], r['true'] + len(r['false']))}"
          f"     {lg:5d}    {fl}\n")
    w("\nper variant axis        recall   precision  runs\n")
    for a, _ in AXES:
        for val in sorted({r["axes"][a] for r in results}, key=str):
            rs = [r for r in results if r["axes"][a] == val]
            ex = [e for r in rs for e in r["expected"]]
            t = sum(r["true"] for r in rs)
            fl = sum(len(r["false"]) for r in rs)
            w(f"  {a + '=' + str(val):22s} {pct(sum(e['found'] for e in ex), len(ex))}   {pct(t, t + fl)}    {len(rs)}\n")
    misses, falses = attribute(results)
    w(f"\nmisses by defect class ({sum(len(v) for v in misses.values())}):\n")
    for cls, items in sorted(misses.items(), key=lambda kv: -len(kv[1])):
        w(f"  [{len(items)}] {cls}\n")
        for r, e in items[:6]:
            c = e["closest"]
            w(f"      {r['run']} {e['cause']}/{e['kind']}" + (f" -> got {c['severity']} '{c['site']}' phase {c['phase']}: "
                                                              f"{c['title']}" if c else "") + "\n")
        if len(items) > 6:
            w(f"      ... and {len(items) - 6} more\n")
    w(f"\nfalse findings by defect class ({sum(len(v) for v in falses.values())}):\n")
    for cls, items in sorted(falses.items(), key=lambda kv: -len(kv[1])):
        w(f"  [{len(items)}] {cls}\n")
        for r, f in items[:4]:
            w(f"      {r['run']} {f['severity']} rank {f['rank']} '{f['site']}'\n")
        if len(items) > 4:
            w(f"      ... and {len(items) - 4} more\n")
    long_lists = [(n, r["run"], c) for r in results for c, n in r["lists"].items() if n > SCREEN]
    w(f"\nroot causes with more findings than a screen ({len(long_lists)}):\n")
    for n, run, c in sorted(long_lists, reverse=True):
        w(f"  {n:5d}  {run}: {c}\n")
    return {"recall": found / len(req) if req else None, "precision": true / (true + false) if true + false else None,
            "expected": len(req), "found": found, "true": true, "false": false, "longest": longest[0]}


def level(e):
    """How right an expectation is: 2 found, 1 a finding of its kind with something wrong, 0 none."""
    return 2 if e["found"] else 0 if e["reason"].startswith("no ") else 1


def baseline_of(results):
    return {"comment": "What the analyzer gets right today, per run: each expectation's state (found, or why "
                       "not) and the number of false findings. score.py --check fails when an expectation gets "
                       "worse (found > a finding of its kind with something wrong > no finding) or a run gains "
                       "false findings.",
            "runs": {r["run"]: dict({"false": len(r["false"]),
                                     "expect": {e["cause"] + "/" + e["kind"]: "found" if e["found"] else e["reason"]
                                                for e in r["expected"]}},
                                    **({"facts": {f"{i}:{f['fact']}": "right" if f["ok"] else "wrong"
                                                  for i, f in enumerate(r["facts"])}} if r["facts"] else {}))
                     for r in sorted(results, key=lambda r: r["run"])}}


def check(results, baseline, out):
    """Compare with the baseline; returns the number of regressions (improvements are listed too)."""
    bad = 0
    runs = baseline.get("runs", {})
    for r in results:
        b = runs.get(r["run"])
        if b is None:
            out.write(f"note: {r['run']} is not in the baseline\n")
            continue
        for e in r["expected"]:
            key = e["cause"] + "/" + e["kind"]
            was = b["expect"].get(key)
            if was is None:
                continue
            old = 2 if was == "found" else 0 if was.startswith("no ") else 1
            now = "found" if e["found"] else e["reason"]
            if level(e) < old:
                out.write(f"REGRESSION: {r['run']} {key}: was '{was}', now '{now}'\n")
                bad += 1
            elif level(e) > old:
                out.write(f"improved: {r['run']} {key}: was '{was}', now '{now}' (update the baseline)\n")
        for i, f in enumerate(r["facts"]):
            was = b.get("facts", {}).get(f"{i}:{f['fact']}")
            if was == "right" and not f["ok"]:
                out.write(f"REGRESSION: {r['run']} fact {f['fact']}: was right, now wrong\n")
                bad += 1
            elif was == "wrong" and f["ok"]:
                out.write(f"improved: {r['run']} fact {f['fact']}: now right (update the baseline)\n")
        if len(r["false"]) > b["false"]:
            out.write(f"REGRESSION: {r['run']}: {len(r['false'])} false findings, the baseline has {b['false']}\n")
            for f in r["false"]:
                out.write(f"    {f['kind']} {f['severity']} '{f['site']}': {f['title']}\n")
            bad += 1
        elif len(r["false"]) < b["false"]:
            out.write(f"improved: {r['run']}: {len(r['false'])} false findings, the baseline has {b['false']}\n")
    return bad


def selftest():
    """Check the matcher on a hand-made truth and report; returns 0 or 1."""
    truth = {"scenario": "s", "variant": "SN2s", "group": "planted", "mode": "segments", "nvtx": "names", "ranks": 2,
             "length": "short", "paths": "linux", "traces": ["rank0.db", "rank1.db"], "expect": [
                 {"cause": "c", "kind": "leak", "site": ["train.py:66 in f"], "severity": ["high"], "phase": None,
                  "title": None, "ranks": ["0"], "required": True, "class": "x"},
                 {"cause": "c", "kind": "transfer", "site": None, "severity": ["low"], "phase": ["validation"],
                  "title": None, "ranks": None, "required": False, "class": "y"}]}
    leak = {"trace": 0, "rank": "0", "kind": "leak", "severity": "medium", "site": "/p/train.py:66 in f", "title": "t"}
    report = {"traces": [{"rank": "0", "notes": ["12 rows with impossible values (timestamps) were ignored"]},
                         {"rank": "1", "notes": []}],
              "findings": [leak, dict(leak, trace=1, rank="1", severity="high"),
                           {"trace": 0, "rank": "0", "kind": "transfer", "severity": "low", "site": "x",
                            "phase": "validation", "title": "t"},
                           {"trace": 0, "rank": "0", "kind": "transfer", "severity": "medium", "site": "x",
                            "phase": None, "title": "t"},
                           {"trace": 1, "rank": "1", "kind": "oom", "severity": "info", "site": "y", "title": "t"}]}
    r = score_run("s/SN2s", truth, report)
    ok = (r["expected"][0]["found"] is False and r["expected"][0]["reason"] == "wrong severity"
          and r["true"] == 2 and len(r["false"]) == 2 and r["rejected"] == 12
          and r["lists"].get("c") == 2 and {f["rank"] for f in r["false"]} == {"0", "1"})
    report["findings"][0] = dict(leak, severity="high")
    r = score_run("s/SN2s", truth, report)
    ok = ok and r["expected"][0]["found"] is True and level(r["expected"][0]) == 2
    report["findings"] = report["findings"][1:]
    r = score_run("s/SN2s", truth, report)
    ok = ok and r["expected"][0]["reason"] == "wrong rank" and level(r["expected"][0]) == 1
    report["findings"] = []
    r = score_run("s/SN2s", truth, report)
    ok = ok and r["expected"][0]["reason"] == "no leak finding" and level(r["expected"][0]) == 0
    # one leak grouped over both ranks: found on rank 0, false on rank 1, one item of the list
    report["findings"] = [dict(leak, severity="high", traces=[0, 1], ranks=["0", "1"])]
    r = score_run("s/SN2s", truth, report)
    ok = (ok and r["expected"][0]["found"] is True and r["true"] == 1 and len(r["false"]) == 1
          and r["false"][0]["rank"] == "1" and r["lists"].get("c") == 1)
    # a family's run: one process given twice, one OOM at most, two findings per cause, a refused verdict, facts
    fam = {"scenario": "f", "group": "planted", "variant": "d000", "mode": "segments", "nvtx": "names", "ranks": 1,
           "length": "short", "paths": "linux", "traces": ["a.db", "a.db"], "process_of": [0, 0], "cause_max": 2,
           "expect": [{"cause": "o", "kind": "oom", "site": ["x.py:1"], "severity": ["high"], "phase": None,
                       "title": ["real demand"], "title_not": ["cannot tell"], "ranks": None, "required": True,
                       "class": "c", "max": 1},
                      {"cause": "o", "kind": "leak", "site": None, "severity": ["info", "low"], "phase": None,
                       "title": None, "ranks": None, "required": False, "class": "c", "max": 0}],
           "facts": [{"fact": "counted_once", "trace": 0, "value": 0, "tol": 0.01, "class": "f"},
                     {"fact": "iterations", "trace": 0, "value": 3, "tol": 0, "class": "f"}]}
    oom = {"trace": 0, "kind": "oom", "severity": "high", "site": "x.py:1 in f", "title": "Out of memory (real demand)"}
    rep = {"traces": [{"iterations": 3}, {"iterations": 3}],
           "summary": {"sum_of_device_peaks_bytes": 200, "max_device_peak_bytes": 100},
           "findings": [dict(oom, traces=[0, 1], ranks=[None, None]), dict(oom, trace=1),
                        dict(oom, title="Out of memory (real demand or fragmentation: cannot tell)"),
                        {"trace": 0, "kind": "leak", "severity": "low", "site": "y", "title": "t"},
                        {"trace": 0, "kind": "leak", "severity": "low", "site": "z", "title": "u"}]}
    r = score_run("f/d000", fam, rep)
    # found once (the grouped finding counts once for the one process); the repeat beyond max 1, the
    # cannot-tell verdict and the leaks beyond the cause's two findings are false; one fact right
    ok = (ok and r["expected"][0]["found"] and r["expected"][0]["loose"] and r["true"] == 1 and len(r["false"]) == 4
          and sum(f["class"].startswith("duplicate") for f in r["false"]) == 3 and r["lists"].get("o") == 4
          and [f["ok"] for f in r["facts"]] == [False, True])
    print("selftest " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


SPLITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "splits.json")


def split_args(args, ap):
    """accgen's arguments for the split asked for (splits.json), or None for the recorded scenarios."""
    if not args.split:
        return None
    with open(SPLITS) as f:
        splits = json.load(f)
    s = splits[args.split]
    if args.split == "blind":
        with open(os.path.join(os.path.dirname(SPLITS), s["key_file"])) as f:
            key = "".join(line.strip() for line in f if not line.startswith("#"))
    else:
        key = s["key"]
    cmd = ["--key", key, "--draws", str(args.draws or s["draws"])]
    if args.first_draw:
        cmd += ["--from", str(args.first_draw)]
    if args.suite == "quick":
        if args.split != "dev":
            ap.error("--suite quick is a subset of the dev split")
        for run in splits["quick"]:
            cmd += ["--pick", run]
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accgen")
    ap.add_argument("--vramtrace")
    ap.add_argument("--selftest", action="store_true", help="check the matcher on a hand-made case, then go on")
    ap.add_argument("--suite", choices=("full", "quick"), default="full")
    ap.add_argument("--split", choices=("dev", "blind"),
                    help="job shapes drawn from the families with the split's key (splits.json) instead of the recorded scenarios")
    ap.add_argument("--draws", type=int, help="draws per family (default: the split's)")
    ap.add_argument("--first-draw", type=int, default=0,
                    help="skip the draws below this index (new draws of the dev key only: --draws 40 --first-draw 24)")
    ap.add_argument("--i-am-done", action="store_true", help="score the blind split (only when the detector work is finished)")
    ap.add_argument("--only")
    ap.add_argument("--seed", type=int, default=0,
                    help="draw every run's randomness anew (0: the recorded suite; others: held-out variations)")
    ap.add_argument("--out", help="keep the traces and reports in this folder (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the scores as JSON")
    ap.add_argument("--check", help="baseline JSON: fail when something it lists regressed")
    ap.add_argument("--write-baseline", help="write what is right today as a baseline")
    ap.add_argument("--what-if-threshold", action="store_true",
                    help="diagnostic: analyze tensor-mode traces with the pool release threshold -1 read as NULL")
    args = ap.parse_args()
    blind = args.split == "blind"
    if blind:
        if not args.i_am_done:
            ap.error("the blind split is scored only when the detector work is done: add --i-am-done "
                     "(and put its figures in docs/accuracy.md, marked blind)")
        if (args.out or args.json or args.check or args.write_baseline or args.only or args.draws or args.seed
                or args.first_draw):
            ap.error("the blind split prints its aggregate figures only: no --out, --json, --check, --write-baseline, "
                     "--only, --draws, --first-draw or --seed")
    if args.split and args.seed:
        ap.error("--seed is for the recorded scenarios; a split draws from its own key")
    if args.selftest and selftest() != 0:
        return 1
    if not args.accgen or not args.vramtrace:
        if args.selftest:
            return 0
        ap.error("--accgen and --vramtrace are needed")
    args.accgen, args.vramtrace = os.path.abspath(args.accgen), os.path.abspath(args.vramtrace)
    gen = split_args(args, ap)
    out_dir = args.out or tempfile.mkdtemp(prefix="vt_accuracy_")
    try:
        if gen is not None:
            cmd = [args.accgen] + gen + [out_dir] + (["--only", args.only] if args.only else [])
        else:
            cmd = [args.accgen, "--suite", args.suite, out_dir] + (["--only", args.only] if args.only else []) + \
                (["--seed", str(args.seed)] if args.seed else [])
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            sys.stderr.write(f"accgen failed ({p.returncode})" + (": " + p.stderr if not blind else "\n"))
            return 3
        if p.stderr and not blind:
            sys.stderr.write(p.stderr)
        with open(os.path.join(out_dir, "manifest.json")) as f:
            runs = json.load(f)["runs"]
        truths = {}
        for run in runs:
            with open(os.path.join(out_dir, run, "truth.json")) as f:
                truths[run] = json.load(f)
        results, failed = [], []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            futs = {run: ex.submit(analyze, args.vramtrace, os.path.join(out_dir, run), truths[run],
                                   args.what_if_threshold) for run in runs}
            for run in runs:
                report, err = futs[run].result()
                if err:
                    failed.append(f"{run}: {err}")
                    continue
                if args.out:
                    with open(os.path.join(out_dir, run, "report.json"), "w") as f:
                        json.dump(report, f, indent=1)
                results.append(score_run(run, truths[run], report))
        if blind:
            if failed or not results:
                sys.stderr.write(f"analyze failed on {len(failed)} of {len(runs)} runs\n")
                return 3
            print_figures(figures(results), sys.stdout, "BLIND split (scored once, when the detector work is done)")
            return 0
        for msg in failed:
            sys.stderr.write(f"analyze failed: {msg}\n")
        if failed or not results:
            return 3
        if args.what_if_threshold:
            sys.stdout.write("WHAT-IF (diagnostic): tensor-mode traces analyzed with the pool release threshold -1 "
                             "replaced by NULL, which the tracer never writes\n")
        fig = figures(results)
        if gen is not None:
            print_figures(fig, sys.stdout, f"{args.split} split ({args.suite})")
            print_families(results, sys.stdout)
            summary = fig
        else:
            summary = summarize(results, sys.stdout)
            summary["figures"] = fig
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"summary": summary, "runs": results}, f, indent=1)
        if args.write_baseline:
            base = baseline_of(results)
            with open(args.write_baseline, "w") as f:
                json.dump(base, f, indent=1)
                f.write("\n")
        if args.check:
            with open(args.check) as f:
                baseline = json.load(f)
            bad = check(results, baseline, sys.stdout)
            if bad:
                sys.stdout.write(f"{bad} regression(s) against {args.check}\n")
                return 1
            sys.stdout.write(f"no regression against {args.check}\n")
        return 0
    finally:
        if not args.out:
            shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

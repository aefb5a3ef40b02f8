#!/usr/bin/env python3
"""Every command and format reports the same figures of a trace, from one time origin.

For each trace and real file given (tests/data: the example traces, the import fixtures, the
shipped real files; and a directory of more real files when the build names one): `info` (text and JSON),
`analyze` (text, JSON, Markdown, HTML) and `export` (Perfetto, CSV) must agree on

  - the time origin and the duration (info's and analyze's JSON; the HTML chart's span; the CSV
    at_ns and the Perfetto times are measured from that origin),
  - the level (the JSON key in both JSONs, its name in every text format),
  - the counts (allocations and those live at the end),
  - the peaks (info's and analyze's JSON alike; each account's peak sentence, as info prints it,
    in analyze's text, Markdown and HTML; the HTML chart's headline peak),
  - the phases' windows: each window as the text report prints it, given to
    `export --from/--to`, holds every allocation and NVTX range of the phase;

and two processes read together (the example trace as two ranks, one started 0.5 s later) are
given one origin by info, analyze (JSON, HTML) and export alike.

Usage: check_agree.py VRAMTRACE DIR... (each DIR's files; a file's LICENSE/README/.py are skipped).
Exit 0 when every file agrees, 1 otherwise, 77 when no DIR holds a file (skipped).
"""
import csv
import html
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

VT = None
FAILS = []
TIME_RE = r"(?:\d+(?:\.\d+)? (?:ns|us|ms|s|min))"


def run(args, ok=(0,)):
    """Run vramtrace with args; (status, stdout, stderr). A status outside ok is a failure."""
    p = subprocess.run([VT] + args, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail=""):
    if not cond:
        FAILS.append(f"{name}: {detail}"[:1500])
        print(f"FAIL {name}: {detail}"[:1500])
    return cond


def flat(z):
    """z with its line wrapping undone (text reports wrap long lines)."""
    return " ".join(z.split())


def html_text(z):
    """The text a person reads in an HTML page: tags dropped, entities decoded, whitespace flattened."""
    z = re.sub(r"<script.*?</script>", " ", z, flags=re.S)
    return flat(html.unescape(re.sub(r"<[^>]+>", " ", z)))


def info_facts(name, text):
    """From info's text: the duration words, the level's name, and each account's peak sentence."""
    m = re.search(r"^duration\s+(.+?)(?: \(|,|$)", text, re.M)
    dur = m.group(1).strip() if m else None
    m = re.search(r"; level: (.+)$", text, re.M)
    level = m.group(1).strip() if m else None
    peaks = re.findall(r"^\s+((?:device \d+|pinned host memory|managed memory)[^:]*): (peak .+)$", text, re.M)
    return dur, level, peaks


def phase_windows(text):
    """The phases' windows in analyze's text, in order: [(from, to)]."""
    block = text.split("phases (from", 1)
    if len(block) < 2:
        return []
    return re.findall(r"(" + TIME_RE + r") \.\. (" + TIME_RE + r"), peak", block[1])


def perfetto(args):
    """export --perfetto - args: the events (the trace's, not the metadata)."""
    status, out, err = run(["export", "--perfetto", "-"] + args)
    if status != 0:
        return status, None
    d = json.loads(out)
    return 0, d["traceEvents"] if isinstance(d, dict) else d


def check_file(path, tmp):
    base = os.path.basename(path)
    st_i, info_js, err_i = run(["info", "--json", path])
    st_a, ana_js, err_a = run(["analyze", "--no-write", "--format", "json", path])
    if not expect(base + ": info and analyze answer alike", (st_i == 0) == (st_a == 0),
                  f"info {st_i} {err_i[:200]} / analyze {st_a} {err_a[:200]}"):
        return
    if st_i != 0:
        print(f"skip {base}: not readable ({err_i.strip()[:120]})")
        return
    it = json.loads(info_js)["traces"][0]
    at = json.loads(ana_js)["traces"][0]
    mem = it.get("memory") or {}
    # time: one origin, one duration
    if not expect(base + ": origin", "origin_ns" in it["time"] and it["time"]["origin_ns"] == at.get("origin_ns"),
                  f"{it['time'].get('origin_ns')} {at.get('origin_ns')}"):
        return
    expect(base + ": duration", it["time"]["duration_ns"] == at["duration_ns"],
           f"{it['time']['duration_ns']} {at['duration_ns']}")
    # level, counts, peaks
    expect(base + ": level", mem.get("level") == at["level"], f"{mem.get('level')} {at['level']}")
    lt = at["lifetimes"]
    expect(base + ": allocations", mem.get("allocations") == lt["allocations"],
           f"info {mem.get('allocations')} analyze {lt['allocations']}")
    expect(base + ": live at end", mem.get("live_at_end") == lt["live_at_end"],
           f"info {mem.get('live_at_end')} analyze {lt['live_at_end']}")
    expect(base + ": peaks", mem.get("peaks") == at["peaks"], f"info {mem.get('peaks')}\nanalyze {at['peaks']}")

    # the same in words: info's text gives the words every other format must print
    _, info_txt, _ = run(["info", path])
    dur, level, peaks = info_facts(base, info_txt)
    expect(base + ": info's level in words", level is not None, info_txt[:400])
    _, txt, _ = run(["analyze", "--no-write", path])
    _, md, _ = run(["analyze", "--no-write", "--format", "markdown", path])
    hp = os.path.join(tmp, "report.html")
    run(["analyze", "--no-write", "--format", "html", "-o", hp, path])
    page = open(hp, encoding="utf-8").read() if os.path.exists(hp) else ""
    formats = {"text": flat(txt), "markdown": flat(md.replace("\\|", "|")), "html": html_text(page)}
    for fmt, z in formats.items():
        if level:
            expect(f"{base}: level in {fmt}", "level: " + level in z, level)
        if dur and dur != "unknown":
            expect(f"{base}: duration in {fmt}", "duration " + dur in z, dur)
        elif dur == "unknown":
            expect(f"{base}: unknown duration in {fmt}", "duration unknown" in z and "duration 0 ns" not in z, "")
        for acct, sentence in peaks:  # (the tables of Markdown and HTML have it under a "peak" heading)
            want = flat(sentence) if fmt == "text" else flat(sentence)[len("peak "):]
            expect(f"{base}: {acct} peak in {fmt}", want in z, sentence)
    # the HTML chart's figures
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', page, re.S)
    if expect(base + ": HTML figures", m is not None, "no vt-data"):
        ht = json.loads(m.group(1))["traces"][0]
        heads = [p["headline_bytes"] for p in at["peaks"] if p["account"] == "device" and p["headline_bytes"] is not None]
        expect(base + ": HTML headline peak", ht["peak"] == (max(heads) if heads else None), f"{ht['peak']} {heads}")
        if at["duration_ns"] is not None and at["duration_ns"] > 0:
            expect(base + ": HTML span", ht["dur"] == at["duration_ns"] and ht["off"] == 0, f"{ht['dur']} {ht['off']}")
        for hp_, ap in zip(ht["phases"], at["phases"]):
            if ap["start_ns"] is not None:
                expect(base + ": HTML phase start", hp_["t0"] == ap["start_ns"] - at["origin_ns"],
                       f"{hp_['t0']} {ap['start_ns']} - {at['origin_ns']}")

    # export: CSV and Perfetto times from the same origin
    cdir = os.path.join(tmp, "csv")
    st, _, err = run(["export", "--csv", cdir, path])
    if expect(base + ": export --csv", st == 0, err[:300]) and at["origin_ns"] is not None:
        with open(os.path.join(cdir, "memory_event.csv"), newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r["ts"]]
        bad = [r for r in rows if int(r["at_ns"]) != max(0, int(r["ts"]) - at["origin_ns"])]
        expect(base + ": CSV at_ns from the origin", not bad, str(bad[:2]))
    shutil.rmtree(cdir, ignore_errors=True)
    st, ev = perfetto([path])
    if not expect(base + ": export --perfetto", st == 0, str(st)):
        return
    allocs = [e for e in ev if e.get("cat") == "alloc"]
    nvtx = [e for e in ev if e.get("cat") == "nvtx"]

    # each phase's window, pasted from the text report, holds the phase's allocations and ranges
    wins = phase_windows(txt)
    expect(base + ": a window per phase in the text", len(wins) == len(at["phases"]),
           f"{len(wins)} windows, {len(at['phases'])} phases")
    for (a, b), ph in zip(wins, at["phases"]):
        if ph["start_ns"] is None or ph["end_ns"] is None:
            continue
        lo, hi = (ph["start_ns"] - at["origin_ns"]) / 1e3, (ph["end_ns"] - at["origin_ns"]) / 1e3  # us
        want_a = {(e["name"], e["ts"]) for e in allocs if lo <= e["ts"] <= hi}
        want_n = {(e["name"], e["ts"]) for e in nvtx if lo <= e["ts"] and e["ts"] + e.get("dur", 0) <= hi}
        st, wev = perfetto(["--from", a.replace(" ", ""), "--to", b.replace(" ", ""), path])
        if not expect(f"{base}: export of phase {ph['name']}", st == 0, str(st)):
            continue
        got = {(e["name"], e["ts"]) for e in wev if e.get("cat") in ("alloc", "nvtx")}
        miss = (want_a | want_n) - got
        expect(f"{base}: phase {ph['name']} {a} .. {b} in export", not miss,
               f"{len(miss)} of {len(want_a)} allocations and {len(want_n)} ranges missing, e.g. {sorted(miss)[:3]}")
    print(f"ok   {base}: {len(at['phases'])} phases, {len(peaks)} peaks, level {at['level']}")


def check_pair(data, tmp):
    """Two processes read together (the second started 0.5 s later on the wall clock): one origin for both."""
    paths = []
    for pid, shift in ((11, 0), (12, 500000000)):
        p = os.path.join(tmp, f"rank-{pid}.db")
        shutil.copy(os.path.join(data, "example-train.db"), p)
        db = sqlite3.connect(p)
        db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(pid),))
        db.execute("UPDATE meta SET value = value + ? WHERE key = 'clock_anchor_wall_ns'", (shift,))
        db.commit()
        db.close()
        paths.append(p)
    _, info_js, _ = run(["info", "--json"] + paths)
    _, ana_js, _ = run(["analyze", "--no-write", "--format", "json"] + paths)
    its, ats = json.loads(info_js)["traces"], json.loads(ana_js)["traces"]
    expect("two processes: both read", len(its) == 2 and len(ats) == 2, f"{len(its)} {len(ats)}")
    for it, at in zip(its, ats):
        expect("two processes: origin", it["time"].get("origin_ns") == at["origin_ns"],
               f"{it['time'].get('origin_ns')} {at['origin_ns']}")
        expect("two processes: peaks", it["memory"]["peaks"] == at["peaks"],
               f"info {it['memory']['peaks']}\nanalyze {at['peaks']}")
    late = [p for p in ats[1]["peaks"] if p["account"] == "device"][0]
    expect("two processes: the later one's times", late["reserved_at_ns"] == 810860933 + 500000000, str(late))
    hp = os.path.join(tmp, "ranks.html")
    run(["analyze", "--no-write", "--format", "html", "-o", hp] + paths)
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', open(hp).read(), re.S)
    offs = [t["off"] for t in json.loads(m.group(1))["traces"]] if m else None
    expect("two processes: HTML charts from the one origin", offs == [0, 500000000], str(offs))
    st, ev = perfetto(paths)
    firsts = sorted(min(e["ts"] for e in ev if e.get("pid") == pid and "ts" in e and e.get("ph") != "M")
                    for pid in (11, 12)) if st == 0 else None
    expect("two processes: Perfetto from the one origin", firsts == [0, 500000.0], str(firsts))
    print("ok   two processes read together")


def main():
    global VT
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    VT = sys.argv[1]
    files = []
    for d in sys.argv[2:]:
        if not os.path.isdir(d):
            continue
        for n in sorted(os.listdir(d)):
            p = os.path.join(d, n)
            if os.path.isfile(p) and not re.search(r"(\.LICENSE|README\.md|\.py|\.md)$", n):
                files.append(p)
    if not files:
        print("no file to check (a real-data directory not given): skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for p in files:  # a copy: nothing is written into the stored files
            c = os.path.join(tmp, os.path.basename(p))
            shutil.copy(p, c)
            check_file(c, tmp)
            os.unlink(c)
        for d in sys.argv[2:]:
            if os.path.exists(os.path.join(d, "example-train.db")):
                check_pair(d, tmp)
    print(f"{len(files)} files, {len(FAILS)} disagreements")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

"""The HTML report of the example, of 8, 64 and (without the browser) 1000 ranks, of a file without memory data and
of one that runs out of memory; in a browser.

    html_test.py VRAMTRACE EXAMPLE_TRACE NOMEM_TRACE OOM_TRACE [--browser] [--update]

Without --browser: the reports' size (the example's at most 1 MiB, 1000 ranks' at most 5 MiB), self-containment,
order (findings first), the figures the script draws (one scale, site curves, the peak's breakdown, the outlier
ranks marked and drawn in full), the imbalance paragraph, what a file without memory data or times says, and the
OOM of OOM_TRACE among the chart's figures.
With --browser: each report is also loaded in headless Chromium through puppeteer-core (check_html.mjs): no
console or page errors, no network request, no sideways scrolling at 1000 px, tick labels and titles on both
axes, no chart label (phase, capacity, peak, OOM) outside its chart or over another or a capacity line, a click
on a finding zooms its chart and draws its site, a hover shows a tooltip naming a site, a chart
marker selects its finding, print media hides the tools and makes a PDF, a small chart opens in place; and
screenshots of the example's chart and of the 64-rank grid match tests/html/expected/ (at most 2 % of pixels
differ). --update writes those PNGs and docs/img/report.png instead of comparing. Skips (exit 77) when Node.js,
Chromium ($VT_CHROMIUM, else chromium on PATH) or puppeteer-core ($VT_NPM_PREFIX, default ~/.cache/vramtrace-npm,
where .ci/run installs it) is missing.
"""
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

EXAMPLE_BOUND = 1024 * 1024       # bytes of the example's report
RANKS_BOUND = 5 * 1024 * 1024     # bytes of the 1000-rank report
SHOT_TOLERANCE = 0.02             # share of pixels a screenshot may differ by

vramtrace, example, nomem, oom = (os.path.abspath(a) for a in sys.argv[1:5])
browser = "--browser" in sys.argv[5:]
update = "--update" in sys.argv[5:]
here = os.path.dirname(os.path.abspath(__file__))
if browser:
    prefix = os.environ.get("VT_NPM_PREFIX") or os.path.expanduser("~/.cache/vramtrace-npm")
    module = os.path.join(prefix, "node_modules", "puppeteer-core", "lib", "esm", "puppeteer", "puppeteer-core.js")
    chromium = os.environ.get("VT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not shutil.which("node") or not chromium or not os.path.exists(module):
        print("skipped: Node.js, Chromium or puppeteer-core not installed "
              "(apt-get install chromium; npm install --prefix %s puppeteer-core)" % prefix)
        sys.exit(77)

tmp = tempfile.mkdtemp(prefix="vt_html_")
fail = []


def ranks(n):
    """n traces of one job (relative paths); rank 5 allocates 256 MiB more at its start, rank 6 (when there) 512 MiB."""
    d = "r%d" % n
    os.mkdir(os.path.join(tmp, d))
    paths = []
    for rank in range(n):
        path = os.path.join(d, "rank%04d.db" % rank)
        shutil.copy(example, os.path.join(tmp, path))
        db = sqlite3.connect(os.path.join(tmp, path))
        db.execute("UPDATE meta SET value = ? WHERE key = 'rank'", (str(rank),))
        db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(10000 + rank),))
        extra = {5: 256, 6: 512}.get(rank)
        if extra:
            db.execute("INSERT INTO memory_event(t, op, mem_kind, address, bytes, device)"
                       " SELECT min(t), 1, 3, 1, ?, 0 FROM memory_event", (extra << 20,))
        db.commit()
        db.close()
        paths.append(path)
    return paths


def report(name, paths):
    """analyze --format html of paths (relative to tmp, so the page shows the same text on every run)."""
    out = os.path.join(tmp, name + ".html")
    p = subprocess.run([vramtrace, "analyze", "--format", "html", "-o", out] + paths, cwd=tmp,
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        fail.append("%s: analyze exited %d: %s" % (name, p.returncode, p.stderr[-500:]))
    return out


def data(z):
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', z, re.S)
    return json.loads(m.group(1)) if m else None


shutil.copy(example, os.path.join(tmp, "example-train.db"))
if nomem.endswith(".gz") and os.environ.get("VT_HAVE_ZLIB") == "0":
    # a build without zlib refuses gzip'd inputs: the same file, unpacked here
    with gzip.open(nomem) as f, open(os.path.join(tmp, os.path.basename(nomem)[:-3]), "wb") as g:
        shutil.copyfileobj(f, g)
    nomem = nomem[:-3]
else:
    shutil.copy(nomem, os.path.join(tmp, os.path.basename(nomem)))
shutil.copy(oom, os.path.join(tmp, "example-oom.db"))
reports = {"example": report("example", ["example-train.db"]),
           "nomem": report("nomem", [os.path.basename(nomem)]),
           "oom": report("oom", ["example-oom.db"])}
COUNTS = (8, 64) if browser else (8, 64, 1000)  # the 1000-rank report (a minute to make) is checked without the browser
for n in COUNTS:
    reports["ranks%d" % n] = report("ranks%d" % n, ranks(n))
html = {k: open(v, encoding="utf-8").read() for k, v in reports.items()}
D = {k: data(z) for k, z in html.items()}

for k, z in html.items():
    if D[k] is None:
        fail.append("%s: no figures for the script" % k)
        continue
    if re.search(r'<(?:link|img|iframe)\b|<script[^>]* src=|url\(http|@import', z):
        fail.append("%s: refers to something outside the file" % k)
    if "Phases from none" in z or ">0 ns<" in z:
        fail.append("%s: 'Phases from none' or '0 ns' in the page" % k)
    if D[k]["traces"] and D[k]["finds"] and z.find('id="findings"') > z.find('<section class="proc"') >= 0:
        fail.append("%s: the findings do not come first" % k)

size = {k: os.path.getsize(v) for k, v in reports.items()}
if size["example"] > EXAMPLE_BOUND:
    fail.append("example: %d bytes, bound %d" % (size["example"], EXAMPLE_BOUND))
if size.get("ranks1000", 0) > RANKS_BOUND:
    fail.append("1000 ranks: %d bytes, bound %d" % (size["ranks1000"], RANKS_BOUND))

ex = D["example"]
if ex:
    t = ex["traces"][0]
    dev0 = [d for d in t["devs"] if d["id"] == 0]
    if not dev0 or not dev0[0]["cap"] or dev0[0]["n"] != 400 or not dev0[0]["curves"]:
        fail.append("example: device 0 with its capacity, 400 buckets and site curves expected")
    else:
        parts = dev0[0]["parts"]
        if sum(p["bytes"] for p in parts["items"]) != parts["total"] or "train.py:97" not in parts["items"][0]["label"]:
            fail.append("example: the peak's breakdown should sum to the peak, train.py:97 first: %s" % parts)
    f1 = ex["finds"][0]
    if f1["t0"] is None or f1["t1"] is None or f1["site"] not in t["sites"]:
        fail.append("example: the first finding should have a span and a site with a curve: %s" % f1)
    if 'class="chart"' not in html["example"]:
        fail.append("example: no chart")

if D["oom"] and not D["oom"]["traces"][0]["ooms"]:
    fail.append("oom: no OOM among the chart's figures")

if D["nomem"]:
    z = html["nomem"]
    if 'class="chart"' in z or "No memory chart" not in z or "0 B" in re.sub(r"<script.*", "", z, flags=re.S):
        fail.append("nomem: should say why there is no chart, with no chart and no 0 B")

for n in COUNTS:
    k = "ranks%d" % n
    if not D[k]:
        continue
    tr = D[k]["traces"]
    full = [i for i, t in enumerate(tr) if t["full"]]
    out = sorted(i for i, t in enumerate(tr) if t["out"])
    sections = re.findall(r'<section class="proc" id="p(\d+)"', html[k])
    m = re.search(r'<p class="imbalance">([^<]*)</p>', html[k])
    if not m or "highest 24.0 GiB (pid 10006, rank 6)" not in m.group(1) or "spread 512 MiB" not in m.group(1):
        fail.append("%s: imbalance paragraph wrong: %s" % (k, m and m.group(1)))
    if out[:2] != [5, 6] or len(out) != 2:
        fail.append("%s: ranks 5 and 6 should be the ones marked: %s" % (k, out))
    if n == 8 and (len(sections) != 8 or len(full) != 8):
        fail.append("8 ranks: every rank in full expected: %s" % sections)
    if n > 8 and ([int(s) for s in sections] != [5, 6] or full != [5, 6]):
        fail.append("%s: the outlier ranks 5 and 6 in full expected: %s, %s" % (k, sections, full))
    if n > 8 and any(t["devs"][0]["n"] != 80 or "curves" in t["devs"][0] for i, t in enumerate(tr) if i not in (5, 6)):
        fail.append("%s: small charts of 80 points expected" % k)
print("reports: " + ", ".join("%s %d bytes" % (k, v) for k, v in size.items()))

if browser and not fail:
    names = ["example", "ranks8", "ranks64", "nomem", "oom"]
    docs = os.path.join(here, "..", "..", "docs", "img", "report.png") if update else ""
    p = subprocess.run(["node", os.path.join(here, "check_html.mjs"), module, chromium, os.path.join(here, "expected"),
                        "1" if update else "0", docs] + [reports[n] for n in names],
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        fail.append("check_html.mjs failed: %s" % p.stderr[-2000:])
    else:
        for res in json.loads(p.stdout):
            name = res["file"]
            print("%s: width %d, %d charts (ticks %s), cards %d, shots %s" % (
                name, res["scrollWidth"], len(res["axes"]), [(len(a["x"]), len(a["y"])) for a in res["axes"]][:3],
                res["cards"], res["shots"]))
            if res["errors"]:
                fail.append("%s: console errors or requests %s" % (name, res["errors"][:5]))
            if res["clashes"]:
                fail.append("%s: chart labels outside the chart or over each other: %s" % (name, res["clashes"][:5]))
            if res["broken"]:
                fail.append("%s: headers or figures broken across lines: %s" % (name, res["broken"][:5]))
            if res["scrollWidth"] > 1000:
                fail.append("%s: scrolls sideways at 1000 px (%d)" % (name, res["scrollWidth"]))
            for a in res["axes"]:
                if len(a["x"]) < 3 or len(a["y"]) < 3 or not all(a["x"]) or len(a["titles"]) != 2:
                    fail.append("%s: axis ticks or titles missing: %s" % (name, a))
                elif name.startswith("ranks") and "of the %s traces" % name[5:-5] not in a["titles"][1]:
                    fail.append("%s: the time axis should name the common origin of its traces: %s" % (name, a["titles"]))
            for shot, r in res["shots"].items():
                if "frac" in r and r["frac"] > SHOT_TOLERANCE:
                    fail.append("%s: screenshot %s differs from the stored one: %.1f %% of pixels %s"
                                % (name, shot, 100 * r["frac"], r["size"]))
                if "missing" in r:
                    fail.append("%s: no stored screenshot %s (run with --update)" % (name, r["missing"]))
            if name == "example.html":
                c = res["click"]
                if not (c["hi"] - c["lo"] < c["dur"] / 2) or not c["site"] or "train.py:97" not in c["site"] \
                        or not c["siteCurves"] or c["selected"] != ["f1"]:
                    fail.append("example: a click on F1 should zoom to its span and draw its site: %s" % c)
                h = res["hover"]
                if not h["shown"] or "train.py" not in h["text"] or "GiB" not in h["text"]:
                    fail.append("example: the hover tooltip should show bytes and a site: %s" % h)
                if res["markers"] < 1 or res["markerSelects"] < 0 or not res["zoomIn"]:
                    fail.append("example: markers %d, marker click selected %d, zoom in %s"
                                % (res["markers"], res["markerSelects"], res["zoomIn"]))
                pr = res["print"]
                if pr["tools"] != "none" or pr["svgWidth"] > pr["pageWidth"] + 1 or res["pdfBytes"] < 10000:
                    fail.append("example: print: %s, PDF %d bytes" % (pr, res["pdfBytes"]))
                if len(res["axes"]) != 1:
                    fail.append("example: one chart expected, %d" % len(res["axes"]))
            if name.startswith("ranks"):
                n = int(name[5:-5])
                if res["cards"] != n or res["outCards"] != [5, 6] or not res["opened"]["open"] \
                        or res["opened"]["ticks"] < 6 or res["scrollWidthOpened"] > 1000:
                    fail.append("%s: %d small charts, framed %s, opened %s (width %d)" % (
                        name, res["cards"], res["outCards"], res["opened"], res["scrollWidthOpened"]))
            if name == "nomem.html" and res["axes"]:
                fail.append("nomem: no chart expected")
shutil.rmtree(tmp)
for f in fail:
    print("FAIL", f)
sys.exit(1 if fail else 0)

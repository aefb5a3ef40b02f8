"""The HTML report of 1, 8 and 1000 ranks: bounded size, one scale, the imbalance, the capacity; in a browser.

    html_test.py VRAMTRACE EXAMPLE_TRACE [--browser]

Without --browser: the reports' size and structure. With --browser: each report is also loaded in
headless Chromium through puppeteer-core (check_html.mjs): no console or page errors, no text label
overlapping another or leaving its SVG, a capacity line, every finding marker labelled. Skips (exit 77)
when Node.js, Chromium ($VT_CHROMIUM, else chromium on PATH) or puppeteer-core ($VT_NPM_PREFIX,
default ~/.cache/vramtrace-npm, where .ci/run installs it) is missing.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SIZE_BOUND = 2 * 1024 * 1024  # bytes of the 1000-rank report

vramtrace, example = sys.argv[1], sys.argv[2]
browser = "--browser" in sys.argv[3:]
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
    """n traces of one job; rank 5 allocates 256 MiB more at its start, rank 6 (when there) 512 MiB."""
    d = os.path.join(tmp, "r%d" % n)
    os.mkdir(d)
    paths = []
    for rank in range(n):
        path = os.path.join(d, "rank%04d.db" % rank)
        shutil.copy(example, path)
        if n > 1:
            db = sqlite3.connect(path)
            db.execute("UPDATE meta SET value = ? WHERE key = 'rank'", (str(rank),))
            db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(10000 + rank),))
            if n == 1000 and rank == 3:  # one rank on a larger device: the band names the smallest
                db.execute("UPDATE device SET total_bytes = 94 * 1024 * 1024 * 1024 WHERE total_bytes IS NOT NULL")
            extra = {5: 256, 6: 512}.get(rank)
            if extra:
                db.execute("INSERT INTO memory_event(t, op, mem_kind, address, bytes, device)"
                           " SELECT min(t), 1, 3, 1, ?, 0 FROM memory_event", (extra << 20,))
            db.commit()
            db.close()
        paths.append(path)
    return paths


def report(n):
    out = os.path.join(tmp, "ranks%d.html" % n)
    p = subprocess.run([vramtrace, "analyze", "--format", "html", "-o", out] + ranks(n),
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail.append("%d ranks: analyze exited %d: %s" % (n, p.returncode, p.stderr[-500:]))
    return out


reports = {n: report(n) for n in (1, 8, 1000)}
html = {n: open(reports[n], encoding="utf-8").read() for n in reports}
for n, z in html.items():
    if 'class="capacity"' not in z:
        fail.append("%d ranks: no capacity line" % n)
    tops = set(re.findall(r'<svg [^>]*aria-label="live memory over time">\n<rect[^>]*/>\n<text[^>]*>[^<]*</text>'
                          r'(?:<text[^>]*>[^<]*</text>){3}<text[^>]*>([^<]*)</text>', z))
    if len(tops) != 1:
        fail.append("%d ranks: the timelines' scales differ (top ticks %s)" % (n, sorted(tops)))
size = os.path.getsize(reports[1000])
if size >= SIZE_BOUND:
    fail.append("1000 ranks: %d bytes, bound %d" % (size, SIZE_BOUND))
for n in (8, 1000):
    m = re.search(r'<p class="imbalance">([^<]*)</p>', html[n])
    if not m or "highest 24.0 GiB (pid 10006, rank 6)" not in m.group(1) or "spread 512 MiB" not in m.group(1):
        fail.append("%d ranks: imbalance paragraph wrong: %s" % (n, m and m.group(1)))
sections = re.findall(r"<h2>Process pid (\d+), rank", html[1000])
if 'class="band"' not in html[1000] or not {"10005", "10006"} <= set(sections) or len(sections) > 8:
    fail.append("1000 ranks: band with the outlier ranks 5 and 6 expected, drawn: %s" % sections)
band_cap = re.search(r'aria-label="live memory of all ranks over time">.*?<line class="capacity"[^>]*><title>([^<]*)</title>'
                     r'.*?class="capacity-label"[^>]*>([^<]*)<', html[1000], re.S)
small = band_cap and re.search(r"smallest device capacity of the 1000 ranks: ([0-9.]+ GiB); largest 94.0 GiB",
                               band_cap.group(1))
if not small or small.group(1) == "94.0 GiB" or band_cap.group(2) != "min " + small.group(1):
    fail.append("1000 ranks: band capacity should be the smallest (the example's device, not 94 GiB): %s"
                % (band_cap and band_cap.groups(),))
if len(re.findall(r"<h2>Process", html[8])) != 8 or 'class="band"' in html[8]:
    fail.append("8 ranks: every rank's timeline expected, no band")
print("reports: 1 rank %d bytes, 8 ranks %d, 1000 ranks %d (bound %d)"
      % (len(html[1]), len(html[8]), size, SIZE_BOUND))

if browser and not fail:
    p = subprocess.run(["node", os.path.join(here, "check_html.mjs"), module, chromium]
                       + [reports[n] for n in (1, 8, 1000)], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail.append("check_html.mjs failed: %s" % p.stderr[-2000:])
    else:
        for res in json.loads(p.stdout):
            name = os.path.basename(res["file"])
            print("%s: %d SVGs, %d labels, %d finding markers, %d capacity lines"
                  % (name, res["svgs"], res["texts"], res["markers"], res["capacity"]))
            if res["errors"]:
                fail.append("%s: console errors %s" % (name, res["errors"][:5]))
            if res["overlaps"]:
                fail.append("%s: overlapping labels %s" % (name, res["overlaps"][:5]))
            if res["outside"]:
                fail.append("%s: labels leaving their SVG %s" % (name, res["outside"][:5]))
            if not res["capacity"] or not res["markers"] or res["unlabelled"]:
                fail.append("%s: capacity %d, markers %d, unlabelled %d"
                            % (name, res["capacity"], res["markers"], res["unlabelled"]))
            if name == "ranks1000.html" and (res["band"] != 1 or res["outliers"] < 2):
                fail.append("%s: band %d, outliers %d" % (name, res["band"], res["outliers"]))
shutil.rmtree(tmp)
for f in fail:
    print("FAIL", f)
sys.exit(1 if fail else 0)

#!/usr/bin/env python3
"""What the HTML report's script draws reads as the text report says it: a phase's span on the chart widened outward
to its last digit (docs/cli.md, "Times and figures"), so the two reports agree and a window read off the page, pasted
into export --from/--to, holds every event of it; and an OOM marker of a request of unknown size (an Nsight export's
failed cudaMalloc) says so, not "0 B requested". The page is run in headless Chromium (--dump-dom); skipped (77)
without Chromium.

usage: html_windows_test.py VRAMTRACE TRACE [OOM_TRACE]
"""
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile


def dom(vt, chromium, trace):
    """The report of trace as the page's script leaves it."""
    with tempfile.TemporaryDirectory() as d:
        page = os.path.join(d, "report.html")
        subprocess.run([vt, "analyze", "--format", "html", "-o", page, trace], check=True, capture_output=True)
        return subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + d,
                               "--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120).stdout


def main():
    vt, trace = sys.argv[1], sys.argv[2]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: no chromium")
        return 77
    if len(sys.argv) > 3:
        z = dom(vt, chromium, sys.argv[3])
        if "out of memory: a request of unknown size at 39 ns" not in z or "0 B requested" in z:
            print("OOM marker of unknown size:", re.findall(r"<title>out of memory[^<]*</title>", z))
            return 1
    text = subprocess.run([vt, "analyze", trace], capture_output=True, text=True, check=True).stdout
    # "    training   train                804.0 ms .. 1.40 s, peak 23.5 GiB, 8 iterations"
    want = re.findall(r"^    (training|evaluation) +(\S+) +(.+?) \.\. (.+?), peak", text, re.M)
    assert want, "no phases in the text report:\n" + text
    got = [tuple(m) for m in re.findall(r'<rect class="phase"[^>]*><title>([^<]*) \((training|evaluation)\): '
                                        r'([^<]*?) \.\. ([^<]*?)</title>', dom(vt, chromium, trace))]
    got = [(k, html.unescape(n), a, b) for n, k, a, b in got]
    assert got, "the script drew no phase (is it on?)"
    if got != [tuple(w) for w in want]:
        print("text report's phases:", want)
        print("HTML chart's phases: ", got)
        return 1
    print("%d phase windows alike in text and HTML: %s" % (len(got), got))
    return 0


if __name__ == "__main__":
    sys.exit(main())

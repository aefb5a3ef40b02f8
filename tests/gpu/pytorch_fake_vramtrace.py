#!/usr/bin/env python3
"""Test double of the `vramtrace` command for pytorch_check_test.py: runs pytorch-run.sh end to end.

`record` checks the command line pytorch-run.sh built (mode flag, output pattern, the
scenario script and its arguments, VRAMTRACE_STATS_OUT) and, instead of running the job,
writes what a passing run leaves: a trace, a DataLoader worker's empty trace, the stats,
and the findings its analysis would give (a side file). `analyze` turns those into the JSON
report (recording its own arguments in it). FAKE_VT_BREAK=NAME-MODE drops that run's
findings, so the harness must fail. Exit status 9 means the command line was not the expected one.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def bad(msg):
    sys.stderr.write(f"fake vramtrace: {msg}\n")
    sys.exit(9)


def record(argv):
    import pytorch_check as pc
    import pytorch_check_test as t
    tensors = argv[0] == "--tensors"
    if tensors:
        argv = argv[1:]
    if argv[0] != "-o" or argv[2] != "--":
        bad(f"record options {argv}")
    pattern, cmd = argv[1], argv[3:]
    m = re.match(r"^(.*)/([a-z_]+)-(default|tensors)-%p\.db$", pattern)
    if not m or (m.group(3) == "tensors") != tensors:
        bad(f"output pattern {pattern}")
    name, mode = m.group(2), m.group(3)
    sc = next((s for s in pc.SCENARIOS if s.name == name), None)
    if not sc or cmd[1] != os.path.join(pc.SCRIPT_DIR, sc.script) or tuple(cmd[2:]) != sc.args:
        bad(f"command {cmd} for {name}")
    stats_out = os.environ.get("VRAMTRACE_STATS_OUT")
    if stats_out != os.path.join(m.group(1), f"{name}-{mode}.stats.json"):
        bad(f"VRAMTRACE_STATS_OUT {stats_out}")
    pid = 1000 + [s.name for s in pc.SCENARIOS].index(name) * 10 + (mode == "tensors")
    result = {}
    trace = t.tensor_trace(pid) if tensors else t.segment_trace(pid)
    if "oom" in sc.expect[mode].require:
        result = {"oom_caught": True, "expected_request_bytes": 100 << 30}
        trace.oom(100 << 30)
    stats = (t.tensor_stats if tensors else t.segment_stats)(pid, name, **result)
    path = pattern.replace("%p", str(pid))
    trace.save(path)
    t.Trace(pid + 5, tensors).save(pattern.replace("%p", str(pid + 5)))
    with open(stats_out, "w") as f:
        json.dump(stats, f)
    markers = pc.read_markers(os.path.join(pc.SCRIPT_DIR, sc.script))
    findings = [] if os.environ.get("FAKE_VT_BREAK") == f"{name}-{mode}" else [
        {"pid": str(pid), "kind": k, "severity": "medium", "title": f"planted {k}",
         "site": f"/repo/{pc.SCRIPT_DIR}/{sc.script}:{markers[k][0]} in f"} for k in sc.expect[mode].require]
    with open(path + ".findings.json", "w") as f:
        json.dump(findings, f)
    print(f"ran {' '.join(cmd)}")
    return 0


def analyze(argv):
    out, fmt, traces, opts = None, "text", [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "--format", "--min-bytes"):
            if a == "-o":
                out = argv[i + 1]
            elif a == "--format":
                fmt = argv[i + 1]
            else:
                opts += [a, argv[i + 1]]
            i += 2
            continue
        if a == "--no-write":
            opts.append(a)
        else:
            traces.append(a)
        i += 1
    findings = []
    for p in traces:
        if os.path.exists(p + ".findings.json"):
            findings += json.load(open(p + ".findings.json"))
    doc = {"vramtrace_report_version": 1, "argv": opts, "traces": traces, "findings": findings}
    text = json.dumps(doc) if fmt == "json" else f"{len(findings)} findings\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv):
    if argv[1:] == ["--version"]:
        print("vramtrace (test double)")
        return 0
    if argv[1] == "record":
        return record(argv[2:])
    if argv[1] == "analyze":
        return analyze(argv[2:])
    bad(f"subcommand {argv[1:]}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))

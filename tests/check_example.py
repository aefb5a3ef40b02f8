#!/usr/bin/env python3
"""Analyze the shipped example traces and check what analyze says and what the trace holds.

tests/data/example-train.db (tests/make_example_trace.c): a PyTorch training job as the tracer
records it, whose validation keeps each batch's output with its graph; the findings, the site
at the peak, and the rows a real trace has (api_call, kernel_name, nested NVTX, stacks, uses).
tests/data/example-train-v1.db (schema 1, the earlier tensor-level story): its exact findings
and what was live at its OOM.

    check_example.py VRAMTRACE TRACE [--gen MAKE_EXAMPLE_TRACE]

--gen: TRACE must also be what make_example_trace writes today (every row of every table, and the
schema, alike), so that the shipped example follows the schema and the job model.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter

GiB = 1 << 30
EXPECTED_V1 = sorted([
    ("validation_spike", "high", "phase 'validation' (nvtx)"),
    ("validation_spike", "high", "train.py:88 in validate"),
    ("oom", "high", "train.py:88 in validate"),
    ("transfer", "high", "host-device copies"),
    ("leak", "high", "train.py:57 in train_one_epoch"),
])  # the 96 MiB of losses live when the job died at its OOM are the OOM's (live at the crash), not a second leak


def check_v1(report):
    """The schema-1 trace's story: exact findings, the OOM's verdict and what was live at it."""
    got = sorted((f["kind"], f["severity"], f["site"]) for f in report["findings"])
    if got != EXPECTED_V1:
        print("findings differ from the expected ones")
        print("expected:", *EXPECTED_V1, sep="\n  ")
        print("got:", *got, sep="\n  ")
        return 1
    oom = [f for f in report["findings"] if f["kind"] == "oom"][0]
    if "real demand" not in oom["title"] or oom["bytes"] != 32 << 30:
        print("OOM verdict or size wrong:", oom["title"], oom["bytes"])
        return 1
    # what was live at the OOM, by call site and memory kind, largest group first
    groups = [(g["count"], g["bytes"], g["site"], g["mem_kind"], g["largest"]["bytes"])
              for g in report["traces"][0]["ooms"][0]["live_groups"]]
    expected_groups = [
        (48, 48 << 30, "train.py:88 in validate", 3, 1 << 30),
        (1, 4 << 30, "train.py:24 in main", 3, 4 << 30),
        (1, 2 << 30, "train.py:20 in main", 3, 2 << 30),
        (6, 96 << 20, "train.py:57 in train_one_epoch", 3, 16 << 20),
    ]
    if groups != expected_groups:
        print("OOM live groups differ from the expected ones")
        print("expected:", *expected_groups, sep="\n  ")
        print("got:", *groups, sep="\n  ")
        return 1
    if "Largest live: 48 allocations, 48.0 GiB from train.py:88 in validate (device), largest 1.00 GiB; " \
       "1 allocation, 4.00 GiB from train.py:24 in main (device);" not in oom["evidence"]:
        print("OOM evidence does not group what was live by site:", oom["evidence"])
        return 1
    # the job ended at it: what is live at the end was live at the crash, held by the OOM finding
    fail = report["traces"][0]["oom_failures"]
    if len(fail) != 1 or not fail[0]["job_ended_here"] or fail[0]["live_at_end_count"] != 56 or \
       "The job ended at this failure" not in oom["evidence"]:
        print("the job's end at its OOM not said:", fail, oom["evidence"])
        return 1
    print(f"{len(got)} findings as expected")
    return 0


SITE = "/home/alice/projects/trainer/train.py"
EXPECTED = sorted([
    ("validation_spike", "high", SITE + ":97 in validate"),
    ("leak", "info", "caching allocator (segment level)"),
    ("transfer", "info", SITE + ":151 in main"),
])


def check_job(report, trace):
    """The PyTorch job: the planted problem found where a user looks for it, and a real trace's rows."""
    fail = []
    got = sorted((f["kind"], f["severity"], f["site"]) for f in report["findings"])
    if got != EXPECTED:
        fail.append("findings differ: expected %s, got %s" % (EXPECTED, got))
    spikes = [f for f in report["findings"] if f["kind"] == "validation_spike"]
    if spikes and not (12 * GiB < spikes[0]["bytes"] < 14 * GiB and spikes[0]["count"] == 6
                       and "grows batch by batch" in spikes[0]["title"]):
        fail.append("validation spike: %s, %d bytes over %d batches" % (spikes[0]["title"], spikes[0]["bytes"],
                                                                          spikes[0]["count"]))
    # at the device's peak (in validation), most of what is live comes from the line keeping outputs
    by_site = Counter()
    for g in report["traces"][0]["devices"][0]["live_at_peak_groups"]:
        by_site[g["site"]] += g["bytes"]
    top = by_site.most_common(1)
    if not top or top[0][0] != SITE + ":97 in validate" or top[0][1] < sum(by_site.values()) // 2:
        fail.append("the peak's largest site is %s, not train.py:97 in validate" % (top,))
    # the pin-memory thread's pinned blocks, live to the end: the by-site table counts them as live
    pin = [s for s in report["traces"][0].get("sites", []) if "pin_memory.py:90" in s["site"]]
    if not pin or pin[0]["peak_live_bytes"] != 64 << 20 or pin[0]["live_at_exit_bytes"] != 64 << 20:
        fail.append("pinned site's peak live / live at exit: %s" % (pin,))
    # the start-up copies alone: host-to-device, ended before the first kernel (not the loss copies after)
    startup = [f for f in report["findings"] if f["kind"] == "transfer"]
    first_kernel = report["traces"][0]["transfers"]["first_kernel_ts"]
    if not startup or "host-to-device copies" not in startup[0]["title"] or startup[0]["last_ts"] > first_kernel:
        fail.append("start-up transfer finding: %s" % ([(f["title"], f["last_ts"]) for f in startup], ))
    # what the tracer writes on a PyTorch job
    if os.path.getsize(trace) >= 2 << 20:
        fail.append("the example is %d bytes (at most 2 MiB)" % os.path.getsize(trace))
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    one = lambda sql: db.execute(sql).fetchone()[0]
    checks = [
        ("kernels without their launch's api_call row",
         "SELECT count(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM api_call c WHERE c.correlation = k.correlation)", 0),
        ("kernel names without a kernel_name row",
         "SELECT count(DISTINCT name_id) FROM kernel WHERE name_id NOT IN (SELECT name_id FROM kernel_name)", 0),
        ("mangled names demangled (void at::native::...)",
         "SELECT count(*) > 0 FROM kernel_name n JOIN string m ON m.id = n.name_id JOIN string d ON d.id = n.demangled_id"
         " WHERE m.value GLOB '_ZN2at6native*' AND d.value GLOB 'void at::native::*'", 1),
        ("mangled kernel names with a short name in the Nsight view",
         "SELECT count(*) > 0 FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds m ON m.id = k.mangledName"
         " JOIN StringIds s ON s.id = k.shortName WHERE m.value GLOB '_Z*' AND s.value NOT GLOB '_Z*'", 1),
        ("NVTX nesting epoch > train/validation > step",
         "SELECT group_concat(d, ',') FROM (SELECT DISTINCT n.depth || ':' || CASE WHEN s.value GLOB '* [0-9]*'"
         " THEN substr(s.value, 1, instr(s.value, ' ') - 1) ELSE s.value END AS d FROM nvtx_range n"
         " JOIN string s ON s.id = n.name_id ORDER BY 1)", "0:epoch,1:train,1:validation,2:step"),
        ("buffer uses of kernels and of both ends of copies",
         "SELECT group_concat(kind, ',') FROM (SELECT DISTINCT kind FROM buffer_use ORDER BY 1)", "0,1,2"),
        ("caching-allocator segments (cudaMalloc of 2 MiB multiples)",
         "SELECT count(*) > 100 AND sum(bytes % 2097152) = 0 FROM memory_event WHERE op = 1 AND mem_kind = 3", 1),
        ("the cuBLAS workspace allocated under cuBLAS's frames",
         "SELECT count(*) > 0 FROM frame f JOIN string s ON s.id = f.function_id"
         " WHERE s.value GLOB '*getCurrentCUDABlasHandle*'", 1),
        ("Python frames over native ones in one stack",
         "SELECT count(*) > 0 FROM stack WHERE id IN (SELECT stack_id FROM frame WHERE kind = 1)"
         " AND id IN (SELECT stack_id FROM frame WHERE kind = 0)", 1),
    ]
    for what, sql, want in checks:
        have = one(sql)
        if have != want:
            fail.append("%s: %r, expected %r" % (what, have, want))
    db.close()
    for f in fail:
        print(f)
    if fail:
        return 1
    print(f"{len(got)} findings and {len(checks)} trace checks as expected")
    return 0


def current(gen, trace):
    """Complaints where trace is not what make_example_trace (gen) writes today."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, "example-train.db")
        subprocess.run([gen, fresh], check=True, capture_output=True, timeout=300)
        dumps = []
        for db in (trace, fresh):
            c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            dumps.append(list(c.iterdump()))
            c.close()
    if dumps[0] == dumps[1]:
        return []
    differ = [a for a, b in zip(*dumps) if a != b][:3]
    return ["%s is not what make_example_trace writes today (%d statements against %d; first differing: %s): "
            "write it again (tests/data/README.md)" % (trace, len(dumps[0]), len(dumps[1]), [d[:160] for d in differ])]


def main():
    vramtrace, trace = sys.argv[1], sys.argv[2]
    if "--gen" in sys.argv:
        stale = current(sys.argv[sys.argv.index("--gen") + 1], trace)
        if stale:
            print(stale[0])
            return 1
    run = subprocess.run([vramtrace, "analyze", "--no-write", "--by-site", "--format", "json", trace],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        print(f"analyze exited {run.returncode}: {run.stderr}")
        return 1
    report = json.loads(run.stdout)
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    db.close()
    if str(version) == "1":
        return check_v1(report)
    # the text lists 5 groups at the peak and says what it left out, so that the list sums to the live set
    text = subprocess.run([vramtrace, "analyze", "--no-write", trace], capture_output=True, text=True, timeout=120)
    flat = " ".join(text.stdout.split())
    if "and 9 more allocations, 54.0 MiB, from 4 other sites or kinds" not in flat:
        print("the text's live-at-peak list does not say what it left out:\n" + text.stdout)
        return 1
    return check_job(report, trace)


if __name__ == "__main__":
    sys.exit(main())

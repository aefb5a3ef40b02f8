"""Tests of the record hook (analyzer/pyhook/sitecustomize.py) on a stand-in torch: history, and torch.profiler lent CUPTI.

    pyhook_test.py HOOK_DIR FAKE_TORCH_DIR

Each case runs a small Python job the way `vramtrace record` starts one (the hook first on
PYTHONPATH, VRAMTRACE_PYTORCH_HISTORY=1, VRAMTRACE_SNAPSHOT_DIR) and checks what the hook asked
of torch, the files it wrote, what the job's own sitecustomize did and what reached stderr.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

HOOK, FAKE = sys.argv[1], sys.argv[2]
failures = []


def run(job, env_extra=None, history=True, own_site=True, own_code=""):
    """Run job (Python source); returns (rc, stderr, calls, files in the snapshot dir, own-site marker)."""
    tmp = tempfile.mkdtemp(prefix="vt_pyhook_")
    site = os.path.join(tmp, "site")
    out = os.path.join(tmp, "out")
    os.mkdir(site)
    os.mkdir(out)
    marker = os.path.join(tmp, "own_site_ran")
    if own_site:
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write("open(%r, 'w').write('yes')\n" % marker + own_code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VRAMTRACE_", "VT_FAKE_", "PYTHON"))}
    env["PYTHONPATH"] = os.pathsep.join([HOOK, FAKE, site])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no bytecode beside the sources
    env["VT_FAKE_LOG"] = os.path.join(tmp, "calls.jsonl")
    env["VRAMTRACE_SNAPSHOT_DIR"] = out
    if history:
        env["VRAMTRACE_PYTORCH_HISTORY"] = "1"
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", job], env=env, capture_output=True, text=True, timeout=60)
    calls = []
    if os.path.exists(env["VT_FAKE_LOG"]):
        with open(env["VT_FAKE_LOG"]) as f:
            calls = [json.loads(line) for line in f]
    return p.returncode, p.stderr, calls, sorted(os.listdir(out)), os.path.exists(marker)


def check(name, cond, detail=""):
    print(("ok     " if cond else "FAIL   ") + name + ("" if cond else ": " + detail))
    if not cond:
        failures.append(name)


base = "vramtrace-%s-" % socket.gethostname()

# 1. a training job: history asked once CUDA is up, one snapshot per OOM, snapshot and stats at exit
job = """
import torch
torch.cuda.init()
for _ in range(2):
    try:
        torch.cuda.fake_oom(1 << 40)
    except RuntimeError:
        pass
import os
print(os.getpid())
"""
rc, err, calls, files, own = run(job, {"VRAMTRACE_HISTORY_ENTRIES": "1234", "VRAMTRACE_HISTORY_STACKS": "all"})
hist = [c for c in calls if c["call"] == "record_memory_history"]
check("history asked once, with the options", rc == 0 and len(hist) == 1 and hist[0]["max_entries"] == 1234
      and hist[0]["stacks"] == "all" and hist[0]["enabled"] == "all" and hist[0]["context"] == "all", str(calls) + err)
pid = hist[0]["pid"] if hist else 0
want = sorted([base + "%d.oom-1.snapshot.pickle" % pid, base + "%d.oom-2.snapshot.pickle" % pid,
               base + "%d.snapshot.pickle" % pid, base + "%d.memory_stats.json" % pid])
check("snapshots at each OOM and at exit, stats at exit", files == want, "%s != %s" % (files, want))
check("the job's own sitecustomize still runs", own)
check("nothing on stderr", err == "", err)

# 2. the defaults: python stacks, 100000 entries
rc, err, calls, files, own = run("import torch; torch.cuda.init()")
hist = [c for c in calls if c["call"] == "record_memory_history"]
check("default entries and stacks", hist and hist[0]["max_entries"] == 100000 and hist[0]["stacks"] == "python",
      str(calls))

# 3. a job that never imports torch: unchanged (no call, no file, no output)
rc, err, calls, files, own = run("print('hello')")
check("no torch: nothing done", rc == 0 and calls == [] and files == [] and err == "" and own, "%s %s %s" % (calls, files, err))

# 4. torch imported, CUDA never initialized: nothing asked, nothing written
rc, err, calls, files, own = run("import torch")
check("no CUDA: nothing done", rc == 0 and calls == [] and files == [] and err == "", "%s %s %s" % (calls, files, err))

# 5. PyTorch 2.0's history signature
rc, err, calls, files, own = run("import torch; torch.cuda.init()", {"VT_FAKE_OLD_TORCH": "1"})
old = [c for c in calls if c["call"] == "record_memory_history_v20"]
check("PyTorch 2.0's signature", rc == 0 and len(old) == 1 and old[0]["max_entries"] == 100000 and err == "",
      "%s %s" % (calls, err))

# 6. a torch without the history: one line, the job runs on
rc, err, calls, files, own = run("import torch; torch.cuda.init(); print('done')", {"VT_FAKE_NO_HISTORY": "1"})
check("no history in this torch: one line", rc == 0 and err.count("vramtrace:") == 1
      and "no torch.cuda.memory._record_memory_history" in err and files == [], "%s %s" % (err, files))

# 7. --no-pytorch-history: the hook stays out of the way
rc, err, calls, files, own = run("import torch; torch.cuda.init()", history=False)
check("history off: nothing asked", rc == 0 and calls == [] and files == [] and own, "%s %s" % (calls, files))

# 8. a forked child that exits normally writes nothing of its own (the parent's dump is the one)
job = """
import os, torch
torch.cuda.init()
pid = os.fork()
if pid == 0:
    raise SystemExit(0)
os.waitpid(pid, 0)
"""
rc, err, calls, files, own = run(job)
dumps = [c for c in calls if c["call"] == "dump_snapshot"]
check("fork: only the parent dumps", rc == 0 and len(dumps) == 1 and len(files) == 2, "%s %s" % (dumps, files))

# 9. torch already imported by the job's own sitecustomize (before the hook could watch for it)
rc, err, calls, files, own = run("import torch; torch.cuda.init()", own_code="import torch\n")
check("torch imported by the job's sitecustomize", rc == 0 and own and len(files) == 2
      and any(c["call"] == "record_memory_history" for c in calls), "%s %s %s" % (calls, files, err))

# 10. no own sitecustomize: nothing to chain, no error
rc, err, calls, files, own = run("import torch; torch.cuda.init()", own_site=False)
check("no own sitecustomize", rc == 0 and err == "" and len(files) == 2, "%s %s" % (err, files))

# 11. torch.profiler beside the tracer: the control marks around Kineto's prepare and stop, in order
LEND = {"VRAMTRACE_LEND_CUPTI": "1"}
CTL = "vramtrace-cupti:"


def seq(calls):
    """The profiler calls and marks in order, marks shortened to their verb."""
    out = []
    for c in calls:
        if c["call"] == "nvtx_mark":
            out.append(c["msg"][len(CTL):] if c["msg"].startswith(CTL) else "mark " + c["msg"])
        elif c["call"] in ("prepare_profiler", "disable_profiler"):
            out.append(c["call"] + ("" if "activities" not in c else " " + ",".join(c["activities"])))
    return out


job = """
import torch
from torch.profiler import profile, ProfilerActivity
torch.cuda.nvtx.mark("job's own")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
    torch.cuda.nvtx.mark("inside")
with profile(activities=[ProfilerActivity.CPU]):
    pass
with torch.autograd.profiler.profile(use_device="cuda"):
    pass
"""
rc, err, calls, files, own = run(job, LEND, history=False)
want = ["mark job's own",
        "lend:torch.profiler", "prepare_profiler CPU,CUDA", "lent:torch.profiler", "mark inside",
        "disable_profiler", "return:torch.profiler",
        "prepare_profiler CPU", "disable_profiler",
        "lend:torch.profiler", "prepare_profiler CPU,CUDA", "lent:torch.profiler",
        "disable_profiler", "return:torch.profiler"]
check("lend: marks around each CUDA profile, none around a CPU one", rc == 0 and seq(calls) == want and err == "",
      "%s\n%s" % (seq(calls), err))

# 12. a prepare that fails gives CUPTI back at once; the error is the job's
job = """
import torch
try:
    with torch.profiler.profile():
        pass
except RuntimeError as e:
    print("raised", e)
"""
rc, err, calls, files, own = run(job, dict(LEND, VT_FAKE_PREPARE_FAILS="1"), history=False)
check("lend: a failed prepare returns CUPTI", rc == 0 and seq(calls) == ["lend:torch.profiler", "return:torch.profiler"],
      "%s %s" % (seq(calls), err))

# 13. VRAMTRACE_LEND_CUPTI=0 (record --keep-cupti): start and stop marked, nothing lent; unset: no mark
job = "import torch\nwith torch.profiler.profile():\n    pass\n"
rc, err, calls, files, own = run(job, {"VRAMTRACE_LEND_CUPTI": "0"}, history=False)
check("keep-cupti: start and stop marked", rc == 0 and seq(calls) == [
      "start:torch.profiler", "prepare_profiler CPU,CUDA", "disable_profiler", "stop:torch.profiler"],
      "%s %s" % (seq(calls), err))
rc, err, calls, files, own = run(job, history=False)
check("no hook setting: no marks", rc == 0 and seq(calls) == ["prepare_profiler CPU,CUDA", "disable_profiler"],
      "%s %s" % (seq(calls), err))

# 14. with the history too: both, independently
rc, err, calls, files, own = run("import torch\ntorch.cuda.init()\nwith torch.profiler.profile():\n    pass\n", LEND)
check("lend and history together", rc == 0 and "lent:torch.profiler" in seq(calls)
      and any(c["call"] == "record_memory_history" for c in calls), "%s %s" % (seq(calls), err))

# 15. a profile started in a forked child of the job is not lent (the tracer does not trace children)
job = """
import os, torch
pid = os.fork()
if pid == 0:
    with torch.profiler.profile():
        pass
    os._exit(0)
os.waitpid(pid, 0)
"""
rc, err, calls, files, own = run(job, LEND, history=False)
check("lend: not in a forked child", rc == 0 and seq(calls) == ["prepare_profiler CPU,CUDA", "disable_profiler"],
      "%s %s" % (seq(calls), err))

print("%d failed" % len(failures))
sys.exit(1 if failures else 0)

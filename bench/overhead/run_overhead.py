"""Overhead driver: times the training workloads without a tracer, with the floor CUPTI client and with vramtrace.

For every model it runs workload.py under each configuration, interleaved
(every repetition runs every configuration once, in an order rotated from
one repetition to the next), then prints per configuration the median of
the timed loop, its ratio to the untraced run and to the floor CUPTI client,
the median process wall time (start-up and trace close included) and the
trace size. Configurations:

  none          no tracer
  none-tensors  no tracer, PyTorch allocating per tensor (the allocator
                vramtrace --tensors selects): the baseline of vt-tensors
  floor         libvt_cupti_floor.so: vramtrace's activity kinds, buffers discarded
  vt            vramtrace record (default mode)
  vt-tensors    vramtrace record --tensors
  vt-nosites    vramtrace record --no-python-stacks --backtrace 0
  vt-noargs     vramtrace record --no-kernel-args

A run counts only if the tracer said it attached ("vramtrace: tracing
process" or the "cupti_floor:" summary line on stderr); otherwise the driver
stops with the run's stderr, since a silently untraced run would make the
figures meaningless. Traces go to a temporary directory and are removed
after their size is taken (--keep-traces keeps them).

    python3 bench/overhead/run_overhead.py --build build-bench [--models resnet,transformer]
        [--configs none,floor,vt,...] [--repeats 5] [--warmup 20] [--iters 100] [--json out.json]
        [--workload workload.py]

With --json, the file is rewritten after every repetition ("partial": true until the
last), so a run stopped early still leaves every figure measured so far.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ("none", "none-tensors", "floor", "vt", "vt-tensors", "vt-nosites", "vt-noargs")
TENSORS_CONF = "backend:cudaMallocAsync"
VT_OPTS = {
    "vt": [],
    "vt-tensors": ["--tensors"],
    "vt-nosites": ["--no-python-stacks", "--backtrace", "0"],
    "vt-noargs": ["--no-kernel-args"],
}


def find_cupti(python):
    """Path of the libcupti.so.13 the job will load (PyTorch's wheel first, then the toolkit), or None."""
    code = ("import glob, os, site; d = site.getsitepackages() + [site.getusersitepackages()];"
            "print('\\n'.join(p for s in d for p in glob.glob(os.path.join(s, 'nvidia', '*', 'lib', 'libcupti.so*'))"
            " + glob.glob(os.path.join(s, 'nvidia', '*', '*', 'lib', 'libcupti.so*'))))")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    out += sorted(glob.glob("/usr/local/cuda/lib64/libcupti.so*")) + sorted(glob.glob("/usr/local/cuda/lib/libcupti.so*"))
    out += sorted(glob.glob("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so*"))
    return out[0] if out else None


def base_env(args):
    """The environment every configuration starts from: no tracer variables, libcupti's folder searchable."""
    env = dict(os.environ)
    for k in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        env.pop(k, None)
    if args.cupti:
        d = os.path.dirname(args.cupti)
        env["LD_LIBRARY_PATH"] = d + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env["VRAMTRACE_CUPTI"] = args.cupti
    return env


def command(args, config, model, tracedir):
    """(argv, env, attach marker or None) for one run of model under config."""
    env = base_env(args)
    job = [args.python, args.workload, "--model", model,
           "--warmup", str(args.warmup), "--iters", str(args.iters)]
    if args.amp:
        job.append("--amp")
    if config == "none":
        return job, env, None
    if config == "none-tensors":
        env["PYTORCH_ALLOC_CONF"] = TENSORS_CONF
        env["PYTORCH_CUDA_ALLOC_CONF"] = TENSORS_CONF
        return job, env, None
    if config == "floor":
        env["CUDA_INJECTION64_PATH"] = args.floor
        if args.cupti:
            env["NVTX_INJECTION64_PATH"] = args.cupti
        return job, env, "cupti_floor: pid"
    argv = [args.vramtrace, "record", "-o", os.path.join(tracedir, "%p.db")] + VT_OPTS[config] + ["--"] + job
    return argv, env, "vramtrace: tracing process"


def run_once(args, config, model):
    """Run one configuration once; returns a dict of figures. Exits the driver on failure."""
    tracedir = tempfile.mkdtemp(prefix="vt-overhead-", dir=args.tmp)
    argv, env, marker = command(args, config, model, tracedir)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - t0
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    if proc.returncode != 0 or result is None or (marker and marker not in proc.stderr):
        sys.stderr.write("run_overhead: %s / %s failed (exit %d%s)\n--- command: %s\n--- stderr:\n%s\n" % (
            model, config, proc.returncode, ", tracer not attached" if result and marker else "",
            " ".join(argv), proc.stderr[-4000:]))
        shutil.rmtree(tracedir, ignore_errors=True)
        sys.exit(1)
    traces = glob.glob(os.path.join(tracedir, "*.db"))
    result["wall_s"] = wall
    result["trace_bytes"] = sum(os.path.getsize(p) for p in traces)
    result["traces"] = len(traces)
    if args.keep_traces:
        result["trace_dir"] = tracedir
    else:
        shutil.rmtree(tracedir, ignore_errors=True)
    return result


def ratio(a, b):
    return a / b if a and b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build-bench", help="build directory (vramtrace and the floor client)")
    ap.add_argument("--vramtrace", help="the vramtrace command (default BUILD/analyzer/vramtrace)")
    ap.add_argument("--floor", help="the floor client (default BUILD/bench/libvt_cupti_floor.so)")
    ap.add_argument("--cupti", help="libcupti.so.13 for NVTX and the library path (default: found)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with torch")
    ap.add_argument("--models", default="resnet,transformer")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--tmp", default=None, help="where traces are written (default: system temp)")
    ap.add_argument("--keep-traces", action="store_true")
    ap.add_argument("--json", help="write every run and the summary here")
    ap.add_argument("--workload", default=os.path.join(HERE, "workload.py"),
                    help="the training-loop script (default workload.py beside this one)")
    args = ap.parse_args()

    args.vramtrace = os.path.abspath(args.vramtrace or os.path.join(args.build, "analyzer", "vramtrace"))
    args.floor = os.path.abspath(args.floor or os.path.join(args.build, "bench", "libvt_cupti_floor.so"))
    args.cupti = args.cupti or find_cupti(args.python)
    models = [m for m in args.models.split(",") if m]
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            ap.error("unknown configuration %r (known: %s)" % (c, ", ".join(CONFIGS)))
    if any(c.startswith("vt") for c in configs) and not os.access(args.vramtrace, os.X_OK):
        ap.error("vramtrace command not found at %s (--build or --vramtrace)" % args.vramtrace)
    if "floor" in configs and not os.path.exists(args.floor):
        ap.error("floor client not found at %s (--build or --floor)" % args.floor)
    print("libcupti: %s" % (args.cupti or "not found (NVTX ranges not recorded)"))

    runs = {(m, c): [] for m in models for c in configs}
    for rep in range(args.repeats):
        for m in models:
            k = rep % len(configs)
            for c in configs[k:] + configs[:k]:
                r = run_once(args, c, m)
                runs[(m, c)].append(r)
                print("  rep %d %-11s %-12s timed %7.3f s  iter %7.2f ms  wall %6.1f s  trace %7.1f MB" % (
                    rep + 1, m, c, r["timed_s"], r["iter_ms"], r["wall_s"], r["trace_bytes"] / 1e6), flush=True)
        if args.json and rep + 1 < args.repeats:
            write_json(args, runs, summarize(args, models, configs, runs, quiet=True), partial=True)
    summary = summarize(args, models, configs, runs)
    if args.json:
        write_json(args, runs, summary, partial=False)
    return 0


def write_json(args, runs, summary, partial):
    """Write every run and the summary to args.json (partial: more repetitions were to come)."""
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"partial": partial, "summary": summary, "runs": {"%s/%s" % k: v for k, v in runs.items()},
                   "args": vars(args)}, f, indent=1)
    os.replace(tmp, args.json)


def summarize(args, models, configs, runs, quiet=False):
    """Per model and configuration, the medians of the runs made so far (printed unless quiet)."""
    out = print if not quiet else (lambda *a, **k: None)
    summary = []
    for m in models:
        med = {c: statistics.median(r["timed_s"] for r in runs[(m, c)]) for c in configs}
        wall = {c: statistics.median(r["wall_s"] for r in runs[(m, c)]) for c in configs}
        size = {c: statistics.median(r["trace_bytes"] for r in runs[(m, c)]) for c in configs}
        first = runs[(m, configs[0])][0]
        out("\n%s (batch %d, %d warm-up + %d timed iterations, %d repetitions, medians) on %s, torch %s" % (
            m, first["batch"], args.warmup, args.iters, args.repeats, first["device"], first["torch"]))
        out("%-12s %10s %9s %9s %9s %9s %10s" % ("config", "timed s", "ms/iter", "x none", "x floor",
                                                    "wall s", "trace MB"))
        for c in configs:
            base = med.get("none-tensors") if c == "vt-tensors" and "none-tensors" in med else med.get("none")
            row = {"model": m, "config": c, "timed_s": med[c], "iter_ms": 1e3 * med[c] / args.iters,
                   "x_none": ratio(med[c], base), "x_floor": ratio(med[c], med.get("floor")),
                   "wall_s": wall[c], "trace_bytes": size[c], "repeats": len(runs[(m, c)])}
            summary.append(row)
            out("%-12s %10.3f %9.2f %9.3f %9.3f %9.1f %10.1f" % (c, row["timed_s"], row["iter_ms"], row["x_none"],
                                                               row["x_floor"], row["wall_s"], size[c] / 1e6))
        out("(x none of vt-tensors is against none-tensors when that configuration ran)")
    return summary


if __name__ == "__main__":
    sys.exit(main())

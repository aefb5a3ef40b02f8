#!/usr/bin/env python3
"""The largest batch a real PyTorch training job fits, found by running it, against what 'analyze --batch' predicts.

fit_boundary.py --run --batch N [--cap-gib G] [--steps S]
    One training job (a stack of MLP blocks, AdamW, fp32) for S steps at batch size N; exit 0 when
    every step ran, 3 on torch.cuda.OutOfMemoryError. The job 'vramtrace record' traces.
fit_boundary.py --probe [--cap-gib G] [--out FILE]
    The largest batch that runs (doubling, then bisection, in this process: the caching allocator
    emptied and the peak statistics reset between tries), written to FILE as JSON.
fit_boundary.py --compare --truth FILE --report FILE [--out FILE]
    The analyzer's predicted largest batch (devices[].fit.max_batch of the device that peaks
    highest in 'analyze --format json') against the truth; prints one line, writes JSON.

--cap-gib G caps PyTorch's caching allocator at G GiB (torch.cuda.set_per_process_memory_fraction),
so the boundary is reached in seconds on any GPU; 'analyze --fit-memory' is then given G GiB
plus the CUDA context the estimate assumes (512 MiB), so the two sides ask the same question.
Exit codes: 0 done, 2 bad arguments, 3 out of memory (--run), 4 torch or CUDA missing.
"""
import argparse
import gc
import json
import sys

D_MODEL = 1024
SEQ = 256
BLOCKS = 8


def job(torch, batch, steps):
    """Run `steps` training steps at `batch`; raises torch.cuda.OutOfMemoryError."""
    dev = torch.device("cuda")
    torch.manual_seed(0)
    layers = []
    for _ in range(BLOCKS):
        layers += [torch.nn.Linear(D_MODEL, 4 * D_MODEL), torch.nn.GELU(), torch.nn.Linear(4 * D_MODEL, D_MODEL)]
    model = torch.nn.Sequential(*layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    try:
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            x = torch.randn(batch, SEQ, D_MODEL, device=dev)
            loss = model(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            loss.item()
    finally:
        del model, opt, layers
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def load_torch(cap_gib):
    try:
        import torch
    except ImportError:
        print("fit_boundary: torch is not installed", file=sys.stderr)
        sys.exit(4)
    if not torch.cuda.is_available():
        print("fit_boundary: no CUDA device", file=sys.stderr)
        sys.exit(4)
    if cap_gib:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap_gib * (1 << 30) / total))
    return torch


def fits(torch, batch, steps):
    try:
        job(torch, batch, steps)
        return True
    except torch.cuda.OutOfMemoryError:
        gc.collect()
        torch.cuda.empty_cache()
        return False


def probe(a):
    torch = load_torch(a.cap_gib)
    lo, hi = 0, 1
    while fits(torch, hi, a.steps):
        lo, hi = hi, hi * 2
        if hi > 1 << 16:
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(torch, mid, a.steps):
            lo = mid
        else:
            hi = mid
    out = {"true_max_batch": lo, "cap_bytes": int(a.cap_gib * (1 << 30)) if a.cap_gib else None,
           "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "steps": a.steps,
           "model": {"d_model": D_MODEL, "seq": SEQ, "blocks": BLOCKS, "optimizer": "AdamW", "dtype": "float32"}}
    json.dump(out, open(a.out, "w") if a.out else sys.stdout, indent=1)
    return 0


def compare(a):
    truth = json.load(open(a.truth))
    rep = json.load(open(a.report))
    devs = [d for t in rep["traces"] for d in t["devices"] if d["id"] >= 0 and d.get("fit")]
    dev = max(devs, key=lambda d: d["peak_bytes"]) if devs else None
    pred = dev["fit"]["max_batch"] if dev else None
    true = truth["true_max_batch"]
    err = abs(pred - true) / true if pred is not None and true else None
    out = {"true_max_batch": true, "predicted_max_batch": pred, "error": err,
           "traced_batch": dev["fit"]["batch"] if dev else None,
           "breakdown": dev["breakdown"] if dev else None, "fit": dev["fit"] if dev else None}
    if a.out:
        json.dump(out, open(a.out, "w"), indent=1)
    print("largest batch: true %s, predicted %s, error %s" % (true, pred, "%.1f%%" % (100 * err) if err is not None else "-"))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--run", action="store_true")
    mode.add_argument("--probe", action="store_true")
    mode.add_argument("--compare", action="store_true")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--cap-gib", type=float, default=0)
    ap.add_argument("--truth")
    ap.add_argument("--report")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.run:
        if not a.batch or a.batch < 1:
            ap.error("--run needs --batch N")
        torch = load_torch(a.cap_gib)
        try:
            job(torch, a.batch, a.steps)
        except torch.cuda.OutOfMemoryError:
            print("fit_boundary: out of memory at batch %d" % a.batch, file=sys.stderr)
            return 3
        return 0
    if a.probe:
        return probe(a)
    if not a.truth or not a.report:
        ap.error("--compare needs --truth and --report")
    return compare(a)


if __name__ == "__main__":
    sys.exit(main())

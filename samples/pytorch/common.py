"""Shared pieces of the PyTorch scenarios: models, synthetic data, loops, options, ground-truth stats.

Every scenario script imports this module, builds a run with setup(), trains and validates
(the scenario's own bug lives in the script, on a line marked `# vramtrace-expect: KIND`),
then calls finish(), which writes torch.cuda.memory_stats() to the JSON file named by
--stats-out or $VRAMTRACE_STATS_OUT so tests/gpu/pytorch_check.py can compare it with the trace.

The models are nn.Sequential stacks of PyTorch's own modules on purpose: a tensor allocated
inside them has no Python frame outside PyTorch below the script line that called the model,
so `vramtrace analyze` names that script line as the call site (it reports the innermost
Python frame outside library code).
"""
import argparse
import atexit
import contextlib
import gc
import json
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

STATS_FORMAT = "vramtrace-pytorch-stats"
STATS_VERSION = 1

# NVTX push/pop ranges opened by nvtx(), counted for the stats (the trace must hold as many).
NVTX_PUSHED = [0]


class SyntheticImages(Dataset):
    """Deterministic random images: sample i depends only on (seed, i), whatever the worker."""

    def __init__(self, n, image_size, num_classes, seed):
        self.n, self.image_size, self.num_classes, self.seed = n, image_size, num_classes, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        x = torch.randn(3, self.image_size, self.image_size, generator=g)
        y = int(torch.randint(self.num_classes, (1,), generator=g))
        return x, y


class SyntheticTokens(Dataset):
    """Deterministic random token sequences with a class label, as SyntheticImages."""

    def __init__(self, n, seq_len, vocab, num_classes, seed):
        self.n, self.seq_len, self.vocab, self.num_classes, self.seed = n, seq_len, vocab, num_classes, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        x = torch.randint(self.vocab, (self.seq_len,), generator=g)
        y = int(torch.randint(self.num_classes, (1,), generator=g))
        return x, y


def make_cnn(num_classes, width):
    """A small CNN: three stages of conv-BN-ReLU (stride 2 between stages), pooling, linear."""
    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    w = width
    return nn.Sequential(*block(3, w, 1), *block(w, w, 1),
                         *block(w, 2 * w, 2), *block(2 * w, 2 * w, 1),
                         *block(2 * w, 4 * w, 2), *block(4 * w, 4 * w, 1),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * w, num_classes))


def make_transformer(num_classes, vocab, seq_len, d_model):
    """A small transformer encoder classifier: embedding, 2 encoder layers, flatten, linear."""
    layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=4 * d_model, dropout=0.0,
                                       batch_first=True)
    return nn.Sequential(nn.Embedding(vocab, d_model),
                         nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False),
                         nn.Flatten(), nn.Linear(seq_len * d_model, num_classes))


@contextlib.contextmanager
def nvtx(name, sync=False):
    """An NVTX push/pop range; with sync, the range waits for its kernels before it closes."""
    torch.cuda.nvtx.range_push(name)
    NVTX_PUSHED[0] += 1
    try:
        yield
        if sync:
            torch.cuda.synchronize()
    finally:
        torch.cuda.nvtx.range_pop()


def parse_args(scenario, argv=None, **defaults):
    """The options every scenario takes; `defaults` overrides the common defaults per scenario."""
    d = dict(model="cnn", iters=30, val_batches=10, batch_size=64, val_batch_size=None, epochs=1,
             num_classes=10, image_size=32, width=32, seq_len=32, vocab=1000, d_model=128,
             workers=0, pin_memory=True, seed=1234)
    d.update(defaults)
    p = argparse.ArgumentParser(prog=f"{scenario}.py", description=f"vramtrace PyTorch scenario: {scenario}")
    p.add_argument("--model", choices=("cnn", "transformer"), default=d["model"])
    p.add_argument("--iters", type=int, default=d["iters"], help="training iterations per epoch")
    p.add_argument("--val-batches", type=int, default=d["val_batches"], help="validation batches per epoch")
    p.add_argument("--batch-size", type=int, default=d["batch_size"])
    p.add_argument("--val-batch-size", type=int, default=d["val_batch_size"],
                   help="validation batch size (default: --batch-size)")
    p.add_argument("--epochs", type=int, default=d["epochs"])
    p.add_argument("--num-classes", type=int, default=d["num_classes"])
    p.add_argument("--image-size", type=int, default=d["image_size"])
    p.add_argument("--width", type=int, default=d["width"], help="CNN channels of the first stage")
    p.add_argument("--seq-len", type=int, default=d["seq_len"])
    p.add_argument("--vocab", type=int, default=d["vocab"])
    p.add_argument("--d-model", type=int, default=d["d_model"])
    p.add_argument("--workers", type=int, default=d["workers"], help="DataLoader worker processes")
    p.add_argument("--seed", type=int, default=d["seed"])
    p.add_argument("--stats-out", default=os.environ.get("VRAMTRACE_STATS_OUT"),
                   help="write memory_stats() as JSON here (default: $VRAMTRACE_STATS_OUT)")
    args = p.parse_args(argv)
    args.scenario = scenario
    args.pin_memory = d["pin_memory"]
    if args.val_batch_size is None:
        args.val_batch_size = args.batch_size
    return args


class Run:
    """Everything one scenario run holds: device, model, optimizer, loss, loaders, results."""

    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.result = {}
        self.t0 = time.monotonic()
        self.stats_written = False


def make_dataset(args, n, seed_offset):
    """The synthetic dataset of the chosen model, n samples, seeded from args.seed + seed_offset."""
    if args.model == "cnn":
        return SyntheticImages(n, args.image_size, args.num_classes, args.seed + seed_offset)
    return SyntheticTokens(n, args.seq_len, args.vocab, args.num_classes, args.seed + seed_offset)


def make_loader(args, dataset, batch_size, pin_memory, workers, shuffle):
    """A DataLoader over dataset; workers > 0 use prefetch_factor 2 (worker processes
    are fork()ed on Linux with Python <= 3.13, the default start method)."""
    kw = dict(batch_size=batch_size, shuffle=shuffle, drop_last=True, pin_memory=pin_memory,
              num_workers=workers)
    if shuffle:
        kw["generator"] = torch.Generator().manual_seed(args.seed)
    if workers > 0:
        kw["prefetch_factor"] = 2
    return DataLoader(dataset, **kw)


def allocator_mode():
    """The CUDA allocator in effect: backend name and the configuration variables."""
    backend = torch.cuda.get_allocator_backend() if hasattr(torch.cuda, "get_allocator_backend") else "unknown"
    return {"backend": backend,
            "PYTORCH_ALLOC_CONF": os.environ.get("PYTORCH_ALLOC_CONF"),
            "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
            "PYTORCH_NO_CUDA_MEMORY_CACHING": os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING")}


def setup(args):
    """Seed, check CUDA, print the allocator mode, build model, SGD optimizer, loss and loaders.

    Exits with status 2 when no CUDA device is usable. The optimizer is SGD without
    momentum, so it holds no state that would outlive a training phase.
    """
    if not torch.cuda.is_available():
        print(f"{args.scenario}: no CUDA device available", file=sys.stderr)
        sys.exit(2)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = False
    run = Run(args)
    mode = allocator_mode()
    print(f"vt-pytorch: scenario {args.scenario}, model {args.model}, torch {torch.__version__} "
          f"(CUDA {torch.version.cuda}), device {torch.cuda.get_device_name(run.device)}, "
          f"allocator backend {mode['backend']}, PYTORCH_ALLOC_CONF={mode['PYTORCH_ALLOC_CONF']}, "
          f"PYTORCH_CUDA_ALLOC_CONF={mode['PYTORCH_CUDA_ALLOC_CONF']}", flush=True)
    if args.model == "cnn":
        run.model = make_cnn(args.num_classes, args.width)
    else:
        run.model = make_transformer(args.num_classes, args.vocab, args.seq_len, args.d_model)
    run.model.to(run.device)
    run.optimizer = torch.optim.SGD(run.model.parameters(), lr=0.01)
    run.loss_fn = nn.CrossEntropyLoss()
    n_train = args.iters * args.batch_size
    n_val = args.val_batches * args.val_batch_size
    run.train_loader = make_loader(args, make_dataset(args, n_train, 0), args.batch_size,
                                   args.pin_memory, args.workers, True)
    run.val_loader = make_loader(args, make_dataset(args, n_val, 7919), args.val_batch_size,
                                 args.pin_memory, args.workers, False)
    atexit.register(_write_stats_at_exit, run)
    return run


def to_device(run, x, y):
    """Copy one batch to the device (asynchronously when the loader pinned it)."""
    return (x.to(run.device, non_blocking=run.args.pin_memory),
            y.to(run.device, non_blocking=run.args.pin_memory))


def train_epoch(run, epoch):
    """One healthy training epoch inside NVTX `train`, one `iter N` range per step.

    Losses are read with .item(); gradients are dropped (set to None) at the end so they do
    not stay live through validation. Returns the mean training loss.
    """
    model, opt = run.model, run.optimizer
    model.train()
    total, n = 0.0, 0
    with nvtx("train", sync=True):
        for i, (x, y) in enumerate(run.train_loader):
            with nvtx(f"iter {epoch * run.args.iters + i}"):
                x, y = to_device(run, x, y)
                opt.zero_grad(set_to_none=True)
                loss = run.loss_fn(model(x), y)
                loss.backward()
                opt.step()
                total += loss.item()
                n += 1
        opt.zero_grad(set_to_none=True)
    return total / max(n, 1)


def validate(run, epoch):
    """One healthy validation pass inside NVTX `validation` under torch.no_grad().

    Returns (mean loss, accuracy), both plain Python floats.
    """
    model = run.model
    model.eval()
    total, correct, seen = 0.0, 0, 0
    with nvtx("validation", sync=True), torch.no_grad():
        for i, (x, y) in enumerate(run.val_loader):
            with nvtx(f"batch {epoch * run.args.val_batches + i}"):
                x, y = to_device(run, x, y)
                out = model(x)
                total += run.loss_fn(out, y).item()
                correct += int((out.argmax(1) == y).sum())
                seen += y.numel()
    return total / max(run.args.val_batches, 1), correct / max(seen, 1)


def _scalar_stats(d):
    """Keep the scalar counters of a stats dictionary (ints, floats, bools)."""
    return {k: v for k, v in d.items() if isinstance(v, (int, float, bool))}


def write_stats(run, completed):
    """Write the run's ground truth as JSON to args.stats_out (no-op without a path).

    Content: format/version, scenario, pid, versions, device, allocator mode,
    torch.cuda.memory_stats() (scalar counters), host_memory_stats() when this PyTorch has
    it, the number of NVTX ranges pushed, the scenario's own results, and whether the run
    completed.
    """
    if run.stats_written or not run.args.stats_out:
        return
    run.stats_written = True
    torch.cuda.synchronize()
    host = {}
    if hasattr(torch.cuda, "host_memory_stats"):
        try:
            host = _scalar_stats(torch.cuda.host_memory_stats())
        except RuntimeError as e:
            host = {"error": str(e)}
    props = torch.cuda.get_device_properties(run.device)
    doc = {"format": STATS_FORMAT, "version": STATS_VERSION, "scenario": run.args.scenario,
           "pid": os.getpid(), "completed": completed, "seconds": round(time.monotonic() - run.t0, 3),
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "device": {"name": props.name, "total_memory": props.total_memory},
           "allocator": allocator_mode(), "args": {k: v for k, v in vars(run.args).items()},
           "memory_stats": _scalar_stats(torch.cuda.memory_stats(run.device)),
           "host_memory_stats": host, "nvtx_ranges": NVTX_PUSHED[0], "result": run.result}
    tmp = run.args.stats_out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    os.replace(tmp, run.args.stats_out)


def _write_stats_at_exit(run):
    """atexit: a run that never reached finish() still leaves its stats, marked incomplete."""
    if not run.stats_written and torch.cuda.is_initialized():
        write_stats(run, completed=False)


def finish(run):
    """End a run: drop the model, optimizer and loaders (their device memory is freed), then
    write the stats and print a one-line summary. Call it last, from the scenario's main()."""
    for name in ("model", "optimizer", "train_loader", "val_loader"):
        if hasattr(run, name):
            delattr(run, name)
    gc.collect()
    torch.cuda.synchronize()
    write_stats(run, completed=True)
    s = torch.cuda.memory_stats(run.device)
    print(f"vt-pytorch: {run.args.scenario} done in {time.monotonic() - run.t0:.2f} s; "
          f"segments allocated {s.get('segment.all.allocated', 0)}, "
          f"reserved peak {s.get('reserved_bytes.all.peak', 0)} B, "
          f"allocations {s.get('allocation.all.allocated', 0)}, "
          f"allocated peak {s.get('allocated_bytes.all.peak', 0)} B; result {json.dumps(run.result)}",
          flush=True)

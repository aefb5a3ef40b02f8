"""Training-loop workloads of the overhead harness: a ResNet-style CNN or a small transformer on synthetic data.

Runs a fixed number of warm-up and timed training iterations on one GPU and
prints one JSON line on stdout, prefixed with "RESULT ", holding the timed
loop's seconds, the per-iteration median and the iteration counts. The
driver (run_overhead.py) starts this script once per configuration and
repetition; nothing here knows whether a tracer is attached.

Data are synthetic and made once in pinned host memory; every iteration
copies its batch to the device (non_blocking), runs forward, loss, backward
and the optimizer step, as a real input pipeline would. NVTX ranges mark the
training phase and each step (vramtrace records them as phases/iterations).

    python3 workload.py --model resnet|transformer [--warmup N] [--iters N]
                        [--batch N] [--amp]
"""
import argparse
import json
import statistics
import sys
import time


def build_resnet(torch, nn, num_classes):
    """A ResNet-18-shaped CNN (BasicBlocks, 64-128-256-512 channels) for 3x64x64 images."""

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = None
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return torch.relu(y + (x if self.short is None else self.short(x)))

    layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)


def build_transformer(torch, nn, vocab, d_model, n_layers, seq):
    """A small decoder-style language model: embedding, causal TransformerEncoder, LM head."""

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d_model)
            self.pos = nn.Parameter(torch.zeros(1, seq, d_model))
            layer = nn.TransformerEncoderLayer(d_model, 8, 4 * d_model, dropout=0.1, batch_first=True,
                                               norm_first=True)
            self.body = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab)
            # boolean (True: masked), valid whatever dtype autocast gives the attention
            self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

        def forward(self, x):
            h = self.emb(x) + self.pos
            h = self.body(h, mask=self.mask, is_causal=True)
            return self.head(self.norm(h))

    return LM()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("resnet", "transformer"), required=True)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--batch", type=int, default=0, help="batch size (default: 128 resnet, 32 transformer)")
    ap.add_argument("--batches", type=int, default=8, help="distinct synthetic batches cycled through")
    ap.add_argument("--amp", action="store_true", help="bfloat16 autocast")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import torch
    from torch import nn

    if not torch.cuda.is_available():
        print("workload.py: no CUDA device", file=sys.stderr)
        return 3
    torch.manual_seed(args.seed)
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = False  # identical kernel choice in every configuration

    if args.model == "resnet":
        batch = args.batch or 128
        model = build_resnet(torch, nn, 100)
        xs = [torch.randn(batch, 3, 64, 64).pin_memory() for _ in range(args.batches)]
        ys = [torch.randint(0, 100, (batch,)).pin_memory() for _ in range(args.batches)]
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    else:
        batch = args.batch or 32
        vocab, seq = 8192, 256
        model = build_transformer(torch, nn, vocab, 512, 6, seq)
        xs = [torch.randint(0, vocab, (batch, seq)).pin_memory() for _ in range(args.batches)]
        ys = [torch.randint(0, vocab, (batch, seq)).pin_memory() for _ in range(args.batches)]
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.to(dev).train()
    loss_fn = nn.CrossEntropyLoss()

    def step(i):
        torch.cuda.nvtx.range_push("step")
        x = xs[i % len(xs)].to(dev, non_blocking=True)
        y = ys[i % len(ys)].to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
            out = model(x)
            if out.dim() == 3:
                out, y = out.reshape(-1, out.shape[-1]), y.reshape(-1)
            loss = loss_fn(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        return loss

    torch.cuda.nvtx.range_push("train")
    for i in range(args.warmup):
        step(i)
    torch.cuda.synchronize()

    # Timed loop: one synchronize at each end for the throughput figure; CUDA events
    # per step give the per-iteration distribution without extra synchronization.
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(args.iters)]
    t0 = time.perf_counter()
    for i in range(args.iters):
        ev[i][0].record()
        loss = step(args.warmup + i)
        ev[i][1].record()
    torch.cuda.synchronize()
    timed = time.perf_counter() - t0
    torch.cuda.nvtx.range_pop()
    step_ms = [a.elapsed_time(b) for a, b in ev]
    result = {
        "model": args.model,
        "batch": batch,
        "amp": args.amp,
        "warmup": args.warmup,
        "iters": args.iters,
        "timed_s": timed,
        "iter_ms": 1e3 * timed / args.iters,
        "step_ms_median": statistics.median(step_ms),
        "final_loss": float(loss.item()),
        "max_allocated": torch.cuda.max_memory_allocated(),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
    }
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

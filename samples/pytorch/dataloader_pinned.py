"""Scenario dataloader_pinned: the same training fed from pageable, then from pinned memory.

Two training phases over DataLoaders with 2 worker processes and prefetch_factor 2:
NVTX `train pin_memory=False` copies each batch from pageable host memory (marked line:
the copy is staged by the driver and cannot overlap compute), then
`train pin_memory=True` lets the loader's pin-memory thread place batches in page-locked
memory (cudaHostAlloc, cached by PyTorch's host allocator) and copies them with
non_blocking=True. Expected: `transfer` (pageable host-to-device copies, with their
bandwidth compared with the pinned ones), in default and in --tensors mode.
Fix: `DataLoader(..., pin_memory=True)` and `.to(device, non_blocking=True)`.

    vramtrace record -o loader-%p.db -- python3 samples/pytorch/dataloader_pinned.py
"""
import common


def train_phase(run, loader, pinned, first_iter):
    """One training phase over loader; returns (mean loss, iterations)."""
    model, opt = run.model, run.optimizer
    model.train()
    total, n = 0.0, 0
    with common.nvtx(f"train pin_memory={pinned}", sync=True):
        for i, (x, y) in enumerate(loader):
            with common.nvtx(f"iter {first_iter + i}"):
                if pinned:
                    x, y = x.to(run.device, non_blocking=True), y.to(run.device, non_blocking=True)
                else:
                    x, y = x.to(run.device), y.to(run.device)  # vramtrace-expect: transfer (pageable source)
                opt.zero_grad(set_to_none=True)
                loss = run.loss_fn(model(x), y)
                loss.backward()
                opt.step()
                total += loss.item()
                n += 1
        opt.zero_grad(set_to_none=True)
    return total / max(n, 1), n


def main():
    args = common.parse_args("dataloader_pinned", iters=24, batch_size=256, workers=2, val_batches=0)
    run = common.setup(args)
    dataset = common.make_dataset(args, args.iters * args.batch_size, 0)
    for k, pinned in enumerate((False, True)):
        loader = common.make_loader(args, dataset, args.batch_size, pinned, args.workers, True)
        loss, n = train_phase(run, loader, pinned, k * args.iters)
        del loader
        print(f"pin_memory={pinned}: {n} iterations, mean loss {loss:.4f}")
        run.result[f"pin_memory_{pinned}"] = {"iterations": n, "loss": round(loss, 6)}
    common.finish(run)


if __name__ == "__main__":
    main()

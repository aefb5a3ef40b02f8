"""Scenario loss_no_item: the training loop keeps every step's loss as a CUDA tensor.

The bug (marked line): the loss is kept for the epoch's statistics without .item(), so
each step leaves one more tensor on the device, each holding on to its autograd graph's
nodes. On the GPU this is small (4 bytes per step at tensor level, lost inside one cached
2 MiB block at segment level), which is why only `vramtrace record --tensors` shows it:
the leak detector's growth test names the marked line (the tensor is allocated there).
The harness analyzes this run with --min-bytes 128, since the whole rise is a few hundred
bytes. Fix: `history.append(loss.item() * x.size(0))`.

    vramtrace record --tensors -o loss-%p.db -- python3 samples/pytorch/loss_no_item.py
"""
import common


def train_epoch_keeping_losses(run, epoch):
    """Train one epoch like common.train_epoch, but keep the weighted losses on the GPU."""
    model, opt = run.model, run.optimizer
    model.train()
    history, seen = [], 0
    with common.nvtx("train", sync=True):
        for i, (x, y) in enumerate(run.train_loader):
            with common.nvtx(f"iter {epoch * run.args.iters + i}", sync=True):
                x, y = common.to_device(run, x, y)
                opt.zero_grad(set_to_none=True)
                loss = run.loss_fn(model(x), y)
                loss.backward()
                opt.step()
                history.append(loss * x.size(0))  # vramtrace-expect: leak (kept without .item())
                seen += x.size(0)
        opt.zero_grad(set_to_none=True)
        mean = float(sum(history)) / max(seen, 1)
    return mean, len(history)


def main():
    args = common.parse_args("loss_no_item", model="transformer", iters=60, val_batches=4)
    run = common.setup(args)
    train_loss, kept = train_epoch_keeping_losses(run, 0)
    val_loss, val_acc = common.validate(run, 0)
    print(f"train loss {train_loss:.4f} ({kept} loss tensors were kept), val loss {val_loss:.4f}, acc {val_acc:.3f}")
    run.result.update(train_loss=round(train_loss, 6), losses_kept=kept, val_loss=round(val_loss, 6))
    common.finish(run)


if __name__ == "__main__":
    main()

"""Scenario val_no_grad: validation runs without torch.no_grad() and sums the loss tensors.

The bug (marked line): the forward pass in validation records the autograd graph, and
the running loss is a tensor (`total = total + loss`), so every batch's graph, with all the
activations it saved for a backward that never comes, stays alive until validation ends.
Device memory grows batch by batch during `validation` and its peak exceeds training's.
Expected: `validation_spike` (growth batch by batch; peak above training), in default and
in --tensors mode. Fix: `with torch.no_grad():` around the loop, and `loss.item()`.

    vramtrace record -o val-%p.db -- python3 samples/pytorch/val_no_grad.py
"""
import common


def validate_with_grad(run, epoch):
    """Validation as people first write it: no torch.no_grad(), loss kept as a tensor."""
    model = run.model
    model.eval()
    total, correct, seen = 0.0, 0, 0
    with common.nvtx("validation", sync=True):
        for i, (x, y) in enumerate(run.val_loader):
            with common.nvtx(f"batch {epoch * run.args.val_batches + i}", sync=True):
                x, y = common.to_device(run, x, y)
                out = model(x)  # vramtrace-expect: validation_spike (graph recorded, never freed)
                total = total + run.loss_fn(out, y)
                correct += int((out.argmax(1) == y).sum())
                seen += y.numel()
        mean = float(total) / max(run.args.val_batches, 1)
    return mean, correct / max(seen, 1)


def main():
    args = common.parse_args("val_no_grad", iters=20, val_batches=12)
    run = common.setup(args)
    train_loss = common.train_epoch(run, 0)
    val_loss, val_acc = validate_with_grad(run, 0)
    print(f"train loss {train_loss:.4f}, val loss {val_loss:.4f}, acc {val_acc:.3f}")
    run.result.update(train_loss=round(train_loss, 6), val_loss=round(val_loss, 6), val_acc=round(val_acc, 6))
    common.finish(run)


if __name__ == "__main__":
    main()

"""Scenario healthy: a training loop with validation done right; vramtrace should report nothing.

Two epochs of training and validation (NVTX `train` / `validation`, `iter N` / `batch N`):
losses read with .item(), validation under torch.no_grad(), gradients set to None before
validation, pinned DataLoader memory with non-blocking copies, SGD without momentum.
Expected: no finding of severity medium or high, in default and in --tensors mode.

    vramtrace record -o healthy-%p.db -- python3 samples/pytorch/healthy.py [--model transformer]
"""
import common


def main():
    args = common.parse_args("healthy", epochs=2, iters=20, val_batches=8)
    run = common.setup(args)
    for epoch in range(args.epochs):
        train_loss = common.train_epoch(run, epoch)
        val_loss, val_acc = common.validate(run, epoch)
        print(f"epoch {epoch}: train loss {train_loss:.4f}, val loss {val_loss:.4f}, acc {val_acc:.3f}")
        run.result[f"epoch{epoch}"] = [round(train_loss, 6), round(val_loss, 6), round(val_acc, 6)]
    common.finish(run)


if __name__ == "__main__":
    main()

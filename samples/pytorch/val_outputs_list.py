"""Scenario val_outputs_list: validation collects every batch's outputs on the GPU.

Validation is under torch.no_grad(), but the logits of every batch are appended to a list
(marked line) to compute top-5 accuracy at the end, so they accumulate on the device batch
by batch (1000 classes: 256 KiB per batch of 64), then torch.cat copies them once more.
Expected with --tensors: `validation_spike` (growth batch by batch). In default mode the
outputs are carved out of cached segments that training already reserved, so the trace may
show no growth at all: no finding is required there (the harness reports what it found).
Fix: reduce per batch (`correct += ...topk...`) or move outputs to the CPU (`out.cpu()`).

    vramtrace record --tensors -o outs-%p.db -- python3 samples/pytorch/val_outputs_list.py
"""
import torch

import common


def validate_collecting_outputs(run, epoch):
    """Validation under no_grad that keeps every batch's logits on the GPU until the end."""
    model = run.model
    model.eval()
    outputs, labels = [], []
    with common.nvtx("validation", sync=True), torch.no_grad():
        for i, (x, y) in enumerate(run.val_loader):
            with common.nvtx(f"batch {epoch * run.args.val_batches + i}", sync=True):
                x, y = common.to_device(run, x, y)
                outputs.append(model(x))  # vramtrace-expect: validation_spike (logits kept on the GPU)
                labels.append(y)
        logits, target = torch.cat(outputs), torch.cat(labels)
        top5 = logits.topk(5, dim=1).indices
        acc5 = float((top5 == target[:, None]).any(dim=1).float().mean())
    return acc5, len(outputs)


def main():
    args = common.parse_args("val_outputs_list", model="transformer", num_classes=1000, iters=20,
                             val_batches=24)
    run = common.setup(args)
    train_loss = common.train_epoch(run, 0)
    acc5, kept = validate_collecting_outputs(run, 0)
    print(f"train loss {train_loss:.4f}, top-5 accuracy {acc5:.3f} over {kept} batches kept on the GPU")
    run.result.update(train_loss=round(train_loss, 6), top5=round(acc5, 6), batches_kept=kept)
    common.finish(run)


if __name__ == "__main__":
    main()

"""Scenario oom_in_validation: training fits, validation runs the device out of memory.

Training is normal. Validation then evaluates the whole validation set as one batch (the
classic `DataLoader(val_set, batch_size=len(val_set))`), kept on the GPU. Its size is
computed from the device's total memory so that the first convolution's output alone
needs 1.25 x the device's memory: the allocation fails on any GPU (the input itself takes
about 12 % of the device). The marked line is the forward call in which the allocation
fails. The script catches torch.cuda.OutOfMemoryError, prints it, frees the batch, writes
its stats and exits 0 (the harness expects exit status 0 and result.oom_caught = true).
Expected: `oom` (the request exceeds the device's total memory: real demand), in default
and in --tensors mode. Fix: evaluate in batches under torch.no_grad().

    vramtrace record -o oom-%p.db -- python3 samples/pytorch/oom_in_validation.py
"""
import gc

import torch

import common


def validate_whole_set(run):
    """Evaluate one batch holding the whole validation set; returns the OOM message or None."""
    args, model = run.args, run.model
    total = torch.cuda.get_device_properties(run.device).total_memory
    per_sample_out = args.width * args.image_size * args.image_size * 4  # first conv's output, float32
    n = (total * 5 // 4) // per_sample_out + 1
    run.result.update(device_total_bytes=total, val_set_size=n, expected_request_bytes=n * per_sample_out)
    g = torch.Generator(device=run.device).manual_seed(args.seed)
    model.eval()
    message = None
    with common.nvtx("validation", sync=True):
        with common.nvtx("batch 0"):
            x = torch.randn(n, 3, args.image_size, args.image_size, device=run.device, generator=g)
            try:
                with torch.no_grad():
                    out = model(x)  # vramtrace-expect: oom (the first conv's output exceeds the device)
                    message = f"no OOM: output {tuple(out.shape)}"
            except torch.cuda.OutOfMemoryError as e:
                message = str(e)
                run.result["oom_caught"] = True
            del x
    return message


def main():
    args = common.parse_args("oom_in_validation", iters=10, val_batches=0)
    if args.model != "cnn":
        raise SystemExit("oom_in_validation: only --model cnn")
    run = common.setup(args)
    run.result["oom_caught"] = False
    train_loss = common.train_epoch(run, 0)
    message = validate_whole_set(run)
    gc.collect()
    print(f"train loss {train_loss:.4f}; validation: {message.splitlines()[0] if message else None}")
    run.result["train_loss"] = round(train_loss, 6)
    common.finish(run)


if __name__ == "__main__":
    main()

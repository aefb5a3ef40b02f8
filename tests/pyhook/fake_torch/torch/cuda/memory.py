"""torch.cuda.memory of the stand-in: the history switch (today's or PyTorch 2.0's signature, or none) and snapshot dumps, logged."""
import os

if os.environ.get("VT_FAKE_OLD_TORCH"):
    def _record_memory_history(enabled, record_context=True, trace_alloc_max_entries=1,
                               trace_alloc_record_context=False, device=None):
        from .. import _log
        _log("record_memory_history_v20", enabled=enabled, max_entries=trace_alloc_max_entries)
elif not os.environ.get("VT_FAKE_NO_HISTORY"):
    def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=None, device=None):
        from .. import _log
        _log("record_memory_history", enabled=enabled, context=context, stacks=stacks, max_entries=max_entries)


def _dump_snapshot(filename="dump_snapshot.pickle"):
    from .. import _log
    with open(filename, "wb") as f:
        f.write(b"\x80\x04}\x94.")  # an empty dict, pickled
    _log("dump_snapshot", filename=filename)

"""torch.cuda of the stand-in: lazy initialization with queued calls, an OOM the test triggers."""
import os

from . import memory  # noqa: F401
from . import nvtx  # noqa: F401

_initialized = False
_queued = []


def _lazy_call(fn):
    if _initialized:
        fn()
    else:
        _queued.append(fn)


def init():
    global _initialized
    if _initialized:
        return
    _initialized = True
    for fn in _queued:
        fn()
    del _queued[:]


def is_initialized():
    return _initialized


def device_count():
    return int(os.environ.get("VT_FAKE_DEVICES", "2"))


def memory_stats(device=None):
    return {"segment.all.allocated": 3, "reserved_bytes.all.peak": 6 << 20, "device": device}


def fake_oom(nbytes):
    """What PyTorch's allocator does when cudaMalloc fails: call the observers, raise."""
    from .. import _C
    for fn in list(_C._observers):
        fn(0, nbytes, 1 << 30, 1 << 20)
    raise RuntimeError("CUDA out of memory (fake)")

"""torch.cuda of the shape-only stand-in: one device, NVTX depth checked, memory counters."""
import atexit
import os

_state = {"init": False, "allocs": 0, "peak": 0, "nvtx": 0, "ooms": 0}


class OutOfMemoryError(RuntimeError):
    pass


def _total():
    return int(os.environ.get("VT_FAKE_TOTAL_MEMORY", 80 << 30))


def _alloc(nbytes):
    _state["init"] = True
    if nbytes > _total():
        _state["ooms"] += 1
        raise OutOfMemoryError(f"CUDA out of memory. Tried to allocate {nbytes} bytes (fake device)")
    _state["allocs"] += 1
    _state["peak"] = max(_state["peak"], nbytes)


def is_available():
    return True


def is_initialized():
    return _state["init"]


def current_device():
    _state["init"] = True
    return 0


def get_device_name(dev=None):
    return "Fake GPU"


def get_allocator_backend():
    conf = os.environ.get("PYTORCH_ALLOC_CONF") or os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or ""
    return "cudaMallocAsync" if "backend:cudaMallocAsync" in conf else "native"


class _Props:
    def __init__(self):
        self.name, self.total_memory = "Fake GPU", _total()


def get_device_properties(dev=None):
    return _Props()


def synchronize(dev=None):
    pass


def memory_stats(dev=None):
    return {"segment.all.allocated": 1, "segment.all.freed": 0, "reserved_bytes.all.peak": 2 << 20,
            "allocation.all.allocated": _state["allocs"], "allocated_bytes.all.peak": _state["peak"],
            "num_ooms": _state["ooms"]}


def host_memory_stats():
    return {"num_host_alloc": 0}


class _Nvtx:
    def range_push(self, name):
        assert isinstance(name, str) and name
        _state["nvtx"] += 1

    def range_pop(self):
        assert _state["nvtx"] > 0, "range_pop without range_push"
        _state["nvtx"] -= 1


nvtx = _Nvtx()


@atexit.register
def _check_nvtx():
    if _state["nvtx"]:
        raise SystemExit(f"fake torch: {_state['nvtx']} NVTX ranges left open")

"""torch.autograd of the stand-in: Kineto's entry points (torch._C._autograd's in PyTorch), logged.

In a program that embeds Python with the scripted CUPTI harness (tests/test_lend_py.c), the
built-in module _vt_harness is there and these calls drive its Kineto, as PyTorch's drive libkineto.
"""
import enum
import os


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


def _harness(name, *args):
    try:
        import _vt_harness
    except ImportError:
        return None
    return getattr(_vt_harness, name)(*args)


def _prepare_profiler(config, activities, activity_filter=None):
    from .. import _log
    if os.environ.get("VT_FAKE_PREPARE_FAILS"):
        raise RuntimeError("Kineto could not prepare (fake)")
    _log("prepare_profiler", activities=sorted(a.name for a in activities))
    if ProfilerActivity.CUDA in activities:
        _harness("kineto_prepare")


def _disable_profiler():
    from .. import _log
    _log("disable_profiler")
    _harness("kineto_stop")
    return "kineto results"


from . import profiler  # noqa: E402,F401  (torch.autograd.profiler, as in PyTorch)

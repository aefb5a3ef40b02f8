"""A stand-in torch for the history hook's tests: records the calls the hook makes (VT_FAKE_LOG)."""
import json
import os

from . import _C  # noqa: F401  (torch._C, as in PyTorch)
from . import cuda  # noqa: F401


def _log(what, **kw):
    path = os.environ.get("VT_FAKE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"call": what, "pid": os.getpid(), **kw}) + "\n")


from . import autograd, profiler  # noqa: E402,F401  (imported with torch, as in PyTorch)

# vramtrace: PyTorch's own allocation history, and torch.profiler beside the tracer, for
# `vramtrace record`; loaded as sitecustomize.
#
# `vramtrace record` puts this directory first on PYTHONPATH. At interpreter start this module
# (1) runs the job's own sitecustomize, if it has one, and (2) waits for `import torch`. It never
# imports torch itself, never changes the allocator's settings and never opens the trace.
#
# Beside torch.profiler (VRAMTRACE_LEND_CUPTI=1): CUPTI 13.0 to 13.2 serves one client's activity
# buffers at a time. Once torch is imported, the hook wraps the two calls through which every
# torch.profiler / torch.autograd.profiler profile sets Kineto up and stops it
# (torch.autograd.profiler._prepare_profiler and _disable_profiler), and when a profile asks for
# CUDA activity it tells the tracer, as NVTX marks with a reserved text that the tracer takes
# for itself: "lend" before Kineto sets CUPTI up, "lent" once it has, "return" after it stopped
# and took its records. The tracer then lends CUPTI to the profiler for that window and takes it
# back after (docs/tracer.md, "Beside torch.profiler"). With VRAMTRACE_LEND_CUPTI=0 (record
# --keep-cupti) it says only "start" and "stop": nothing is lent, and should the profiler take the
# tracer's activity buffers over, the trace names it and when it started. Without NVTX injection
# the marks go nowhere and nothing changes.
#
# The allocation history (VRAMTRACE_PYTORCH_HISTORY=1): once torch is imported the hook asks
# torch.cuda to call back when CUDA is initialized (torch.cuda._lazy_call), and then:
#   - torch.cuda.memory._record_memory_history(max_entries=N, stacks=...): every tensor allocation
#     and free with its Python stack, kept by PyTorch in a ring of N entries;
#   - an out-of-memory observer that dumps a snapshot at each OOM (the first few);
#   - at exit, a snapshot and torch.cuda.memory_stats() of every device.
# Files go to VRAMTRACE_SNAPSHOT_DIR as vramtrace-HOST-PID.snapshot.pickle,
# vramtrace-HOST-PID.oom-N.snapshot.pickle and vramtrace-HOST-PID.memory_stats.json, where
# `vramtrace analyze` finds them for the trace of that host and pid (docs/cli.md).
# A torch without these functions, or a job that never imports torch, runs unchanged (one
# `vramtrace:` line at most).

import os
import sys

_ENV_ON = "VRAMTRACE_PYTORCH_HISTORY"
_ENV_LEND = "VRAMTRACE_LEND_CUPTI"
_MAX_OOM_DUMPS = 3
_CONTROL = "vramtrace-cupti:"  # the tracer's reserved NVTX mark text (tracer/nvtxctl.h)


def _note(msg):
    try:
        sys.stderr.write("vramtrace: %s\n" % msg)
    except Exception:
        pass


def _chain_site_customize():
    """Import the sitecustomize this one hides: the next one on sys.path after this directory."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(sys.path)
    me = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib.util
        if importlib.util.find_spec("sitecustomize") is not None:
            import importlib
            importlib.import_module("sitecustomize")
    except Exception as e:  # the job's own sitecustomize failed: say so, as Python would have
        _note("the job's sitecustomize raised %s: %s" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and me is not None:
            sys.modules["sitecustomize"] = me


def _paths():
    import socket
    d = os.environ.get("VRAMTRACE_SNAPSHOT_DIR") or "."
    base = os.path.join(d, "vramtrace-%s-%d" % (socket.gethostname(), os.getpid()))
    return base


class _State:
    started = False
    pid = None
    ooms = 0


def _start():
    """Called by torch.cuda when CUDA is initialized: history on, OOM observer, dump at exit."""
    torch = sys.modules.get("torch")
    if torch is None or _State.started:
        return
    mem = getattr(torch.cuda, "memory", None)
    record = getattr(mem, "_record_memory_history", None)
    dump = getattr(mem, "_dump_snapshot", None)
    if record is None or dump is None:
        _note("this PyTorch has no torch.cuda.memory._record_memory_history: no allocation history recorded")
        return
    try:
        entries = int(os.environ.get("VRAMTRACE_HISTORY_ENTRIES", "100000"))
    except ValueError:
        entries = 100000
    stacks = os.environ.get("VRAMTRACE_HISTORY_STACKS", "python")
    try:
        record(enabled="all", context="all", stacks=stacks, max_entries=entries)
    except TypeError:  # PyTorch 2.0: positional enable, no stacks choice
        try:
            record(True, trace_alloc_max_entries=entries)
        except Exception as e:
            _note("cannot record the allocation history (%s: %s)" % (type(e).__name__, e))
            return
    except Exception as e:  # e.g. the cudaMallocAsync backend (record --tensors) has no history
        _note("cannot record the allocation history (%s: %s)" % (type(e).__name__, e))
        return
    _State.started = True
    _State.pid = os.getpid()
    attach = getattr(getattr(torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)
    if attach is not None:
        def on_oom(device, alloc, device_allocated, device_free):
            if _State.ooms >= _MAX_OOM_DUMPS or os.getpid() != _State.pid:
                return
            _State.ooms += 1
            try:
                dump("%s.oom-%d.snapshot.pickle" % (_paths(), _State.ooms))
            except Exception as e:
                _note("cannot write the snapshot at the out-of-memory error (%s)" % e)
        try:
            attach(on_oom)
        except Exception as e:
            _note("cannot watch for out-of-memory errors (%s)" % e)
    import atexit
    atexit.register(_at_exit)


def _at_exit():
    """The snapshot and memory_stats() at exit, in the process that started the history only."""
    torch = sys.modules.get("torch")
    if torch is None or os.getpid() != _State.pid:
        return
    base = _paths()
    try:
        torch.cuda.memory._dump_snapshot(base + ".snapshot.pickle")
    except Exception as e:
        _note("cannot write the snapshot at exit (%s)" % e)
    try:
        import json
        stats = {str(i): dict(torch.cuda.memory_stats(i)) for i in range(torch.cuda.device_count())}
        with open(base + ".memory_stats.json", "w") as f:
            json.dump({"pid": os.getpid(), "devices": stats}, f)
    except Exception as e:
        _note("cannot write memory_stats() at exit (%s)" % e)


class _Lend:
    """The profile that has CUPTI lent to it, in the process that wrapped the profiler."""
    lent = False
    pid = None


def _control(what):
    """One control mark for the tracer (torch.cuda.nvtx.mark, i.e. nvtxMarkA); never raises."""
    try:
        import importlib
        importlib.import_module("torch.cuda.nvtx").mark(_CONTROL + what + ":torch.profiler")
    except Exception:
        pass


def _wants_cuda(args, kwargs):
    """Whether a _prepare_profiler(config, activities, ...) call asks for CUDA activity (CUPTI)."""
    acts = kwargs.get("activities", args[1] if len(args) > 1 else None)
    try:
        return any(getattr(a, "name", None) == "CUDA" for a in acts)
    except TypeError:
        return False


def _wrap_profiler(torch):
    """Wrap torch.autograd.profiler's _prepare_profiler and _disable_profiler with the control marks."""
    import importlib
    try:
        prof = importlib.import_module("torch.autograd.profiler")
    except Exception as e:
        _note("torch.profiler is not lent CUPTI (torch.autograd.profiler: %s: %s)" % (type(e).__name__, e))
        return
    prepare = getattr(prof, "_prepare_profiler", None)
    disable = getattr(prof, "_disable_profiler", None)
    if prepare is None or disable is None:
        _note("this PyTorch's profiler has no _prepare_profiler/_disable_profiler: torch.profiler is not "
              "lent CUPTI (a profile may take the tracer's activity buffers over)")
        return
    _Lend.pid = os.getpid()

    if os.environ.get(_ENV_LEND) == "0":  # --keep-cupti: no lend, only when it starts and stops
        _wrap_profiler_marks(prof, torch, prepare, disable, ("start", None, "stop"))
        return
    _wrap_profiler_marks(prof, torch, prepare, disable, ("lend", "lent", "return"))


def _wrap_profiler_marks(prof, torch, prepare, disable, marks):
    """Replace prepare and disable (in prof and torch.autograd) by wrappers that send the control
    marks (before the profiler sets up, after it did or None, after it stopped) for a CUDA profile."""
    import functools
    before, after, stop = marks

    @functools.wraps(prepare)
    def _prepare_profiler(*args, **kwargs):
        lend = not _Lend.lent and os.getpid() == _Lend.pid and _wants_cuda(args, kwargs)
        if lend:
            _control(before)
        try:
            result = prepare(*args, **kwargs)
        except BaseException:
            if lend:
                _control(stop)
            raise
        if lend:
            _Lend.lent = True
            if after:
                _control(after)
        return result

    @functools.wraps(disable)
    def _disable_profiler(*args, **kwargs):
        try:
            return disable(*args, **kwargs)
        finally:
            if _Lend.lent and os.getpid() == _Lend.pid:
                _Lend.lent = False
                _control(stop)

    prof._prepare_profiler = _prepare_profiler
    prof._disable_profiler = _disable_profiler
    autograd = getattr(torch, "autograd", None)  # the same functions, where other code takes them
    if getattr(autograd, "_prepare_profiler", None) is prepare:
        autograd._prepare_profiler = _prepare_profiler
    if getattr(autograd, "_disable_profiler", None) is disable:
        autograd._disable_profiler = _disable_profiler


def _on_torch_imported():
    torch = sys.modules.get("torch")
    if os.environ.get(_ENV_LEND) in ("0", "1"):
        _wrap_profiler(torch)
    if os.environ.get(_ENV_ON) != "1":
        return
    cuda = getattr(torch, "cuda", None)
    lazy = getattr(cuda, "_lazy_call", None)
    if lazy is None:
        _note("this PyTorch has no torch.cuda._lazy_call: no allocation history recorded")
        return
    lazy(_start)  # now if CUDA is already initialized, else at its initialization


class _TorchWatch:
    """A meta-path finder that lets `import torch` proceed, then calls back once it has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util
        sys.meta_path.remove(self)  # one look: the rest of the import is Python's own
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        inner = spec.loader

        class _Loader:
            def create_module(self, s):
                return inner.create_module(s)

            def exec_module(self, module):
                # torch sees its own loader, as without this hook (importlib.resources, pkgutil)
                module.__loader__ = inner
                if getattr(module, "__spec__", None) is not None:
                    module.__spec__.loader = inner
                inner.exec_module(module)
                try:
                    _on_torch_imported()
                except Exception as e:
                    _note("the record hook did not start (%s: %s)" % (type(e).__name__, e))

        spec.loader = _Loader()
        return spec


_chain_site_customize()
if os.environ.get(_ENV_ON) == "1" or os.environ.get(_ENV_LEND) in ("0", "1"):
    if "torch" in sys.modules:
        _on_torch_imported()
    else:
        sys.meta_path.insert(0, _TorchWatch())

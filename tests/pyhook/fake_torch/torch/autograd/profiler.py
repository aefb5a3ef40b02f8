"""torch.autograd.profiler of the stand-in: profile, calling Kineto through this module's globals as PyTorch's does."""
from torch.autograd import _disable_profiler, _prepare_profiler, ProfilerActivity  # noqa: F401


class profile:
    def __init__(self, use_device=None, use_cpu=True):
        self.kineto_activities = set()
        if use_cpu:
            self.kineto_activities.add(ProfilerActivity.CPU)
        if use_device == "cuda":
            self.kineto_activities.add(ProfilerActivity.CUDA)
        self.kineto_results = None

    def config(self):
        return "config"

    def _prepare_trace(self):
        _prepare_profiler(self.config(), self.kineto_activities)

    def _start_trace(self):
        pass

    def __enter__(self):
        self._prepare_trace()
        self._start_trace()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.kineto_results = _disable_profiler()
        return False

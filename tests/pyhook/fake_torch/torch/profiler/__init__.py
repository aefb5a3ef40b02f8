"""torch.profiler of the stand-in: profile (no schedule) over torch.autograd.profiler.profile, as PyTorch's _KinetoProfile."""
from torch.autograd import ProfilerActivity
from torch.autograd import profiler as _prof


class profile:
    def __init__(self, activities=None):
        self.activities = set(activities or (ProfilerActivity.CPU, ProfilerActivity.CUDA))
        self.profiler = None

    def start(self):
        self.profiler = _prof.profile(use_device="cuda" if ProfilerActivity.CUDA in self.activities else None,
                                      use_cpu=ProfilerActivity.CPU in self.activities)
        self.profiler._prepare_trace()
        self.profiler._start_trace()

    def stop(self):
        self.profiler.__exit__(None, None, None)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

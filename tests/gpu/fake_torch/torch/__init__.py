"""A shape-only stand-in for the parts of PyTorch that samples/pytorch uses (tests only).

Tensors carry a shape and one float; modules compute output shapes and check that layers
fit together (a Linear's in_features must match what reaches it); the "device" has
VT_FAKE_TOTAL_MEMORY bytes (default 80 GiB) and a convolution whose output would not fit
raises torch.cuda.OutOfMemoryError. Enough to run every scenario's control flow, options,
NVTX pairing and stats file without a GPU; it says nothing about real PyTorch behaviour.
"""
import contextlib
import math

from . import backends, cuda, nn, optim, utils, version  # noqa: F401

__version__ = "0.0.0+fake"
_seed = [0]


class device:
    def __init__(self, kind, index=0):
        self.type, self.index = kind, index


class Generator:
    def __init__(self, device=None):
        self.state = 0

    def manual_seed(self, seed):
        self.state = seed
        return self

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return self.state


def manual_seed(seed):
    _seed[0] = seed


class Tensor:
    def __init__(self, shape, value=0.0, requires_grad=False):
        self.shape = tuple(int(s) for s in shape)
        self.value = float(value)
        self.requires_grad = requires_grad

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self):
        return math.prod(self.shape)

    def dim(self):
        return len(self.shape)

    def to(self, dev, non_blocking=False):
        return Tensor(self.shape, self.value, self.requires_grad)

    def item(self):
        assert self.numel() == 1, f"item() of a tensor of shape {self.shape}"
        return self.value

    def __float__(self):
        return self.item()

    def __int__(self):
        return int(self.item())

    def _binary(self, other):
        v = other.value if isinstance(other, Tensor) else float(other)
        shape = self.shape if not isinstance(other, Tensor) or self.numel() >= other.numel() else other.shape
        return shape, v

    def __add__(self, other):
        shape, v = self._binary(other)
        return Tensor(shape, self.value + v, self.requires_grad)

    __radd__ = __add__

    def __mul__(self, other):
        shape, v = self._binary(other)
        return Tensor(shape, self.value * v, self.requires_grad)

    __rmul__ = __mul__

    def __eq__(self, other):
        shape, _ = self._binary(other)
        if isinstance(other, Tensor) and len(other.shape) == 2 and len(self.shape) == 2:
            shape = (self.shape[0], max(self.shape[1], other.shape[1]))
        return Tensor(shape, 1.0)

    def __getitem__(self, idx):
        if isinstance(idx, tuple) and idx == (slice(None), None):
            return Tensor(self.shape[:1] + (1,) + self.shape[1:], self.value)
        raise NotImplementedError(idx)

    def _reduce(self, dim=None):
        if dim is None:
            return Tensor((), self.value)
        return Tensor(self.shape[:dim] + self.shape[dim + 1:], self.value)

    def sum(self, dim=None):
        return self._reduce(dim)

    def mean(self, dim=None):
        return self._reduce(dim)

    def any(self, dim=None):
        return self._reduce(dim)

    def argmax(self, dim=None):
        return self._reduce(dim)

    def float(self):
        return self

    def topk(self, k, dim=-1):
        class R:
            pass
        r = R()
        r.indices = Tensor(self.shape[:-1] + (k,))
        r.values = Tensor(self.shape[:-1] + (k,))
        return r

    def backward(self):
        assert self.requires_grad, "backward() of a tensor without grad"


def _shape(size):
    return size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


def randn(*size, generator=None, device=None):
    shape = _shape(size)
    if device is not None:
        cuda._alloc(math.prod(shape) * 4)
    return Tensor(shape, ((generator.next() if generator else 1) % 1000) / 1000.0)


def randint(high, size, generator=None, device=None):
    return Tensor(size, (generator.next() if generator else 0) % high)


def stack(tensors):
    return Tensor((len(tensors),) + tensors[0].shape)


def cat(tensors, dim=0):
    first = tensors[0].shape
    return Tensor((sum(t.shape[0] for t in tensors),) + first[1:])


_grad = [True]


@contextlib.contextmanager
def no_grad():
    old = _grad[0]
    _grad[0] = False
    try:
        yield
    finally:
        _grad[0] = old


def is_grad_enabled():
    return _grad[0]


OutOfMemoryError = cuda.OutOfMemoryError

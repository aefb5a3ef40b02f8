"""torch.backends of the shape-only stand-in."""


class _Cudnn:
    benchmark = True


cudnn = _Cudnn()

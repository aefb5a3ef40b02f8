"""torch.utils of the shape-only stand-in."""
from . import data  # noqa: F401

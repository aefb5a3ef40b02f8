"""torch.version of the shape-only stand-in."""
cuda = "13.0"

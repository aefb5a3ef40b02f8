"""torch.optim of the shape-only stand-in."""


class SGD:
    def __init__(self, params, lr):
        self.params = list(params)
        assert self.params and lr > 0

    def zero_grad(self, set_to_none=True):
        pass

    def step(self):
        pass

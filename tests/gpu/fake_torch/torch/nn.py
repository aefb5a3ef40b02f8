"""torch.nn of the shape-only stand-in: modules compute output shapes and check they fit."""
import math

import torch


class Module:
    training = True

    def children(self):
        return []

    def parameters(self):
        yield torch.Tensor((1,), requires_grad=True)
        for c in self.children():
            yield from c.parameters()

    def to(self, dev):
        return self

    def train(self, mode=True):
        self.training = mode
        for c in self.children():
            c.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def __call__(self, x, *rest):
        out = self.forward(x, *rest)
        out.requires_grad = torch.is_grad_enabled()
        return out


class Sequential(Module):
    def __init__(self, *mods):
        self.mods = mods

    def children(self):
        return list(self.mods)

    def forward(self, x):
        for m in self.mods:
            x = m(x)
        return x


class Conv2d(Module):
    def __init__(self, cin, cout, k, stride=1, padding=0, bias=True):
        self.cin, self.cout, self.stride = cin, cout, stride

    def forward(self, x):
        n, c, h, w = x.shape
        assert c == self.cin, f"Conv2d expects {self.cin} channels, got {c}"
        shape = (n, self.cout, -(-h // self.stride), -(-w // self.stride))
        torch.cuda._alloc(math.prod(shape) * 4)
        return torch.Tensor(shape)


class BatchNorm2d(Module):
    def __init__(self, c):
        self.c = c

    def forward(self, x):
        assert x.shape[1] == self.c
        return torch.Tensor(x.shape)


class ReLU(Module):
    def forward(self, x):
        return torch.Tensor(x.shape)


class AdaptiveAvgPool2d(Module):
    def __init__(self, size):
        self.size = size

    def forward(self, x):
        return torch.Tensor(x.shape[:2] + (self.size, self.size))


class Flatten(Module):
    def forward(self, x):
        return torch.Tensor((x.shape[0], math.prod(x.shape[1:])))


class Linear(Module):
    def __init__(self, fin, fout):
        self.fin, self.fout = fin, fout

    def forward(self, x):
        assert x.shape[-1] == self.fin, f"Linear expects {self.fin} features, got {x.shape}"
        return torch.Tensor(x.shape[:-1] + (self.fout,))


class Embedding(Module):
    def __init__(self, n, d):
        self.n, self.d = n, d

    def forward(self, x):
        return torch.Tensor(x.shape + (self.d,))


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward, dropout, batch_first):
        assert d_model % nhead == 0 and batch_first
        self.d = d_model

    def forward(self, x):
        assert x.shape[-1] == self.d
        return torch.Tensor(x.shape)


class TransformerEncoder(Module):
    def __init__(self, layer, num_layers, enable_nested_tensor=True):
        self.layers = [layer] * num_layers

    def children(self):
        return self.layers

    def forward(self, x):
        for m in self.layers:
            x = m(x)
        return x


class CrossEntropyLoss(Module):
    def forward(self, out, target):
        assert out.shape[0] == target.shape[0] and len(out.shape) == 2
        return torch.Tensor((), 2.5)

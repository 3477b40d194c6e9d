"""Small torch modules shared by the end-to-end tests."""

import torch


class Fn(torch.nn.Module):
    """A function of one or two tensors as a module for ``fuseflow.compile``: its inputs are
    named ``x`` and ``y`` (the names a ``Schedule``'s ``formats`` refers to)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y=None):
        return self.fn(x) if y is None else self.fn(x, y)

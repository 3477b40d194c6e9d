"""Absent entries (issue 14, fuzzer seed 4700), both engines, fused: a reduction reads the
background of its body's absent entries (``sigmoid(0)`` is 0.5 wherever it is summed)."""

import warnings

import pytest
import torch

import fuseflow

warnings.filterwarnings("ignore")


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "dcsr"])
@pytest.mark.parametrize("name, fn", [
    ("sigmoid_colsum", lambda x: torch.sigmoid(x).sum(0)),
    ("exp_colsum", lambda x: torch.exp(x).sum(0)),
    ("sigmoid_rowsum", lambda x: torch.sigmoid(x).sum(1)),
    ("exp_rowsum", lambda x: torch.exp(x).sum(1)),
])
def test_a_reduction_reads_the_background_of_absent_entries(fmt, name, fn):
    """A body whose value at absent entries is not 0 (``sigmoid(0) = 0.5``, ``exp(0) = 1``)
    summed over the outer level of its storage, whatever the level order: the variables an
    accumulator's keys come from are visited in full too (fuzzer seed 4700: a column sum of
    sigmoid(tanh(x)) of a COO input missed 0.5 per absent entry)."""
    g = torch.Generator().manual_seed(5)
    x = torch.rand(4, 3, generator=g) * (torch.rand(4, 3, generator=g) < 0.5)
    compiled = fuseflow.compile(Fn(fn), (x,), fuseflow.Schedule(fusion="full",
                                                               formats={"x": fmt}))
    runs = [compiled.simulate(x, engine=e) for e in ("fast", "reference")]
    for run in runs:
        torch.testing.assert_close(run.output, fn(x))
    assert runs[0].cycles == runs[1].cycles

"""Selects by a comparison keep PyTorch's NaN semantics (found by the model fuzzer, seed 329:
``torch.where(x > y, x, y)`` of a 0/0 gave NaN where PyTorch gives y).

``torch.where(x > y, x, y)`` compares ordered (false where either is NaN: the result is y);
torch-mlir's ReLU and clamp compare unordered, and PyTorch's relu and clamp propagate NaN."""

import warnings

import pytest
import torch

import fuseflow
from fuseflow.dialects.alu import evaluate

warnings.filterwarnings("ignore")
NAN = float("nan")
X = torch.tensor([[NAN, 1.0, -1.0, 0.5], [0.3, NAN, 2.0, -0.25]])
Y = torch.tensor([[0.5, NAN, -2.0, 0.5], [NAN, NAN, 1.0, 0.75]])

TERMS = {
    "where_gt": lambda x, y: torch.where(x > y, x, y),
    "where_lt": lambda x, y: torch.where(x < y, x, y),
    "where_ge_swapped": lambda x, y: torch.where(y >= x, x, y),
    "where_le_swapped": lambda x, y: torch.where(y <= x, x, y),
    "where_gt_const": lambda x, y: torch.where(x > 0.5, x, 0.5),
    "where_lt_const": lambda x, y: torch.where(x < 0.5, x, 0.5),
    "relu": lambda x, y: torch.relu(x),
    "clamp": lambda x, y: torch.clamp(x, -0.5, 0.5),
    "maximum": lambda x, y: torch.maximum(x, y),
    "minimum": lambda x, y: torch.minimum(x, y),
}


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y) * 2.0


@pytest.mark.parametrize("fusion", ["unfused", "full"])
@pytest.mark.parametrize("name", list(TERMS))
def test_selects_by_comparisons_keep_pytorch_nan_semantics(name, fusion):
    model = Fn(TERMS[name])
    compiled = fuseflow.compile(model, (X, Y), fuseflow.Schedule(fusion=fusion))
    expected = model(X, Y)
    for engine in ("fast", "reference"):
        got = compiled.simulate(X, Y, engine=engine).output
        torch.testing.assert_close(got, expected, equal_nan=True)


def test_select_alu_ops():
    assert evaluate("gt_select", NAN, 1.0) == 1.0 and evaluate("gt_select", 2.0, 1.0) == 2.0
    assert evaluate("gt_select", 1.0, NAN) != evaluate("gt_select", 1.0, NAN)      # NaN
    assert evaluate("lt_select", NAN, 1.0) == 1.0 and evaluate("lt_select", 0.5, 1.0) == 0.5
    assert evaluate("scalar_gt_select", NAN, scalar=0.5) == 0.5
    assert evaluate("scalar_lt_select", 2.0, scalar=0.5) == 0.5


@pytest.mark.parametrize("fusion", ["full", "unfused"])
def test_where_against_a_fused_reduction(fusion):
    """``torch.where(x > m, x, m)`` with ``m`` a mean fused into the kernel: the comparison
    and the select each inline their own copy of the reduction, equal up to the names of the
    variables they bind (fuzzer seed 172: "unsupported 'arith.select'")."""
    class M(torch.nn.Module):
        def forward(self, a, x):
            m = a.mean(0)
            return torch.where(x > m, x, m) * 2.0

    g = torch.Generator().manual_seed(1)
    a, x = torch.rand(2, 3, generator=g), torch.rand(3, generator=g)
    compiled = fuseflow.compile(M(), (a, x), fuseflow.Schedule(fusion=fusion))
    for engine in ("fast", "reference"):
        out = compiled.simulate(a, x, engine=engine).output
        torch.testing.assert_close(out, M()(a, x))

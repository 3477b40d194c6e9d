"""Absent entries (issue 14, fuzzer seeds 6545 and 4700), both engines, fused and not.

They annihilate (seed 6545): a value computed where a union added an entry, from operands
absent there (``x / x`` at ``0 / 0``), is not a stored NaN: the product with the absent entry
that made the union add it is 0.0, as PyTorch computes with the sparse operand's zeros. And a
reduction reads their background (seed 4700): ``sigmoid(0)`` is 0.5 wherever it is summed."""

import warnings

import pytest
import torch
from fn_module import Fn

import fuseflow

warnings.filterwarnings("ignore")


class Ratio(torch.nn.Module):
    def forward(self, x, m, y):
        return ((x / x) * m - y) * -1.5


def _inputs(seed, mask_density):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(3, 5, generator=g) + 0.5             # no zeros: x / x is 1 everywhere
    m = torch.rand(3, 5, generator=g) < mask_density
    y = torch.rand(3, 5, generator=g)
    return x, m, y


@pytest.mark.parametrize("fusion", ["full", "unfused"])
@pytest.mark.parametrize("mask_density", [0.0, 0.5])
@pytest.mark.parametrize("x_format", ["dense", "csr"])
def test_a_quotient_of_absent_entries_times_an_absent_mask_is_zero(fusion, mask_density,
                                                                    x_format):
    x, m, y = _inputs(3, mask_density)
    expected = Ratio()(x, m, y)
    assert expected.isfinite().all()
    formats = {"m": "csr"} if x_format == "dense" else {"m": "csr", "x": "csr"}
    compiled = fuseflow.compile(Ratio(), (x, m.to_sparse_csr(), y),
                                fuseflow.Schedule(fusion=fusion, formats=formats))
    runs = [compiled.simulate(x, m, y, engine=e) for e in ("fast", "reference")]
    for run in runs:
        torch.testing.assert_close(run.output, expected)
    assert runs[0].cycles == runs[1].cycles


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


@pytest.mark.parametrize("fusion", ["full", "unfused"])
@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "dcsr"])
@pytest.mark.parametrize("dim, keepdim", [(0, True), (0, False), (-1, False)])
def test_a_max_over_a_full_space_counts_absent_zeros(fusion, fmt, dim, keepdim):
    """``amax`` of a sparse input whose stored values are all negative, over either dimension:
    every fiber with an absent entry has max 0.0 (an array's N read as 0.0 by the reducer)."""
    g = torch.Generator().manual_seed(7)
    x = -(torch.rand(4, 3, generator=g) + 0.5) * (torch.rand(4, 3, generator=g) < 0.6)
    x[1] = -1.0                                          # a fiber with no absent entry

    def fn(v):
        return torch.exp(torch.amax(v, dim, keepdim=keepdim))

    compiled = fuseflow.compile(Fn(fn), (x,), fuseflow.Schedule(fusion=fusion,
                                                               formats={"x": fmt}))
    runs = [compiled.simulate(x, engine=e) for e in ("fast", "reference")]
    for run in runs:
        torch.testing.assert_close(run.output, fn(x))
    assert runs[0].cycles == runs[1].cycles


def test_a_quotient_of_absent_entries_is_nan_as_in_pytorch():
    """``x / x`` of an all-zero CSR input is NaN everywhere, in PyTorch and here (fuzzer seed
    329: a quotient that annihilated gave 0.0)."""
    x = torch.zeros(3, 4)

    def fn(v):
        return torch.maximum(torch.sqrt(torch.relu(v / v + 1.0)), v)

    compiled = fuseflow.compile(Fn(fn), (x,), fuseflow.Schedule(fusion="full",
                                                               formats={"x": "csr"}))
    expected = fn(x)
    assert expected.isnan().all()
    for engine in ("fast", "reference"):
        torch.testing.assert_close(compiled.simulate(x, engine=engine).output, expected,
                                   equal_nan=True)

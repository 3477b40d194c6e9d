"""Reductions nested under an iteration whose fibers can be empty (an empty row of a sparse
operand): the reducer gets the outer coordinates, so an empty row yields no phantom value.
Each case used to fail in the simulator (an ALU or writer met a 0.0 against a stop)."""

import warnings

import pytest
import torch

import fuseflow

warnings.filterwarnings("ignore")


class ChainCSC(torch.nn.Module):
    def forward(self, a, h, w):
        return a @ (h @ w)


class BiasRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.weight = torch.nn.Parameter(torch.randn(5, 3, generator=g))
        self.bias = torch.nn.Parameter(torch.randn(3, generator=g))

    def forward(self, a, x):
        return torch.relu(a @ (x @ self.weight) + self.bias)


class RowSum(torch.nn.Module):
    def forward(self, a):
        return a.sum(dim=1)


def _sparse(m, n, density, seed, empty_rows=()):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(m, n, generator=g) * (torch.rand(m, n, generator=g) < density)
    a[list(empty_rows)] = 0
    return a


@pytest.mark.parametrize("engine", ["reference", "fast"])
@pytest.mark.parametrize("density", [0.0, 0.5])
def test_fused_chain_with_csc_weight_and_empty_rows(engine, density):
    # default order d0,d1,d2,d3: inner products over A's (possibly empty) rows
    a = _sparse(6, 6, density, 0, empty_rows=(2, 5))
    h = torch.rand(6, 5, generator=torch.Generator().manual_seed(2))
    w = _sparse(5, 4, 0.5, 3)
    inputs = (a.to_sparse_csr(), h, w.to_sparse_csc())
    compiled = fuseflow.compile(ChainCSC(), inputs, fuseflow.Schedule(fusion="full"))
    sam = compiled.mlir("sam")
    assert '"sam.reduce"' in sam and "!sam.crd) -> !sam.val" in sam   # a reducer with outer crds
    got = compiled.simulate(*inputs, engine=engine).output
    torch.testing.assert_close(got, ChainCSC()(a, h, w), rtol=1e-5, atol=1e-6)


def test_explicit_inner_product_order_with_an_empty_row():
    a = _sparse(4, 6, 0.5, 0, empty_rows=(1,))
    x = torch.rand(6, 5, generator=torch.Generator().manual_seed(4))
    model = BiasRelu()
    schedule = fuseflow.Schedule(fusion="full", order=("d0", "d1", "d2", "d3"))
    compiled = fuseflow.compile(model, (a.to_sparse_csr(), x), schedule)
    got = compiled.simulate(a.to_sparse_csr(), x).output
    torch.testing.assert_close(got, model(a, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows", [(0, 1, 2, 3), (1, 3)])
def test_row_sums_of_dcsr_with_empty_rows(rows):
    a = _sparse(4, 5, 0.6, 5, empty_rows=rows)
    compiled = fuseflow.compile(RowSum(), (a,), fuseflow.Schedule(formats={"a": "dcsr"}))
    assert torch.equal(compiled.simulate(a).output, a.sum(dim=1))


def test_engines_agree_on_reducers_with_outer_coordinates():
    a = _sparse(6, 6, 0.5, 0, empty_rows=(0, 2, 5))
    h = torch.rand(6, 5, generator=torch.Generator().manual_seed(2))
    w = _sparse(5, 4, 0.5, 3)
    inputs = (a.to_sparse_csr(), h, w.to_sparse_csc())
    compiled = fuseflow.compile(ChainCSC(), inputs, fuseflow.Schedule(fusion="full"))
    ref = compiled.simulate(*inputs, engine="reference")
    fast = compiled.simulate(*inputs, engine="fast")
    assert torch.equal(ref.output, fast.output)
    assert ref.cycles == fast.cycles
    assert {k: s.summary() for k, s in ref.stats.items()} == {k: s.summary() for k, s in fast.stats.items()}

"""Reductions nested under an iteration whose fibers can be empty (an empty row of a sparse
operand): the reducer gets the outer coordinates, so an empty row yields no phantom value.
Each case used to fail in the simulator (an ALU or writer met a 0.0 against a stop)."""

import warnings

import pytest
import torch
from sparse_models import ChainCSC, RowSum, chain_inputs, sparse

import fuseflow

warnings.filterwarnings("ignore")


class BiasRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.weight = torch.nn.Parameter(torch.randn(5, 3, generator=g))
        self.bias = torch.nn.Parameter(torch.randn(3, generator=g))

    def forward(self, a, x):
        return torch.relu(a @ (x @ self.weight) + self.bias)


@pytest.mark.parametrize("engine", ["reference", "fast"])
@pytest.mark.parametrize("density", [0.0, 0.5])
def test_fused_chain_with_csc_weight_and_empty_rows(engine, density):
    # default order d0,d1,d2,d3: inner products over A's (possibly empty) rows
    inputs = chain_inputs(density, (2, 5), seeds=(0, 2, 3))
    compiled = fuseflow.compile(ChainCSC(), inputs, fuseflow.Schedule(fusion="full"))
    sam = compiled.mlir("sam")
    assert '"sam.reduce"' in sam and "!sam.crd) -> !sam.val" in sam   # a reducer with outer crds
    got = compiled.simulate(*inputs, engine=engine).output
    want = ChainCSC()(*(t.to_dense() for t in inputs))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_explicit_inner_product_order_with_an_empty_row():
    a = sparse(4, 6, 0.5, 0, empty_rows=(1,))
    x = torch.rand(6, 5, generator=torch.Generator().manual_seed(4))
    model = BiasRelu()
    schedule = fuseflow.Schedule(fusion="full", order=("d0", "d1", "d2", "d3"))
    compiled = fuseflow.compile(model, (a.to_sparse_csr(), x), schedule)
    got = compiled.simulate(a.to_sparse_csr(), x).output
    torch.testing.assert_close(got, model(a, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows", [(0, 1, 2, 3), (1, 3)])
def test_row_sums_of_dcsr_with_empty_rows(rows):
    a = sparse(4, 5, 0.6, 5, empty_rows=rows)
    compiled = fuseflow.compile(RowSum(), (a,), fuseflow.Schedule(formats={"a": "dcsr"}))
    assert torch.equal(compiled.simulate(a).output, a.sum(dim=1))


def test_engines_agree_on_reducers_with_outer_coordinates():
    inputs = chain_inputs(0.5, (0, 2, 5), seeds=(0, 2, 3))
    compiled = fuseflow.compile(ChainCSC(), inputs, fuseflow.Schedule(fusion="full"))
    ref = compiled.simulate(*inputs, engine="reference")
    fast = compiled.simulate(*inputs, engine="fast")
    assert torch.equal(ref.output, fast.output)
    assert ref.cycles == fast.cycles
    summaries = [{k: s.summary() for k, s in r.stats.items()} for r in (ref, fast)]
    assert summaries[0] == summaries[1]

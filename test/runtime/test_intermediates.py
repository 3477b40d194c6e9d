"""``simulate(keep_intermediates=False)``: each kernel's results are let go once the last op
reading them ran; outputs, cycles and statistics stay those of a run that keeps them."""

import warnings

import pytest
import torch

import fuseflow

warnings.filterwarnings("ignore")


class Chain(torch.nn.Module):
    """Three kernels unfused, each reading the one before; the input read by two of them."""

    def forward(self, a, x):
        h = torch.relu(a @ x)
        return a @ h + h


def _inputs():
    g = torch.Generator().manual_seed(0)
    a = torch.rand(8, 8, generator=g) * (torch.rand(8, 8, generator=g) < 0.4)
    return a.to_sparse_csr(), torch.rand(8, 4, generator=g)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_letting_intermediates_go_keeps_outputs_cycles_and_statistics(engine):
    inputs = _inputs()
    compiled = fuseflow.compile(Chain(), inputs, fuseflow.Schedule(fusion="unfused"))
    kept = compiled.simulate(*inputs, engine=engine)
    let_go = compiled.simulate(*inputs, engine=engine, keep_intermediates=False)
    assert len(kept.run.kernels) >= 3
    assert torch.equal(kept.output, let_go.output)
    torch.testing.assert_close(let_go.output, Chain()(*inputs), rtol=1e-5, atol=1e-6)
    assert kept.cycles == let_go.cycles
    assert [k.result.summary() for k in kept.run.kernels] == \
        [k.result.summary() for k in let_go.run.kernels]
    *inner, last = let_go.run.kernels
    assert all(out is None for k in inner for out in k.result.outputs)
    assert all(out is not None for out in last.result.outputs)
    assert all(out is not None for k in kept.run.kernels for out in k.result.outputs)


def test_letting_intermediates_go_with_kernels_in_forked_processes():
    inputs = _inputs()
    compiled = fuseflow.compile(Chain(), inputs, fuseflow.Schedule(fusion="unfused"))
    kept = compiled.simulate(*inputs)
    forked = compiled.simulate(*inputs, workers=2, keep_intermediates=False)
    assert torch.equal(kept.output, forked.output) and kept.cycles == forked.cycles

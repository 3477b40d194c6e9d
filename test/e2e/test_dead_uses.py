"""A select of a comparison folded into max/gt_select drops the comparison's own copies of
fused producers; the uses they read must leave the kernel with them (their variables are in
no order: fusing a softmax or a mean over torch.where(a > b, a, b) raised KeyError 'd4' in
the order search; fuzzer seeds 3558 and 3802)."""

import warnings

import pytest
import torch

import fuseflow

warnings.filterwarnings("ignore")


class SoftmaxOfMax(torch.nn.Module):
    def forward(self, a, b):
        return torch.log_softmax(torch.where(a > b, a, b), -1)


class MeanOfMax(torch.nn.Module):
    def forward(self, a, b):
        return (torch.where(a > b, a, b).mean(0) - 0.5) ** 2


@pytest.mark.parametrize("model", [SoftmaxOfMax(), MeanOfMax()], ids=["softmax", "mean"])
@pytest.mark.parametrize("sparse", [False, True])
def test_fused_reductions_over_a_select_of_a_comparison(model, sparse):
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(3, 4, generator=g), torch.rand(3, 4, generator=g)
    inputs = (a.to_sparse_csr(), b) if sparse else (a, b)
    compiled = fuseflow.compile(model, inputs, fuseflow.Schedule(fusion="full"))
    assert len(compiled.kernels) == 1
    expected = model(a, b)
    fast = compiled.simulate(*inputs, engine="fast")
    ref = compiled.simulate(*inputs, engine="reference")
    torch.testing.assert_close(fast.output, expected, rtol=1e-5, atol=1e-6)
    assert torch.equal(fast.output, ref.output) and fast.cycles == ref.cycles

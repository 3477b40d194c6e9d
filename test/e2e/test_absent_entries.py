"""Absent entries annihilate (issue 14, fuzzer seed 6545): a value computed where a union
added an entry, from operands absent there (``x / x`` at ``0 / 0``), is not a stored NaN:
the product with the absent entry that made the union add it is 0.0, as PyTorch computes
with the sparse operand's zeros. Both engines, fused and not."""

import warnings

import pytest
import torch

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

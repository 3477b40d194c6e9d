"""A small compiled and simulated model shared by the view tests."""

import warnings
from dataclasses import dataclass

import pytest
import torch

import fuseflow

warnings.filterwarnings("ignore", category=UserWarning)


class SpMMReLU(torch.nn.Module):
    def forward(self, A, B):
        return torch.relu(A @ B)   # the view links every block here


@dataclass
class Compiled:
    compiled: object
    result: object
    line: int


@pytest.fixture(scope="session")
def spmm_relu():
    """SpMM then ReLU, unfused (two kernels), simulated with the fast engine."""
    gen = torch.Generator().manual_seed(0)
    mask = torch.rand(12, 8, generator=gen) > 0.6
    A = (torch.rand(12, 8, generator=gen) * mask).to_sparse_csr()
    B = torch.rand(8, 5, generator=gen)
    compiled = fuseflow.compile(SpMMReLU(), (A, B))
    result = compiled.simulate(A, B, engine="fast")
    assert torch.allclose(result.output, SpMMReLU()(A, B))
    line = SpMMReLU.forward.__code__.co_firstlineno + 1
    return Compiled(compiled, result, line)

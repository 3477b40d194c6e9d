"""Host layout ops between kernels (fuseflow.layout) and dense inputs read out of storage order."""

import numpy as np
import pytest
import torch

import fuseflow
from fuseflow import mlir
from fuseflow.runtime import ExecutionError, run_module
from fuseflow.sim.formats import FiberTree

HOST_ONLY = """
func.func @main(%a: tensor<4x6xf32>) -> tensor<3x4x2xf32> {
  %s = tensor.extract_slice %a[0, 0] [4, 6] [1, 1] : tensor<4x6xf32> to tensor<4x6xf32>
  %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [4, 3, 2] : tensor<4x6xf32> into tensor<4x3x2xf32>
  %init = tensor.empty() : tensor<3x4x2xf32>
  %t = linalg.transpose ins(%e : tensor<4x3x2xf32>) outs(%init : tensor<3x4x2xf32>) permutation = [1, 0, 2]
  return %t : tensor<3x4x2xf32>
}
"""

SLICE = """
func.func @main(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %a[1, 2] [2, 3] [2, 1] : tensor<4x6xf32> to tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
"""


def _run(text, array):
    with mlir.new_context():
        module = mlir.Module.parse(text)
        run = run_module(module, [FiberTree.from_dense(array)])
        return run.outputs[0].to_dense(), run.cycles


def test_host_views_execute_between_kernels_at_zero_cycles():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    out, cycles = _run(HOST_ONLY, a)
    assert np.array_equal(out, a.reshape(4, 3, 2).transpose(1, 0, 2))
    assert cycles == 0


def test_strided_slice():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    out, _ = _run(SLICE, a)
    assert np.array_equal(out, a[1:5:2, 2:5])


def test_non_layout_host_op_is_an_error_naming_it():
    text = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
    with pytest.raises(ExecutionError, match="'linalg.copy' outside a sam.graph"):
        _run(text, np.zeros(4, dtype=np.float32))


class _Heads(torch.nn.Module):
    """Head split, per-head scores and merge: views of dense tensors around one kernel."""

    def forward(self, q, k):
        q = q.view(8, 2, 3).transpose(0, 1)
        k = k.view(8, 2, 3).transpose(0, 1)
        scores = q @ k.transpose(-2, -1)
        return scores.transpose(0, 1).reshape(8, 16)


@pytest.mark.parametrize("fusion", ["unfused", "full"])
def test_head_split_views_are_hoisted_and_match_pytorch(fusion):
    torch.manual_seed(0)
    q, k = torch.randn(8, 6), torch.randn(8, 6)
    compiled = fuseflow.compile(_Heads(), (q, k), fuseflow.Schedule(fusion=fusion))
    sam = compiled.mlir("sam")
    assert "tensor.expand_shape" in sam and "linalg.transpose" in sam
    assert sam.count('"sam.graph"') == 1          # the transposes are views, not kernels
    assert torch.allclose(compiled.simulate(q, k).output, _Heads()(q, k), rtol=1e-5, atol=1e-6)

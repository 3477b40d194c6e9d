"""User-facing errors of the compile API: located, naming the problem and the valid choices."""

import inspect
import warnings

import fn_module
import pytest
import torch
from fn_module import Fn

import fuseflow
from fuseflow import mlir
from fuseflow.frontend import FrontendError
from fuseflow.kernels import KERNELS
from fuseflow.passes.base import PipelineError

warnings.filterwarnings("ignore")

FORWARD_LINE = f"{fn_module.__file__}:{inspect.getsourcelines(Fn.forward)[1] + 1}"
"""Where the op is called: the line of ``Fn.forward`` that calls the wrapped function."""


class Remainder(torch.nn.Module):
    def forward(self, A, B):
        return torch.remainder(A, B)


def test_unsupported_op_is_a_located_error_naming_the_op():
    A, B = torch.rand(4, 4) + 1, torch.rand(4, 4) + 1
    with pytest.raises(mlir.MLIRError) as info:
        fuseflow.compile(Remainder(), (A, B))
    message = str(info.value)
    assert "unsupported op" in message
    assert "test_api_errors.py" in message  # the model's source line is the location


@pytest.mark.parametrize("fn, node, aten, lowered", [
    (lambda x: torch.cumsum(x, 0), "cumsum", "aten.cumsum", "tm_tensor.scan"),
    (lambda x: torch.sort(x, -1).values, "sort", "aten.sort", "tm_tensor.sort"),
    (lambda x: torch.topk(x, 2).values, "topk", "aten.topk", "tm_tensor.sort"),
], ids=["cumsum", "sort", "topk"])
def test_ops_lowered_outside_linalg_are_named_by_pytorch_op_and_line(fn, node, aten, lowered):
    with pytest.raises(FrontendError) as info:
        fuseflow.compile(Fn(fn), (torch.rand(3, 4),))
    err = info.value
    assert err.message == (f"PyTorch op '{aten}' (FX node '{node}') is not supported: "
                           f"torch-mlir lowers it to '{lowered}', which FuseFlow has no "
                           "dataflow lowering for; supported operations: docs/supported-ops.md")
    assert err.location == FORWARD_LINE                    # the model's line


def test_unknown_format_lists_valid_formats():
    kernel = KERNELS["spmv"]
    with pytest.raises(FrontendError, match="valid formats: dense, csr"):
        fuseflow.compile(kernel.module(), kernel.inputs(0.5), fuseflow.Schedule(formats={"A": "cssr"}))


def test_unknown_input_name_lists_inputs():
    kernel = KERNELS["spmv"]
    with pytest.raises(FrontendError, match="inputs are: A, x"):
        fuseflow.compile(kernel.module(), kernel.inputs(0.5), fuseflow.Schedule(formats={"M": "csr"}))


def test_unknown_fusion_lists_choices():
    kernel = KERNELS["spmm"]
    with pytest.raises(ValueError, match="'most' needs an application's fusion plan; valid "
                                         "without one: 'unfused', 'full' or explicit groups"):
        fuseflow.compile(kernel.module(), kernel.inputs(0.5), fuseflow.Schedule(fusion="most"))


def test_illegal_order_names_the_tensor_and_legal_orders():
    kernel = KERNELS["spgemm"]
    with pytest.raises(mlir.MLIRError, match=r"T1\[d2,d1\] out of storage order; legal orders: d0,d2,d1$"):
        fuseflow.compile(kernel.module(), kernel.inputs(0.5), fuseflow.Schedule(order=("d0", "d1", "d2")))


def test_dense_operand_read_out_of_storage_order_is_bound_transposed():
    kernel = KERNELS["spmm"]           # CSR x dense; (d0, d1, d2) reads the dense B column-wise
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5),
                                fuseflow.Schedule(order=("d0", "d1", "d2")))
    sam = compiled.mlir("sam")
    assert "linalg.transpose" in sam and "permutation = [1, 0]" in sam
    for density in (0.0, 0.5, 1.0):
        inputs = kernel.inputs(density, seed=3)
        assert torch.equal(compiled.simulate(*inputs).output, kernel.module()(*inputs))


def test_user_chosen_order_is_used():
    kernel = KERNELS["spmm_csc"]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5),
                                fuseflow.Schedule(order=("d2", "d0", "d1")))
    assert 'order = ["d2", "d0", "d1"]' in compiled.mlir("kernels")
    assert 'order = ["d2", "d0", "d1"]' in compiled.mlir("sam")
    inputs = kernel.inputs(0.7, seed=4)
    assert torch.equal(compiled.simulate(*inputs).output, kernel.module()(*inputs))


def test_schedule_order_accepts_loop_names_and_rejects_anything_else():
    assert fuseflow.Schedule(order=None) == fuseflow.Schedule()
    assert fuseflow.Schedule(order="d0, d2,d1").order == ("d0", "d2", "d1")
    assert fuseflow.Schedule(order=["d0", "d1"]).order == ("d0", "d1")
    with pytest.raises(TypeError, match="loop names"):
        fuseflow.Schedule(order=(0, 1))


def test_unknown_ir_level_lists_levels():
    kernel = KERNELS["add"]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5))
    assert "linalg.generic" in compiled.mlir("linalg")
    assert "fuse.kernel" in compiled.mlir("kernels")
    with pytest.raises(PipelineError, match="valid choices: linalg, kernels, sam"):
        compiled.mlir("llvm")

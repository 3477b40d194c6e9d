"""End-to-end: every single-expression kernel compiled from its PyTorch module, simulated,
and compared with PyTorch eager on the same inputs."""

import warnings

import pytest
import torch

import fuseflow
from fuseflow.kernels import KERNELS

warnings.filterwarnings("ignore")

SPARSITIES = [0.0, 0.5, 0.9, 0.99, 1.0]  # 1.0: every sparse operand is empty


@pytest.fixture(scope="module", params=sorted(KERNELS))
def compiled_kernel(request):
    kernel = KERNELS[request.param]
    inputs = kernel.inputs(0.5)
    compiled = fuseflow.compile(kernel.module(), inputs,
                                fuseflow.Schedule(formats=dict(kernel.declared)))
    return kernel, compiled


def _expected(kernel, inputs):
    out = kernel.module()(*inputs)
    return out.to_dense() if out.layout != torch.strided else out


@pytest.mark.parametrize("sparsity", SPARSITIES)
def test_matches_pytorch_integer_data(compiled_kernel, sparsity):
    kernel, compiled = compiled_kernel
    inputs = kernel.inputs(sparsity, seed=1)
    result = compiled.simulate(*inputs)
    assert torch.equal(result.output, _expected(kernel, inputs))
    assert result.cycles > 0


def test_matches_pytorch_with_empty_rows_float_data(compiled_kernel):
    kernel, compiled = compiled_kernel
    inputs = kernel.inputs(0.3, seed=2, integer=False, empty_rows=True)
    result = compiled.simulate(*inputs)
    torch.testing.assert_close(result.output, _expected(kernel, inputs), rtol=1e-5, atol=1e-6)


def test_sparser_inputs_take_fewer_cycles():
    kernel = KERNELS["spmm"]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5))
    dense_cycles = compiled.simulate(*kernel.inputs(0.0, seed=3)).cycles
    sparse_cycles = compiled.simulate(*kernel.inputs(0.9, seed=3)).cycles
    assert sparse_cycles < dense_cycles


def test_sparsity_applies_to_every_sparse_operand():
    for kernel in KERNELS.values():
        sparse = kernel.sparse_operands()
        assert any(sparse), kernel.name
        dense_in, sparse_in = kernel.inputs(0.0, seed=4), kernel.inputs(0.95, seed=4)
        for is_sparse, a, b in zip(sparse, dense_in, sparse_in):
            nnz_a, nnz_b = (int(t.to_dense().count_nonzero()) for t in (a, b))
            assert nnz_a == a.numel()
            assert (nnz_b < nnz_a) if is_sparse else (nnz_b == nnz_a), kernel.name


# A + 1.0 is non-zero everywhere: its kernel visits every position whatever A's sparsity.
DENSE_ITERATION = {"add_scalar"}


def test_sparsity_changes_the_cycles_of_every_sparse_kernel(compiled_kernel):
    kernel, compiled = compiled_kernel
    if kernel.name in DENSE_ITERATION:
        pytest.skip("iterates the dense result space")
    dense = compiled.simulate(*kernel.inputs(0.0, seed=5)).cycles
    sparse = compiled.simulate(*kernel.inputs(0.99, seed=5)).cycles
    assert sparse != dense

"""Shared fixtures of the tool tests."""

import pytest

import fuseflow
from fuseflow.kernels import KERNELS


@pytest.fixture(scope="module")
def spmm(request):
    """The spmm kernel at density 0.5, its inputs drawn with the test module's ``SPMM_SEED``:
    ``(kernel, inputs, program, compiled)``, compiled with the default schedule."""
    kernel = KERNELS["spmm"]
    inputs = kernel.inputs(0.5, seed=request.module.SPMM_SEED)
    program = fuseflow.Program(kernel.module(), inputs)
    return kernel, inputs, program, program.compile()

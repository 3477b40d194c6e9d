"""Single-expression sparse kernels as PyTorch modules, with their input formats.

Each :class:`Kernel` builds a module and random inputs at a given sparsity. Sparse inputs are
passed as ``torch.sparse`` tensors where PyTorch's exporter accepts them; otherwise they are
passed dense and declared sparse in the schedule (``formats``), which is the same thing to
the compiler: zeros are absent from the computation.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import torch


class _Add(torch.nn.Module):
    def forward(self, A, B):
        return A + B


class _Sub(torch.nn.Module):
    def forward(self, A, B):
        return A - B


class _Mul(torch.nn.Module):
    def forward(self, A, B):
        return A * B


class _Scale(torch.nn.Module):
    def forward(self, A):
        return A * 3.0


class _AddScalar(torch.nn.Module):
    def forward(self, A):
        return A + 1.0


class _Relu(torch.nn.Module):
    def forward(self, A):
        return torch.relu(A)


class _MatVec(torch.nn.Module):
    def forward(self, A, x):
        return torch.mv(A, x)


class _MatMul(torch.nn.Module):
    def forward(self, A, B):
        return torch.mm(A, B)


class _RowSum(torch.nn.Module):
    def forward(self, A):
        return torch.sum(A, dim=1)


def random_matrix(rows: int, cols: int, sparsity: float, generator: torch.Generator,
                  integer: bool = True, empty_rows: bool = False) -> torch.Tensor:
    """A dense matrix with about ``sparsity`` zeros; integer values keep sums exact."""
    if integer:
        values = torch.randint(1, 5, (rows, cols), generator=generator).float()
    else:
        values = torch.rand(rows, cols, generator=generator) + 0.1
    mask = torch.rand(rows, cols, generator=generator) >= sparsity
    out = values * mask
    if empty_rows and rows > 1:
        out[::2] = 0.0
    return out


@dataclass(frozen=True)
class Kernel:
    """A named kernel: module, operand shapes, and how each operand is given."""

    name: str
    module: Callable[[], torch.nn.Module]
    shapes: tuple[tuple[int, ...], ...]
    layouts: tuple[str, ...]
    """Per operand, how it is passed: 'dense', 'csr', 'csc' or 'coo'."""
    declared: dict[str, str] = field(default_factory=dict)
    """Dense-passed inputs declared sparse: forward argument name -> format."""
    description: str = ""

    def input_names(self) -> list[str]:
        """The forward argument names, in operand order."""
        params = inspect.signature(self.module().forward).parameters
        return list(params)[:len(self.shapes)]

    def sparse_operands(self) -> list[bool]:
        """Per operand, whether it is sparse: passed as a ``torch.sparse`` tensor or declared
        sparse in :attr:`declared`."""
        return [layout != "dense" or self.declared.get(name, "dense") != "dense"
                for name, layout in zip(self.input_names(), self.layouts)]

    def inputs(self, sparsity: float, seed: int = 0, scale: int = 1, integer: bool = True,
               empty_rows: bool = False) -> list[torch.Tensor]:
        """Random operands in their layouts; every sparse operand (see
        :meth:`sparse_operands`) has about ``sparsity`` zeros, dense ones none."""
        gen = torch.Generator().manual_seed(seed)
        tensors = []
        for shape, layout, sparse in zip(self.shapes, self.layouts, self.sparse_operands()):
            shape = tuple(d * scale for d in shape)
            sp = sparsity if sparse else 0.0
            if len(shape) == 1:
                t = random_matrix(1, shape[0], sp, gen, integer)[0]
            else:
                t = random_matrix(shape[0], shape[1], sp, gen, integer,
                                  empty_rows=empty_rows and sparse)
            tensors.append(_to_layout(t, layout))
        return tensors


def _to_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    return {"dense": lambda x: x, "csr": lambda x: x.to_sparse_csr(),
            "csc": lambda x: x.to_sparse_csc(), "coo": lambda x: x.to_sparse_coo()}[layout](t)


KERNELS: dict[str, Kernel] = {k.name: k for k in (
    Kernel("add", _Add, ((6, 5), (6, 5)), ("csr", "csr"), description="element-wise add (union)"),
    Kernel("sub", _Sub, ((6, 5), (6, 5)), ("dense", "dense"), {"A": "csr", "B": "csr"},
           "element-wise sub (union)"),
    Kernel("mul", _Mul, ((6, 5), (6, 5)), ("csr", "csr"),
           description="element-wise mul (intersect)"),
    Kernel("mul_dense", _Mul, ((6, 5), (6, 5)), ("csr", "dense"),
           description="sparse ⊙ dense (intersect with a dense level)"),
    Kernel("scale", _Scale, ((6, 5),), ("dense",), {"A": "csr"}, "scalar multiply"),
    Kernel("add_scalar", _AddScalar, ((6, 5),), ("dense",), {"A": "csr"},
           "scalar add (dense result)"),
    Kernel("relu", _Relu, ((6, 5),), ("dense",), {"A": "csr"}, "ReLU"),
    Kernel("spmv", _MatVec, ((6, 5), (5,)), ("dense", "dense"), {"A": "csr"}, "CSR SpMV"),
    Kernel("spmv_sparse_vector", _MatVec, ((6, 5), (5,)), ("dense", "dense"),
           {"A": "csr", "x": "sparse_vector"}, "CSR × sparse vector"),
    Kernel("spmm", _MatMul, ((6, 5), (5, 4)), ("csr", "dense"), description="CSR × dense"),
    Kernel("spmm_csc", _MatMul, ((6, 5), (5, 4)), ("csc", "dense"),
           description="CSC × dense (outer product order, order-2 accumulator)"),
    Kernel("spmm_coo", _MatMul, ((6, 5), (5, 4)), ("coo", "dense"), description="COO × dense"),
    Kernel("spgemm", _MatMul, ((6, 5), (5, 4)), ("csr", "csr"),
           description="CSR × CSR, row-wise (Gustavson) with a sparse accumulator"),
    Kernel("spgemm_inner", _MatMul, ((6, 5), (5, 4)), ("csr", "csc"),
           description="CSR × CSC, inner products with a reducer"),
    Kernel("rowsum", _RowSum, ((6, 5),), ("dense",), {"A": "csr"}, "row sums"),
)}


def get_kernel(name: str) -> Kernel:
    """The kernel named ``name``; the error lists the valid names."""
    if name not in KERNELS:
        raise KeyError(f"unknown kernel '{name}'; valid kernels: {', '.join(KERNELS)}")
    return KERNELS[name]

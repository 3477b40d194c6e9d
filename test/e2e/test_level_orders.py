"""Kernels no order can visit in every tensor's storage order (issue 14): element-wise ops and
softmax on CSC inputs, a CSC operand with a CSR one, standalone sparse transposes (``A.t()``
of a CSR matrix, ``nn.Linear`` with a CSR-declared weight unfused). The lowering writes a dense
result transposed (and transposes it back on the host), and, when that is not enough, reads a
sparse operand converted on the host to its level formats over the dimensions in visiting
order (CSC read as CSR). Kernels with an order respecting every level order keep it."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from fn_module import Fn

import fuseflow

warnings.filterwarnings("ignore")


def _sparse(m, n, seed, density=0.5):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(m, n, generator=g) * (torch.rand(m, n, generator=g) < density)
    a[1] = 0                                 # an empty row
    a[:, 2] = 0                              # an empty column
    return a


A, B = _sparse(5, 4, 1), _sparse(5, 4, 2)
CASES = {
    "csc_relu": (torch.relu, (A.to_sparse_csc(),), {}),
    "csc_times_dense": (lambda a, b: a * b, (A.to_sparse_csc(), torch.rand(5, 4)), {}),
    "csc_plus_dense": (lambda a, b: a + b, (A.to_sparse_csc(), torch.rand(5, 4)), {}),
    "csc_declared_scale": (lambda a: a * 3.0, (A,), {"x": "csc"}),
    "csc_times_csr": (lambda a, b: a * b, (A, B), {"x": "csc", "y": "csr"}),
    "csc_plus_csr": (lambda a, b: a + b, (A.to_sparse_csc(), B.to_sparse_csr()), {}),
    "csc_mv": (lambda a, x: torch.mv(a, x), (A.to_sparse_csc(), torch.rand(4)), {}),
    "csc_softmax_rows": (lambda a: torch.softmax(a, -1), (A.to_sparse_csc(),), {}),
    "csc_softmax_cols": (lambda a: torch.softmax(a, 0), (A,), {"x": "csc"}),
    "csr_softmax_cols": (lambda a: torch.softmax(a, 0), (A,), {"x": "csr"}),
    "csc_log_softmax": (lambda a: F.log_softmax(a, -1), (A,), {"x": "csc"}),
    "csr_transpose": (lambda a: a.t(), (A.to_sparse_csr(),), {}),
    "csr_transpose_matmul": (lambda a, b: a.t() @ b, (A.to_sparse_csr(), torch.rand(5, 3)), {}),
    "dcsr_transpose_scale": (lambda a: a.t() * 2.0, (A,), {"x": "dcsr"}),
    "coo_transpose_relu": (lambda a: torch.relu(a.t()), (A,), {"x": "coo"}),
}


@pytest.mark.parametrize("fusion", ["unfused", "full"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name, fusion):
    fn, inputs, formats = CASES[name]
    model = Fn(fn)
    expected = model(*[t.to_dense() if t.layout != torch.strided else t for t in inputs])
    compiled = fuseflow.compile(model, inputs, fuseflow.Schedule(fusion=fusion,
                                                                 formats=formats))
    fast = compiled.simulate(*inputs)
    ref = compiled.simulate(*inputs, engine="reference")
    torch.testing.assert_close(fast.output, expected)
    assert torch.equal(fast.output, ref.output) and fast.cycles == ref.cycles


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


@pytest.mark.parametrize("fusion", ["unfused", "full"])
def test_linear_with_a_csr_weight(fusion):
    model = Linear()
    with torch.no_grad():
        model.fc.weight.mul_(torch.rand(3, 4, generator=torch.Generator().manual_seed(1)) < 0.5)
    x = torch.rand(5, 4)
    compiled = fuseflow.compile(model, (x,), fuseflow.Schedule(
        fusion=fusion, formats={"fc.weight": "csr"}))
    torch.testing.assert_close(compiled.simulate(x).output, model(x))


def _host_ops(compiled) -> list[str]:
    text = compiled.mlir("sam")
    return [op for op in ("linalg.transpose", "tensor.cast") if op in text]


def test_a_dense_result_is_written_transposed_before_a_sparse_operand_is_converted():
    csc = fuseflow.compile(Fn(lambda a, b: a * b), (A.to_sparse_csc(), torch.rand(5, 4)))
    assert _host_ops(csc) == ["linalg.transpose"]           # the result, transposed back
    mixed = fuseflow.compile(Fn(lambda a, b: a * b), (A, B),
                             fuseflow.Schedule(formats={"x": "csc", "y": "csr"}))
    assert "tensor.cast" in _host_ops(mixed)                  # one operand converted
    csr = fuseflow.compile(Fn(lambda a, b: a * b), (A.to_sparse_csr(), torch.rand(5, 4)))
    assert _host_ops(csr) == []                               # storage order: nothing on host

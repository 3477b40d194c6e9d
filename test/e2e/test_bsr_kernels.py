"""End-to-end BSR kernels: compiled from PyTorch modules with BSR operands (real
``torch.sparse_bsr`` inputs where PyTorch's exporter accepts them, otherwise dense inputs
declared ``bsr:2``), mixed with dense and CSR/COO operands, simulated and compared with
PyTorch eager on the same values."""

import re
import warnings
from dataclasses import dataclass
from typing import Callable

import pytest
import torch

import fuseflow
from fuseflow import mlir
from fuseflow.dialects.types import storage_levels
from fuseflow.kernels import (_Add, _AddScalar, _MatMul, _MatVec, _Mul, _Relu, _RowSum,
                              _Scale, _Sub)

warnings.filterwarnings("ignore")

BLOCK = 2
SPARSITIES = [0.0, 0.5, 0.9, 0.99, 1.0]  # fraction of zero blocks; 1.0: the all-zero matrix


class _GcnLayer(torch.nn.Module):
    """A @ (H @ W): a BSR adjacency times a CSR feature matrix times dense weights."""

    def forward(self, A, H, W):
        return torch.mm(A, torch.mm(H, W))


class _GcnLayerAfter(torch.nn.Module):
    """(A @ H) @ W: the weights come last (here a COO matrix)."""

    def forward(self, A, H, W):
        return torch.mm(torch.mm(A, H), W)


def bsr_values(rows: int, cols: int, block: tuple[int, int], sparsity: float,
               gen: torch.Generator, integer: bool = True,
               empty_block_rows: bool = False) -> torch.Tensor:
    """A dense matrix whose nonzeros lie in about ``(1 - sparsity)`` of its blocks; inside a
    kept block some values are zero (explicit zeros of the BSR format)."""
    bh, bw = block
    keep = torch.rand(rows // bh, cols // bw, generator=gen) >= sparsity
    if empty_block_rows:
        keep[::2] = False
    mask = keep.repeat_interleave(bh, 0).repeat_interleave(bw, 1)
    if integer:
        values = torch.randint(-2, 4, (rows, cols), generator=gen).float()
    else:
        values = torch.rand(rows, cols, generator=gen) - 0.3
    return values * mask


@dataclass(frozen=True)
class BsrKernel:
    """A kernel with BSR operands: module, operand shapes and how each operand is given:
    'bsr' (dense, declared bsr:2), 'torch_bsr' (a torch.sparse_bsr tensor), 'dense',
    'csr'/'coo' (dense, declared so, ~50% zeros)."""

    name: str
    module: Callable[[], torch.nn.Module]
    shapes: tuple[tuple[int, ...], ...]
    layouts: tuple[str, ...]
    fusion: str = "unfused"
    names: tuple[str, ...] = ("A", "B")

    def formats(self) -> dict[str, str]:
        return {n: (f"bsr:{BLOCK}" if lay == "bsr" else lay)
                for n, lay in zip(self.names, self.layouts) if lay in ("bsr", "csr", "coo")}

    def inputs(self, sparsity: float, seed: int = 0, integer: bool = True,
               empty_block_rows: bool = False) -> list[torch.Tensor]:
        gen = torch.Generator().manual_seed(seed)
        out = []
        for shape, layout in zip(self.shapes, self.layouts):
            if layout in ("bsr", "torch_bsr"):
                t = bsr_values(*shape, (BLOCK, BLOCK), sparsity, gen, integer, empty_block_rows)
                out.append(t.to_sparse_bsr((BLOCK, BLOCK)) if layout == "torch_bsr" else t)
            elif integer:
                t = torch.randint(-2, 4, shape, generator=gen).float()
                out.append(t * (torch.rand(shape, generator=gen) >= 0.5) if layout != "dense" else t)
            else:
                out.append(torch.rand(shape, generator=gen) - 0.3)
        return out


KERNELS = {k.name: k for k in (
    BsrKernel("add", _Add, ((6, 8), (6, 8)), ("torch_bsr", "torch_bsr")),
    BsrKernel("sub", _Sub, ((6, 8), (6, 8)), ("bsr", "bsr")),
    BsrKernel("add_dense", _Add, ((6, 8), (6, 8)), ("bsr", "dense")),
    BsrKernel("mul", _Mul, ((6, 8), (6, 8)), ("torch_bsr", "bsr")),
    BsrKernel("mul_dense", _Mul, ((6, 8), (6, 8)), ("bsr", "dense")),
    BsrKernel("scale", _Scale, ((6, 8),), ("torch_bsr",)),
    BsrKernel("add_scalar", _AddScalar, ((6, 8),), ("bsr",)),
    BsrKernel("relu", _Relu, ((6, 8),), ("bsr",)),
    BsrKernel("relu_torch_bsr", _Relu, ((6, 8),), ("torch_bsr",)),
    BsrKernel("spmv", _MatVec, ((6, 8), (8,)), ("torch_bsr", "dense"), names=("A", "x")),
    BsrKernel("spmv_fused", _MatVec, ((6, 8), (8,)), ("bsr", "dense"), "full", ("A", "x")),
    BsrKernel("spmm", _MatMul, ((6, 8), (8, 3)), ("bsr", "dense")),
    BsrKernel("spmm_torch_bsr", _MatMul, ((6, 8), (8, 3)), ("torch_bsr", "dense")),
    BsrKernel("spmm_bsr_bsr", _MatMul, ((6, 8), (8, 4)), ("bsr", "bsr")),
    BsrKernel("spmm_bsr_csr", _MatMul, ((6, 8), (8, 4)), ("bsr", "csr")),
    BsrKernel("rowsum", _RowSum, ((6, 8),), ("torch_bsr",)),
    BsrKernel("gcn_bsr_csr", _GcnLayer, ((6, 8), (8, 4), (4, 3)), ("bsr", "csr", "dense"),
              "full", ("A", "H", "W")),
    BsrKernel("gcn_bsr_coo", _GcnLayerAfter, ((6, 8), (8, 4), (4, 3)), ("bsr", "dense", "coo"),
              "full", ("A", "H", "W")),
)}


def _expected(kernel: BsrKernel, inputs):
    dense = [t.to_dense() if t.layout != torch.strided else t for t in inputs]
    return kernel.module()(*dense)


def _eager(kernel: BsrKernel, inputs):
    """PyTorch on the operands as given (BSR where they are), densified."""
    out = kernel.module()(*inputs)
    return out.to_dense() if out.layout != torch.strided else out


@pytest.fixture(scope="module", params=sorted(KERNELS))
def compiled_kernel(request):
    kernel = KERNELS[request.param]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5),
                                fuseflow.Schedule(fusion=kernel.fusion, formats=kernel.formats()))
    return kernel, compiled


CASES = ([(sparsity, True, False) for sparsity in SPARSITIES]
         + [(0.5, True, True), (0.3, False, True)])
"""(fraction of zero blocks, integer data, every other block row empty)."""


@pytest.mark.parametrize("sparsity,integer,empty_block_rows", CASES)
def test_matches_pytorch(compiled_kernel, sparsity, integer, empty_block_rows):
    """Exact for integer-valued data, rtol 1e-5 for floats."""
    kernel, compiled = compiled_kernel
    inputs = kernel.inputs(sparsity, seed=1, integer=integer, empty_block_rows=empty_block_rows)
    result = compiled.simulate(*inputs)
    expected = _expected(kernel, inputs)
    if integer:
        assert torch.equal(result.output, expected)
    else:
        torch.testing.assert_close(result.output, expected, rtol=1e-5, atol=1e-6)
    assert result.cycles > 0


def test_bsr_operand_is_read_at_its_four_levels(compiled_kernel):
    """Block rows, block columns, in-block rows and columns are each scanned (or, for a
    dense level joined with a dense space, located)."""
    _, compiled = compiled_kernel
    bsr = r"tensor<6x8xf32, #sparse[0-9]*>"
    levels = {int(m) for m in re.findall(r'"sam\.(?:scan|locate)"\([^)]*\) \{level = (\d) : i64\} '
                                         rf": \([^)]*{bsr}\)", compiled.mlir("sam"))}
    assert levels == {0, 1, 2, 3}


@pytest.mark.parametrize("name", ["relu_torch_bsr", "spmm_torch_bsr"])
def test_matches_pytorch_on_torch_bsr_operands(name):
    """PyTorch's own BSR kernels (not the dense ones) as the oracle."""
    kernel = KERNELS[name]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5))
    for sparsity in (0.0, 0.5, 1.0):
        inputs = kernel.inputs(sparsity, seed=3)
        assert torch.equal(compiled.simulate(*inputs).output, _eager(kernel, inputs))


SCALE_BSR = """
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%A: tensor<6x8xf32, #BSR>) -> tensor<6x8xf32, #BSR> {
  %c = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<6x8xf32, #BSR>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<6x8xf32, #BSR>) outs(%e : tensor<6x8xf32, #BSR>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<6x8xf32, #BSR>
  return %r : tensor<6x8xf32, #BSR>
}
"""


def test_bsr_result_keeps_stored_zero_blocks():
    """A BSR result is written natively, block by block; a stored all-zero block of the
    operand is scanned and written like any block (zeros inside blocks are values)."""
    crow, col = torch.tensor([0, 2, 2, 3]), torch.tensor([0, 2, 1])
    values = torch.arange(12, dtype=torch.float32).reshape(3, 2, 2) - 5
    values[1] = 0.0
    A = torch.sparse_bsr_tensor(crow, col, values, size=(6, 8))
    result = fuseflow.compile(SCALE_BSR).simulate(A)
    assert torch.equal(result.output, A.to_dense() * 2)
    written = result.run.outputs[0]
    assert [lv.kind for lv in written.fmt.levels] == ["div", "div", "mod", "mod"]
    assert written.crd[1].tolist() == [0, 2, 1]             # the zero block (0, 2) is kept
    assert len(written.vals) == 3 * BLOCK * BLOCK


SPMM_CSR = """
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main(%A: tensor<6x8xf32, #BSR>, %B: tensor<8x4xf32, #CSR>) -> tensor<6x4xf32, #CSR> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x4xf32, #CSR>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<6x4xf32, #CSR>) -> tensor<6x4xf32, #CSR>
  %r = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<6x8xf32, #BSR>, tensor<8x4xf32, #CSR>) outs(%f : tensor<6x4xf32, #CSR>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<6x4xf32, #CSR>
  return %r : tensor<6x4xf32, #CSR>
}
"""


def test_csr_dense_rows_split_through_views():
    """A CSR operand and a CSR result whose dense rows a BSR operand splits: the operand is
    read through an expand_shape to (dense, dense, compressed) levels, the result written so
    and collapsed back to CSR on the host."""
    compiled = fuseflow.compile(SPMM_CSR)
    sam = compiled.mlir("sam")
    assert re.search(r"tensor.expand_shape .* into tensor<4x2x4xf32, #sparse", sam)
    assert re.search(r"tensor.collapse_shape .* : tensor<3x2x4xf32, #sparse\d*> into "
                     r"tensor<6x4xf32, #sparse", sam)
    for sparsity in (0.0, 0.5, 1.0):
        gen = torch.Generator().manual_seed(8)
        A = bsr_values(6, 8, (2, 2), sparsity, gen, empty_block_rows=sparsity > 0)
        B = torch.randint(-2, 3, (8, 4), generator=gen).float()
        result = compiled.simulate(A.to_sparse_bsr((2, 2)), B.to_sparse_csr())
        assert torch.equal(result.output, A @ B)
        assert result.run.outputs[0].fmt.levels[1].format == "compressed"


def test_pytorch_cannot_export_bsr_add():
    """Why BSR example inputs are traced dense (fuseflow.frontend): once PyTorch exports an
    add of two BSR tensors, this fails and the workaround can go."""
    A = bsr_values(4, 4, (2, 2), 0.0, torch.Generator().manual_seed(0)).to_sparse_bsr((2, 2))
    with pytest.raises(RuntimeError, match="Sparse BSR tensors do not have strides"):
        torch.export.export(_Add(), (A, A.clone()))


def test_rectangular_blocks_from_torch():
    """A 2x3-blocked torch BSR operand splits the rows by 2 and the columns by 3."""
    gen = torch.Generator().manual_seed(4)
    dense = bsr_values(6, 9, (2, 3), 0.5, gen)
    A, B = dense.to_sparse_bsr((2, 3)), torch.randint(-2, 3, (9, 4), generator=gen).float()
    compiled = fuseflow.compile(_MatMul(), (A, B))
    assert "tensor<3x3x4xf32>" in compiled.mlir("sam")     # B expanded over k by 3
    assert torch.equal(compiled.simulate(A, B).output, dense @ B)


@pytest.mark.parametrize("name", ["add", "spmm", "rowsum", "spmm_bsr_bsr"])
def test_fast_engine_agrees(name):
    kernel = KERNELS[name]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5),
                                fuseflow.Schedule(formats=kernel.formats()))
    inputs = kernel.inputs(0.5, seed=5, empty_block_rows=True)
    ref = compiled.simulate(*inputs, engine="reference")
    fast = compiled.simulate(*inputs, engine="fast")
    assert torch.equal(ref.output, fast.output)
    assert ref.cycles == fast.cycles


def test_sparser_blocks_take_fewer_cycles():
    kernel = KERNELS["spmm"]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5),
                                fuseflow.Schedule(formats=kernel.formats()))
    dense_cycles = compiled.simulate(*kernel.inputs(0.0, seed=6)).cycles
    sparse_cycles = compiled.simulate(*kernel.inputs(0.9, seed=6)).cycles
    assert sparse_cycles < dense_cycles


def test_explicit_order_chooses_the_result_layout():
    """With an explicit order the dense result is written in the layout that order visits in
    storage order (block-major for element-wise kernels)."""
    kernel = KERNELS["add_dense"]
    compiled = fuseflow.compile(kernel.module(), kernel.inputs(0.5),
                                fuseflow.Schedule(order=("d0", "d1", "d2", "d3"),
                                                  formats=kernel.formats()))
    assert "-> tensor<3x4x2x2xf32>" in compiled.mlir("sam")
    inputs = kernel.inputs(0.5, seed=7)
    assert torch.equal(compiled.simulate(*inputs).output, _expected(kernel, inputs))


UNSUPPORTED = [
    ("bsr_plus_csr", _Add, ((4, 4), (4, 4)), {"A": "bsr:2", "B": "csr"},
     r"operand #1 \('tensor<4x4xf32, .*d1 : compressed.*'\) reads dimension 1 \(variable d1, "
     r"split into blocks of 2 by a blocked level of the kernel\) with its compressed level 1"),
    ("bsr_times_csc", _MatMul, ((4, 4), (4, 4)), {"A": "bsr:2", "B": "csc"},
     r"operand #1 .* reads dimension 0 .* with its compressed level 1"),
    ("bsr_times_coo", _MatMul, ((4, 4), (4, 4)), {"A": "bsr:2", "B": "coo"},
     r"operand #1 .* reads dimension 0 .* with its compressed_nonunique level 0"),
    ("csr_times_bsr", _MatMul, ((4, 4), (4, 4)), {"A": "csr", "B": "bsr:2"},
     r"operand #0 .* reads dimension 1 .* with its compressed level 1"),
    ("bsr_times_sparse_vector", _MatVec, ((4, 4), (4,)), {"A": "bsr:2", "x": "sparse_vector"},
     r"operand #1 .* reads dimension 0 .* with its compressed level 0"),
    ("block_sizes_disagree", _MatMul, ((6, 6), (6, 6)), {"A": "bsr:2", "B": "bsr:3"},
     r"dimension variable d2 is blocked by 2 in operand #0 .* and by 3 in operand #1"),
    ("block_does_not_divide", _RowSum, ((6, 8),), {"A": "bsr:4"},
     r"block size 4 of operand #0 .* does not divide the extent 6 of dimension variable d0"),
]


@pytest.mark.parametrize("name,module,shapes,formats,message", UNSUPPORTED,
                         ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_combinations_are_located_errors(name, module, shapes, formats, message):
    inputs = [torch.ones(s) for s in shapes]
    with pytest.raises(mlir.MLIRError) as info:
        fuseflow.compile(module(), inputs, fuseflow.Schedule(formats=formats))
    text = str(info.value)
    assert re.search(message, text), text
    assert "kernels.py" in text          # located at the model's source line


@pytest.mark.parametrize("fmt, kinds", [
    ("bsr:1", ["id", "id"]), ("bsr:2x1", ["div", "id", "mod"]), ("bsr:1x2", ["id", "div", "mod"]),
])
def test_block_size_one_has_no_offset_level(fmt, kinds):
    """A block size of 1 declares the dimension's level without ``floordiv 1``/``mod 1`` (MLIR
    cannot invert them: the type did not parse); results match PyTorch, fused or not."""
    kernel = KERNELS["spmm"]
    inputs = kernel.inputs(0.5, seed=2, empty_block_rows=True)
    for fusion in ("unfused", "full"):
        compiled = fuseflow.compile(kernel.module(), inputs,
                                    fuseflow.Schedule(fusion=fusion, formats={"A": fmt}))
        torch.testing.assert_close(compiled.simulate(*inputs).output, _expected(kernel, inputs))
    fn = next(op.operation for op in compiled.module.body.operations
              if op.operation.name == "func.func")
    levels = storage_levels(fn.regions[0].blocks[0].arguments[0].type)[1]
    assert [lv.kind for lv in levels] == kinds

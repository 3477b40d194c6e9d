"""BSR kernels with tiles as values (the schedule's ``block``): element-wise ops, SpMV, SpMM
(BSR times dense and BSR times BSR) and a fused GCN layer match PyTorch on both engines, with
identical cycles, for block sizes 2 to 64; the scalar lowering stays the default; forked tile
graphs run vectorized."""

import pytest
import torch
from test_bsr_kernels import _Add, _MatMul, _MatVec, _Mul, _Relu, _RowSum, _Scale, bsr_values

import fuseflow
from fuseflow.compiler import CompileError
from fuseflow.sim.engines import fast_blocks


class _ScaleAdd(torch.nn.Module):
    def forward(self, A, B):
        return torch.relu(A * 2.0 - B)


KERNELS = {
    # name: (module, shapes in blocks, layouts)
    "add": (_Add, ((3, 2), (3, 2)), ("bsr", "bsr")),
    "mul": (_Mul, ((3, 2), (3, 2)), ("bsr", "bsr")),
    "add_dense": (_Add, ((3, 2), (3, 2)), ("bsr", "dense")),
    "fused_elementwise": (_ScaleAdd, ((2, 3), (2, 3)), ("bsr", "bsr")),
    "scale": (_Scale, ((3, 2),), ("bsr",)),
    "relu": (_Relu, ((3, 2),), ("bsr",)),
    "rowsum": (_RowSum, ((3, 2),), ("bsr",)),
    "spmv": (_MatVec, ((3, 2), (2,)), ("bsr", "dense")),
    "spmm": (_MatMul, ((3, 2), (2, 2)), ("bsr", "dense")),
    "spmm_bsr_bsr": (_MatMul, ((2, 3), (3, 2)), ("bsr", "bsr")),
}


def _inputs(shapes, layouts, b, sparsity, seed):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for shape, layout in zip(shapes, layouts):
        dims = [n * b for n in shape]
        if layout == "bsr":
            out.append(bsr_values(*dims, (b, b), sparsity, gen, empty_block_rows=seed % 2 == 1))
        else:
            out.append(torch.randint(-2, 3, dims, generator=gen).float())
    return out


def _compile(name, b, tiles=True):
    module, shapes, layouts = KERNELS[name]
    names = ("A", "B") if len(shapes) == 2 else ("A",)
    formats = {n: f"bsr:{b}" for n, lay in zip(names, layouts) if lay == "bsr"}
    example = _inputs(shapes, layouts, b, 0.5, 0)
    kernels = {0: {"block": (b, b)}} if tiles else {}
    return fuseflow.compile(module(), example, fuseflow.Schedule(formats=formats,
                                                                 kernels=kernels))


@pytest.mark.parametrize("b", [2, 4, 8, 16, 32, 64])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_tiles_match_pytorch_on_both_engines(name, b):
    module, shapes, layouts = KERNELS[name]
    compiled = _compile(name, b)
    assert "!sam.val<f32, array<i64: " in compiled.mlir("sam")
    for sparsity, seed in ((0.0, 1), (0.5, 2), (0.7, 3)):
        inputs = _inputs(shapes, layouts, b, sparsity, seed)
        expected = module()(*inputs)
        fast = compiled.simulate(*inputs, engine="fast")
        assert torch.equal(fast.output, expected)
        if b <= 8 or sparsity == 0.5:   # larger blocks: once on the reference (seconds)
            ref = compiled.simulate(*inputs, engine="reference")
            assert torch.equal(ref.output, expected)
            assert ref.cycles == fast.cycles
            for k_ref, k_fast in zip(ref.run.kernels, fast.run.kernels):
                assert {n: s.to_dict() for n, s in k_ref.result.blocks.items()} == \
                    {n: s.to_dict() for n, s in k_fast.result.blocks.items()}


@pytest.mark.parametrize("name", ["spmm", "add", "spmm_bsr_bsr"])
def test_scalar_lowering_stays_the_default_and_tiles_are_faster(name):
    module, shapes, layouts = KERNELS[name]
    scalar, tiles = _compile(name, 4, tiles=False), _compile(name, 4)
    assert "!sam.val<f32, array<i64: " not in scalar.mlir("sam")
    inputs = _inputs(shapes, layouts, 4, 0.3, 4)
    a, t = scalar.simulate(*inputs), tiles.simulate(*inputs)
    assert torch.equal(a.output, t.output)
    assert t.cycles < a.cycles


def test_block_must_match_the_bsr_blocks():
    with pytest.raises(CompileError, match=r"block \(4, 4\) does not match the blocks "
                                                    r"of the kernel's blocked levels \(2\)"):
        compiled = _compile("spmm", 2, tiles=False)
        compiled.reschedule(0, block=(4, 4))


def test_block_without_bsr_operand_keeps_scalar_values():
    """Tiles come from blocked levels: a kernel without any records its block and keeps
    scalar values (blocking CSR or dense operands into tiles is not implemented)."""
    A, B = torch.ones(4, 4), torch.ones(4, 4)
    compiled = fuseflow.compile(_MatMul(), (A, B),
                                fuseflow.Schedule(kernels={0: {"block": (2, 2)}}))
    sam = compiled.mlir("sam")
    assert "block = array<i64: 2, 2>" in sam and "!sam.val<f32, array<i64: " not in sam
    assert torch.equal(compiled.simulate(A, B).output, A @ B)


def test_forked_tile_graph_runs_vectorized(monkeypatch):
    """Fork, join and tile ops of a parallelized tile SpMM run their whole-stream forms, never
    the reference coroutine, and agree with the reference engine."""
    module, shapes, layouts = KERNELS["spmm_bsr_bsr"]
    compiled = _compile("spmm_bsr_bsr", 4).reschedule(0, parallel={"d0": 2})
    sam = compiled.mlir("sam")
    assert '"sam.fork"' in sam and '"sam.join"' in sam and "array<i64: 4, 4>" in sam
    inputs = _inputs(shapes, layouts, 4, 0.4, 5)
    ref = compiled.simulate(*inputs, engine="reference")

    def refuse(ctx, *args):
        raise AssertionError(f"{ctx.block.name} ({ctx.block.kind}) ran the reference coroutine")

    monkeypatch.setattr(fast_blocks, "run_coroutine", refuse)
    fast = compiled.simulate(*inputs, engine="fast")
    assert torch.equal(fast.output, module()(*inputs)) and torch.equal(ref.output, fast.output)
    assert ref.cycles == fast.cycles


@pytest.mark.parametrize("b", [2, 4, 8, 16, 32, 64])
def test_bigbird_attention_with_tiles_matches_pytorch(b):
    """Fused BigBird multi-head attention, the mask BSR b×b, values as tiles: score tiles,
    row maxima and sums as b-vectors broadcast back, probabilities times V; both engines
    agree (cycles and block statistics)."""
    from fuseflow.reproduce import fig16

    size = fig16.Size(heads=2, seq=4 * b, width=4, blocks=(b,))
    data = fig16.inputs(size, b, seed=b)
    model = fig16.BigBirdAttention()
    compiled = fuseflow.compile(model, data, fig16.variants(b)["blocked"])
    sam = compiled.mlir("sam")
    assert f"array<i64: {b}, {b}>" in sam and '"sam.reduce"' in sam
    assert 'kind = "max", tile = ' in sam            # row maxima reduce each tile's rows
    expected = model(*data)
    fast = compiled.simulate(*data, engine="fast")
    torch.testing.assert_close(fast.output, expected, rtol=1e-4, atol=1e-5)
    ref = compiled.simulate(*data, engine="reference")
    assert torch.equal(ref.output, fast.output) and ref.cycles == fast.cycles
    for k_ref, k_fast in zip(ref.run.kernels, fast.run.kernels):
        assert {n: s.to_dict() for n, s in k_ref.result.blocks.items()} == \
            {n: s.to_dict() for n, s in k_fast.result.blocks.items()}


def test_sweep_has_a_block_axis():
    """``fuseflow.sweep.sweep(blocks=...)``: scalar points and tile points (orders that differ
    only in where they place in-block offsets are one tile schedule), all checked against
    PyTorch."""
    from fuseflow.sweep import sweep

    module, shapes, layouts = KERNELS["spmm_bsr_bsr"]
    compiled = _compile("spmm_bsr_bsr", 4, tiles=False)
    inputs = _inputs(shapes, layouts, 4, 0.3, 1)
    points = sweep(compiled, inputs, 0, orders=3, factors=(1, 2), blocks=((), (4, 4)),
                   expected=module()(*inputs))
    scalar = [p for p in points if not p.block]
    tiles = [p for p in points if p.block == (4, 4)]
    assert scalar and tiles and all(p.matches for p in points)
    assert len({(p.parallel,) for p in tiles}) == len(tiles)      # one per lane choice
    assert "tiles 4x4" in tiles[0].label and tiles[0].to_dict()["block"] == [4, 4]

"""Values as tiles (sparsity blocking): the tile blocks on hand-written streams, and both
engines on hand-built tile graphs (outputs bit for bit, cycles, statistics, every channel's
tokens and stamps), with the tile timing of ``docs/timing.md``."""

import numpy as np
import pytest

from fuseflow.sim.arch import Arch, TileCosts
from fuseflow.sim.engines import run
from fuseflow.sim.engines.fast_blocks import VECTORIZED
from fuseflow.sim.engines.reference import run_block
from fuseflow.sim.formats import FiberTree, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.tokens import DONE, EMPTY, Stop
from sim_helpers import assert_engines_agree

N = 2
TILE = ((N, N),)


def _bsr(rows, cols, block, seed, keep=0.5):
    """A dense matrix whose non-zero blocks are about ``keep`` of its blocks (integer values)."""
    rng = np.random.default_rng(seed)
    mask = rng.random((rows // block, cols // block)) < keep
    mask = np.kron(mask, np.ones((block, block), bool))
    return (rng.integers(-3, 4, (rows, cols)) * mask).astype(np.float32)


def _tiles(ctx_tokens):
    return [t.tolist() if isinstance(t, np.ndarray) else t for t, _ in ctx_tokens]


def test_array_loads_row_major_tiles_and_zero_tiles_for_n():
    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    tree = FiberTree.from_dense(A, TensorFormat.bsr((4, 8), (2, 2)))
    block = Block("a", "array", ("ref",), ("val",), {"tensor": 0, "tiles": ((), TILE)})
    (out,), ctx = run_block(block, [[1, EMPTY, Stop(0), DONE]], [tree], arch=Arch())
    toks = _tiles(out)
    assert toks[0] == A[0:2, 2:4].tolist()          # block 1: row block 0, column block 1
    assert toks[1] == [[0.0, 0.0], [0.0, 0.0]]
    assert toks[2:] == [Stop(0), DONE]
    assert [s for _, s in out] == [4, 5, 6, 7]       # latency N**2 = 4, interval 1
    assert ctx.stats.val_reads == 4


def test_tile_product_sums_the_shared_axis_in_order():
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[5, 6], [7, 8]], np.float32)
    block = Block("m", "alu", ("a", "b"), ("c",),
                  {"op": "mul", "tile": "ik,kj->ij", "tiles": (TILE * 2, TILE)})
    (out,), ctx = run_block(block, [[a, EMPTY, DONE], [b, b, DONE]], arch=Arch())
    assert _tiles(out)[:2] == [(a @ b).tolist(), [[0, 0], [0, 0]]]
    assert [s for _, s in out] == [3, 5, 7]          # latency 2N-1 = 3, interval N = 2
    assert ctx.stats.ops == 2 * N ** 3


def test_broadcast_and_row_reduction():
    x = np.array([[1, 2], [3, 4]], np.float32)
    v = np.array([10, 20], np.float32)
    block = Block("s", "alu", ("x", "v"), ("y",),
                  {"op": "sub", "tile": "ij,i->ij", "tiles": (((2, 2), (2,)), TILE)})
    (out,), _ = run_block(block, [[x, DONE], [v, DONE]])
    assert _tiles(out)[0] == (x - v[:, None]).tolist()
    block = Block("r", "reduce", ("x",), ("y",),
                  {"kind": "max", "tile": "ij->i", "tiles": (TILE, ((2,),))})
    (out,), _ = run_block(block, [[x, 2 * x, Stop(0), Stop(1), DONE]])
    toks = _tiles(out)
    assert toks[0] == [4.0, 8.0] and toks[1] == [0.0, 0.0] and toks[2:] == [Stop(0), DONE]


def spmm_graph(bsr_block: int = N) -> BlockGraph:
    """C = A @ B with A (input 0) and B (input 1) BSR, values as tiles, order ib, jb, kb:
    A's row of blocks repeated per jb, B's columns of blocks per ib (B read as B^T's rows: B
    is given transposed, block-major), intersected over kb, tile products summed by the
    reducer; C written at its two block levels, the tiles below them."""
    t = ((bsr_block, bsr_block),)
    return BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("bc_r", "broadcast", ("r",), ("rA", "rB")),
        Block("scan_i", "scan", ("rA",), ("ci", "ri"), {"tensor": 0, "level": 0}),
        Block("bc_ci", "broadcast", ("ci",), ("ci_w", "ci_rep")),
        Block("sig_i", "repsiggen", ("ci_rep",), ("si",)),
        Block("rep_B", "repeat", ("rB", "si"), ("rBi",)),
        Block("scan_j", "scan", ("rBi",), ("cj", "rj"), {"tensor": 1, "level": 0}),
        Block("bc_cj", "broadcast", ("cj",), ("cj_w", "cj_rep")),
        Block("sig_j", "repsiggen", ("cj_rep",), ("sj",)),
        Block("rep_A", "repeat", ("ri", "sj"), ("rAj",)),
        Block("scan_kA", "scan", ("rAj",), ("ckA", "rkA"), {"tensor": 0, "level": 1}),
        Block("scan_kB", "scan", ("rj",), ("ckB", "rkB"), {"tensor": 1, "level": 1}),
        Block("isect", "intersect", ("ckA", "ckB", "rkA", "rkB"), ("ck", "rA2", "rB2"),
              {"ref_groups": (1, 1)}),
        Block("arr_A", "array", ("rA2",), ("vA",), {"tensor": 0, "tiles": ((), t)}),
        Block("arr_B", "array", ("rB2",), ("vB",), {"tensor": 1, "tiles": ((), t)}),
        Block("mul", "alu", ("vA", "vB"), ("p",),
              {"op": "mul", "tile": "ik,jk->ij", "tiles": (t * 2, t)}),
        Block("red", "reduce", ("p",), ("c",), {"kind": "sum", "tiles": (t, t)}),
        Block("w_i", "level_write", ("ci_w",), (), {"result": 0, "level": 0}),
        Block("w_j", "level_write", ("cj_w",), (), {"result": 0, "level": 1}),
        Block("w_v", "value_write", ("c",), (), {"result": 0, "tiles": (t, ())}),
    ], [TensorFormat.dense((4 // bsr_block * 0 + 8 // bsr_block, 8 // bsr_block, bsr_block, bsr_block))])


def _spmm_inputs(seed, block=N, keep=0.5):
    A = _bsr(8, 8, block, seed, keep)
    B = _bsr(8, 8, block, seed + 1, keep)
    fmt = TensorFormat.bsr((8, 8), (block, block))
    return A, B, [FiberTree.from_dense(A, fmt), FiberTree.from_dense(B.T.copy(), fmt)]


@pytest.mark.parametrize("block", [1, 2, 4, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tile_spmm_engines_agree_and_match_numpy(block, seed):
    A, B, inputs = _spmm_inputs(seed, block, keep=0.6)
    got = assert_engines_agree(spmm_graph(block), inputs)
    C = got.outputs[0].to_dense()
    nb = 8 // block
    blocked = C.reshape(nb, nb, block, block).transpose(0, 2, 1, 3).reshape(8, 8)
    np.testing.assert_array_equal(blocked, A @ B)


def test_tile_spmm_runs_vectorized(monkeypatch):
    """Every tile block runs its whole-stream implementation, never the reference coroutine."""
    from fuseflow.sim.engines import fast_blocks

    def refuse(ctx, *args):
        raise AssertionError(f"{ctx.block.name} fell back to the reference coroutine")

    monkeypatch.setattr(fast_blocks, "run_coroutine", refuse)
    _, _, inputs = _spmm_inputs(3)
    run(spmm_graph(), inputs, engine="fast")
    assert {"array", "alu", "reduce", "value_write"} <= set(VECTORIZED)


def test_tile_costs_are_arch_parameters():
    _, _, inputs = _spmm_inputs(4)
    slow = Arch(tile=TileCosts(product_latency_per_dim=8, product_interval_per_dim=4))
    base = run(spmm_graph(), inputs, engine="reference").cycles
    assert run(spmm_graph(), inputs, slow, engine="reference").cycles > base
    assert_engines_agree(spmm_graph(), inputs, slow, chunks=(2,))

"""The fast engine against the reference engine on whole graphs: outputs bit for bit, total
cycles, every block's statistics and (for hand-built graphs) every channel's tokens and stamps.

Graphs: those of ``test_sim_engine.py``, graphs that locate into dense levels (a vector, a
matrix whose next level is scanned under the located references, rows of a union with ``N`` on
both inputs), every kernel of ``fuseflow.kernels`` compiled from its PyTorch module, a small GCN
at every fusion level, and random matrices, formats, sparsities and timing parameters
(hypothesis).
"""

import functools
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuseflow
from fuseflow.apps import gcn
from fuseflow.kernels import KERNELS
from fuseflow.sim.arch import Arch
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph
from sim_helpers import assert_engines_agree, assert_same_results, chunked, compiled, simulate_both
from test_sim_engine import (
    ROWS, chain_graph, hold_graph, parallel_graph, spmv_dcsr_output_graph, spmv_graph, spmv_inputs,
)

warnings.filterwarnings("ignore")

ROWS_CSR = FiberTree.from_dense(ROWS, TensorFormat.csr(ROWS.shape))


def locate_spmv_graph(rows: int = ROWS.shape[0]) -> BlockGraph:
    """:func:`spmv_graph` with c (input 1) a dense vector: its j level located by B's j instead
    of scanned and intersected."""
    swap = {
        "scan_cj": Block("locate_j", "locate", ("crd_Bj", "ref_c"), ("ref_cc", "crd_j"), {"tensor": 1, "level": 0}),
        "isect_j": Block("bc_Bj", "broadcast", ("ref_Bj",), ("ref_B",)),
    }
    return BlockGraph([swap.get(b.name, b) for b in spmv_graph().blocks], [TensorFormat.dense((rows,))])


def locate_spmm_graph(shape=(ROWS.shape[0], 3)) -> BlockGraph:
    """C_ij = sum_k A_ik B_kj, loop order i k j: A (input 0) sparse; B (input 1) dense, its k
    level located by A's k, its j level scanned under the located references; a sparse
    accumulator sums over k (the graph the compiler emits for SpMM with a dense operand)."""
    return BlockGraph([
        Block("root", "root", (), ("r0",)),
        Block("bc_root", "broadcast", ("r0",), ("r0_A", "r0_B")),
        Block("scan_Ai", "scan", ("r0_A",), ("crd_i", "ref_Ai"), {"tensor": 0, "level": 0}),
        Block("bc_i", "broadcast", ("crd_i",), ("crd_i_w", "crd_i_rep")),
        Block("repsig_i", "repsiggen", ("crd_i_rep",), ("sig_i",)),
        Block("rep_B", "repeat", ("r0_B", "sig_i"), ("ref_Bi",)),
        Block("scan_Ak", "scan", ("ref_Ai",), ("crd_k", "ref_Ak"), {"tensor": 0, "level": 1}),
        Block("locate_k", "locate", ("crd_k", "ref_Bi"), ("ref_Bk", "crd_k_out"), {"tensor": 1, "level": 0}),
        Block("scan_Bj", "scan", ("ref_Bk",), ("crd_j", "ref_Bj"), {"tensor": 1, "level": 1}),
        Block("bc_j", "broadcast", ("crd_j",), ("crd_j_rep", "crd_j_acc")),
        Block("repsig_j", "repsiggen", ("crd_j_rep",), ("sig_j",)),
        Block("rep_A", "repeat", ("ref_Ak", "sig_j"), ("ref_Akj",)),
        Block("arr_A", "array", ("ref_Akj",), ("val_A",), {"tensor": 0}),
        Block("arr_B", "array", ("ref_Bj",), ("val_B",), {"tensor": 1}),
        Block("mul", "alu", ("val_A", "val_B"), ("prod",), {"op": "mul"}),
        Block("acc_k", "spacc", ("crd_j_acc", "prod"), ("out_j", "out_v"), {"order": 1}),
        Block("write_i", "level_write", ("crd_i_w",), (), {"result": 0, "level": 0}),
        Block("write_j", "level_write", ("out_j",), (), {"result": 0, "level": 1}),
        Block("write_v", "value_write", ("out_v",), (), {"result": 0}),
    ], [TensorFormat.csr(shape)])


def locate_union_graph(rows: int = ROWS.shape[0]) -> BlockGraph:
    """x_i = sum_j A_ij D_ij over the union of the rows of A (input 0, compressed rows) and D
    (input 1, compressed rows of dense fibers): D's j level is located by A's j under the
    union's D references, so both the coordinates (A lacks a row) and the parent references
    (D lacks a row) hold ``N``. Values, product, sum and writers are those of :func:`spmv_graph`
    (A in place of B, D in place of c)."""
    tail = ("arr_B", "arr_c", "mul", "red_j", "write_i", "write_x")
    return BlockGraph([
        Block("root", "root", (), ("r0",)),
        Block("bc_root", "broadcast", ("r0",), ("r0_A", "r0_D")),
        Block("scan_Ai", "scan", ("r0_A",), ("crd_Ai", "ref_Ai"), {"tensor": 0, "level": 0}),
        Block("scan_Di", "scan", ("r0_D",), ("crd_Di", "ref_Di"), {"tensor": 1, "level": 0}),
        Block("union_i", "union", ("crd_Ai", "crd_Di", "ref_Ai", "ref_Di"), ("crd_i_w", "uref_A", "uref_D"),
              {"ref_groups": [1, 1]}),
        Block("scan_Aj", "scan", ("uref_A",), ("crd_Aj", "ref_B"), {"tensor": 0, "level": 1}),
        Block("locate_j", "locate", ("crd_Aj", "uref_D"), ("ref_cc", "crd_j"), {"tensor": 1, "level": 1}),
        *(b for b in spmv_graph().blocks if b.name in tail),
    ], [TensorFormat((rows,), (LevelSpec("compressed", 0),))])


def compressed_rows(shape) -> TensorFormat:
    """Compressed rows of dense fibers."""
    return TensorFormat(shape, (LevelSpec("compressed", 0), LevelSpec("dense", 1)))


VEC = np.array([1.5, -2, 0, 4, 0.5], np.float32)
DENSE_B = np.arange(15, dtype=np.float32).reshape(5, 3) - 5
D_ROWS = np.zeros_like(ROWS)
D_ROWS[[0, 1, 3]] = np.arange(15, dtype=np.float32).reshape(3, 5)  # row 1 only in D, rows 2, 6 only in ROWS


def locate_inputs(a=ROWS, vec=VEC, b=DENSE_B, d=D_ROWS):
    """Inputs of the locate graphs: sparse ``a`` with a dense vector, a dense matrix, and rows of
    dense fibers ``d``; with what each graph computes."""
    csr = FiberTree.from_dense(a, TensorFormat.csr(a.shape))
    return {
        "locate_spmv": ([csr, FiberTree.from_dense(vec)], a @ vec),
        "locate_spmm": ([csr, FiberTree.from_dense(b, TensorFormat.dense(b.shape))], a @ b),
        "locate_union": ([FiberTree.from_dense(a, TensorFormat.dcsr(a.shape)),
                          FiberTree.from_dense(d, compressed_rows(d.shape))], (a * d).sum(axis=1)),
    }


LOCATE_GRAPHS = {"locate_spmv": locate_spmv_graph, "locate_spmm": locate_spmm_graph, "locate_union": locate_union_graph}
GRAPHS = {
    "spmv": (spmv_graph, spmv_inputs),
    "chain": (chain_graph, list),
    "hold": (hold_graph, list),
    "dcsr_output": (spmv_dcsr_output_graph, lambda: spmv_inputs()[:1]),
    **{f"parallel{lanes}": (functools.partial(parallel_graph, lanes), lambda: [ROWS_CSR]) for lanes in (1, 2, 3, 4)},
}
ARCHS = [Arch(), Arch(latency=2, initiation_interval=3), Arch(block_costs={"scan": (3, 2), "broadcast": (1, 1)}),
         Arch(initiation_interval=0, block_costs={"scan": (2, 1), "broadcast": (1, 2)})]


@pytest.mark.parametrize("arch", ARCHS, ids=["default", "slow", "per-kind", "zero-interval"])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_hand_built_graphs_agree_token_by_token(name, arch):
    graph, inputs = GRAPHS[name]
    assert_engines_agree(graph(), inputs(), arch)


@pytest.mark.parametrize("arch", ARCHS, ids=["default", "slow", "per-kind", "zero-interval"])
@pytest.mark.parametrize("name", list(LOCATE_GRAPHS))
def test_locate_graphs_agree_token_by_token(name, arch):
    inputs, want = locate_inputs()[name]
    result = assert_engines_agree(LOCATE_GRAPHS[name](), inputs, arch)
    np.testing.assert_allclose(result.outputs[0].to_dense(), want, rtol=1e-6)
    assert result.blocks[[b for b in result.blocks if b.startswith("locate")][0]].steps > 0


@pytest.mark.parametrize("sparsity", [0.0, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_agrees(name, sparsity):
    simulate_both(name, KERNELS[name].inputs(sparsity, seed=1))


@pytest.mark.parametrize("chunk_tokens", [1, 4, 64])
@pytest.mark.parametrize("sparsity", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_agrees_in_chunks(name, sparsity, chunk_tokens):
    """Chunked fast runs (a chunk boundary after every few tokens of every stream) against the
    reference: outputs, cycles and every block's statistics."""
    simulate_both(name, KERNELS[name].inputs(sparsity, seed=1), chunk_tokens=chunk_tokens)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(KERNELS)), scale=st.sampled_from([1, 2]), seed=st.integers(0, 2**16),
       sparsity=st.sampled_from([0.0, 0.3, 0.7, 0.95, 1.0]), integer=st.booleans(), empty_rows=st.booleans(),
       arch=st.sampled_from(ARCHS), chunk_tokens=st.sampled_from([None, None, 1, 3, 17]))
def test_random_kernel_inputs_agree(name, scale, seed, sparsity, integer, empty_rows, arch, chunk_tokens):
    inputs = KERNELS[name].inputs(sparsity, seed=seed, scale=scale, integer=integer, empty_rows=empty_rows)
    simulate_both(name, inputs, scale, arch, chunk_tokens)


MATRIX_FORMATS = {"csr": TensorFormat.csr, "dcsr": TensorFormat.dcsr, "coo": TensorFormat.coo}


@st.composite
def sparse_matrices(draw):
    rows, cols = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    b = ((rng.random((rows, cols)) < density) * rng.standard_normal((rows, cols))).astype(np.float32)
    c = ((rng.random(cols) < draw(st.sampled_from([0.0, 0.5, 1.0]))) * rng.standard_normal(cols)).astype(np.float32)
    return b, c, draw(st.sampled_from(list(MATRIX_FORMATS))), draw(st.sampled_from(["compressed", "dense"]))


@settings(max_examples=40, deadline=None)
@given(sparse_matrices(), st.sampled_from(ARCHS))
def test_random_spmv_formats_agree_token_by_token(case, arch):
    b, c, fmt, vec_fmt = case
    graph = spmv_graph()
    rows = "dense" if fmt == "csr" else "compressed"  # the result keeps the rows B stores
    graph.outputs = [TensorFormat((b.shape[0],), (LevelSpec(rows, 0),))]
    inputs = [FiberTree.from_dense(b, MATRIX_FORMATS[fmt](b.shape)),
              FiberTree.from_dense(c, TensorFormat((len(c),), (LevelSpec(vec_fmt, 0),)))]
    result = assert_engines_agree(graph, inputs, arch)
    if result is not None:  # None: both reject an empty DCSR/COO row level (the scanner rule's ambiguity)
        np.testing.assert_allclose(result.outputs[0].to_dense(), b @ c, rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(sparse_matrices(), st.sampled_from(ARCHS), st.sampled_from(list(LOCATE_GRAPHS)), st.integers(1, 3),
       st.integers(0, 2**16))
def test_random_locate_graphs_agree_token_by_token(case, arch, name, width, seed):
    """Random sparse rows located into a dense vector, a dense matrix (whose next level is
    scanned under the located references) or rows of dense fibers (union: ``N`` coordinates
    and ``N`` parents), with random formats, empty rows and timing parameters."""
    a, vec, fmt, _ = case
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((a.shape[1], width)).astype(np.float32)
    d = ((rng.random((a.shape[0], 1)) < 0.5) * rng.standard_normal(a.shape)).astype(np.float32)
    inputs, want = locate_inputs(a, vec, b, d)[name]
    graph = LOCATE_GRAPHS[name]()
    rows = "dense" if fmt == "csr" and name != "locate_union" else "compressed"  # the rows the operand stores
    if name == "locate_spmm":
        graph.outputs = [TensorFormat(want.shape, (LevelSpec(rows, 0), LevelSpec("compressed", 1)))]
    else:
        graph.outputs = [TensorFormat(want.shape, (LevelSpec(rows, 0),))]
    if name != "locate_union":
        inputs[0] = FiberTree.from_dense(a, TensorFormat(a.shape, (LevelSpec(rows, 0), LevelSpec("compressed", 1))))
    result = assert_engines_agree(graph, inputs, arch)
    if result is not None:  # None: both reject an empty compressed row level (the scanner rule's ambiguity)
        np.testing.assert_allclose(result.outputs[0].to_dense(), want, rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(sparse_matrices(), st.integers(1, 4))
def test_random_parallel_rows_agree_token_by_token(case, lanes):
    b, _, fmt, _ = case
    graph = parallel_graph(lanes)
    graph.outputs = [TensorFormat.dense((b.shape[0],))]
    assert_engines_agree(graph, [FiberTree.from_dense(b, TensorFormat.csr(b.shape))])


GCN_NODES, GCN_FEATURES = 7, 6


def gcn_inputs(seed: int, density: float):
    gen = torch.Generator().manual_seed(seed)
    adj = (torch.rand(GCN_NODES, GCN_NODES, generator=gen) < density).float() + torch.eye(GCN_NODES)
    x = (torch.rand(GCN_NODES, GCN_FEATURES, generator=gen) < density).float()
    return adj.to_sparse_csr(), x.to_sparse_csr()


@functools.lru_cache(maxsize=None)
def compiled_gcn(fusion: str):
    torch.manual_seed(0)
    model = gcn.GCN(GCN_FEATURES, 3, hidden=4)
    return model, fuseflow.compile(model, gcn_inputs(0, 0.4), fuseflow.Schedule(fusion=fusion), plan=gcn.plan(model))


@settings(max_examples=12, deadline=None)
@given(fusion=st.sampled_from(["unfused", "partial", "full"]), seed=st.integers(0, 2**16),
       density=st.sampled_from([0.0, 0.3, 1.0]), chunk_tokens=st.sampled_from([None, 1, 2, 9]))
def test_gcn_at_every_fusion_level_agrees(fusion, seed, density, chunk_tokens):
    model, compiled_model = compiled_gcn(fusion)
    inputs = gcn_inputs(seed, density)
    want = compiled_model.simulate(*inputs, engine="reference")
    with chunked(chunk_tokens):
        got = compiled_model.simulate(*inputs, engine="fast")
    for a, b in zip(want.run.kernels, got.run.kernels):
        assert_same_results(a.result, b.result)
    torch.testing.assert_close(got.output, model(*inputs), rtol=1e-5, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), sparsity=st.sampled_from([0.0, 0.5, 0.9, 1.0]), empty_rows=st.booleans(),
       scale=st.sampled_from([1, 2]), chunk_tokens=st.sampled_from([None, 1, 5]))
def test_outer_product_accumulator_agrees(seed, sparsity, empty_rows, scale, chunk_tokens):
    """CSC x dense: the order-2 sparse accumulator (the fast engine's loop over inner stops)."""
    inputs = KERNELS["spmm_csc"].inputs(sparsity, seed=seed, scale=scale, integer=False, empty_rows=empty_rows)
    simulate_both("spmm_csc", inputs, scale, chunk_tokens=chunk_tokens)

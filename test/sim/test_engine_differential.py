"""The fast engine against the reference engine on whole graphs: outputs bit for bit, total
cycles, every block's statistics and (for hand-built graphs) every channel's tokens and stamps.

Graphs: those of ``test_sim_engine.py``, every kernel of ``fuseflow.kernels`` compiled from its
PyTorch module, a small GCN at every fusion level, and random matrices, formats, sparsities and
timing parameters (hypothesis).
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
from sim_helpers import assert_engines_agree, assert_same_results
from test_sim_engine import (
    ROWS, chain_graph, hold_graph, parallel_graph, spmv_dcsr_output_graph, spmv_graph, spmv_inputs,
)

warnings.filterwarnings("ignore")

ROWS_CSR = FiberTree.from_dense(ROWS, TensorFormat.csr(ROWS.shape))
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


@functools.lru_cache(maxsize=None)
def compiled(name: str, scale: int = 1):
    kernel = KERNELS[name]
    return fuseflow.compile(kernel.module(), kernel.inputs(0.5, scale=scale),
                            fuseflow.Schedule(formats=dict(kernel.declared)))


def simulate_both(name, inputs, scale=1, arch=None):
    model = compiled(name, scale)
    want = model.simulate(*inputs, engine="reference", arch=arch)
    got = model.simulate(*inputs, engine="fast", arch=arch)
    assert len(want.run.kernels) == len(got.run.kernels)
    for a, b in zip(want.run.kernels, got.run.kernels):
        assert_same_results(a.result, b.result)
    assert want.cycles == got.cycles
    for a, b in zip(want.outputs, got.outputs):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    return got


@pytest.mark.parametrize("sparsity", [0.0, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_agrees(name, sparsity):
    simulate_both(name, KERNELS[name].inputs(sparsity, seed=1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(KERNELS)), scale=st.sampled_from([1, 2]), seed=st.integers(0, 2**16),
       sparsity=st.sampled_from([0.0, 0.3, 0.7, 0.95, 1.0]), integer=st.booleans(), empty_rows=st.booleans(),
       arch=st.sampled_from(ARCHS))
def test_random_kernel_inputs_agree(name, scale, seed, sparsity, integer, empty_rows, arch):
    inputs = KERNELS[name].inputs(sparsity, seed=seed, scale=scale, integer=integer, empty_rows=empty_rows)
    simulate_both(name, inputs, scale, arch)


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
       density=st.sampled_from([0.0, 0.3, 1.0]))
def test_gcn_at_every_fusion_level_agrees(fusion, seed, density):
    model, compiled_model = compiled_gcn(fusion)
    inputs = gcn_inputs(seed, density)
    want = compiled_model.simulate(*inputs, engine="reference")
    got = compiled_model.simulate(*inputs, engine="fast")
    for a, b in zip(want.run.kernels, got.run.kernels):
        assert_same_results(a.result, b.result)
    torch.testing.assert_close(got.output, model(*inputs), rtol=1e-5, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), sparsity=st.sampled_from([0.0, 0.5, 0.9, 1.0]), empty_rows=st.booleans(),
       scale=st.sampled_from([1, 2]))
def test_outer_product_accumulator_agrees(seed, sparsity, empty_rows, scale):
    """CSC x dense: the order-2 sparse accumulator (the fast engine's loop over inner stops)."""
    inputs = KERNELS["spmm_csc"].inputs(sparsity, seed=seed, scale=scale, integer=False, empty_rows=empty_rows)
    simulate_both("spmm_csc", inputs, scale)

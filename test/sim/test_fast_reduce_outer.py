"""The fast engine's reducer with the outer coordinates (``sim/engines/fast_reduce.py``) against
the reference coroutine (``sim/blocks/reduce.py``): output tokens, stamps, clock and every
statistic, on whole streams and fed in pieces to the chunked runner; empty fibers, empty outer
fibers, nested stops, ``N``, tiles, max; malformed outer streams report the reference's
errors; compiled graphs (GPT-3 tiny, the kernels) agree and no longer run the reducer's
coroutine."""

import collections
import functools
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import assert_same_results, chunked
from sparse_models import ChainCSC, RowSum, chain_inputs
from sparse_models import sparse as _sparse
from test_fast_engine import _context, run_both, run_in_pieces

import fuseflow
from fuseflow.apps import get_application
from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import fast_blocks
from fuseflow.sim.engines.fast_stream import from_tokens
from fuseflow.sim.engines.reference import run_block
from fuseflow.sim.graph import Block
from fuseflow.sim.tokens import DONE, EMPTY, SimulationError, Stop, stream

warnings.filterwarnings("ignore")

CASES = [  # (values, outer coordinates), attrs
    (["1.0 2.0 S0 S1 S1 D", "0 1 S0 S0 D"], {}),                      # empty (outer) fibers
    (["S0 4.0 S1 D", "2 5 S0 D"], {"kind": "max"}),                    # empty fibers give 0.0
    (["1.0 S0 2.0 3.0 S0 D", "3 5 D"], {}),                            # outer fiber of the root
    (["1.0 S1 S2 2.0 S0 N 3.0 S2 S3 D", "0 S0 S1 1 2 S1 S2 D"], {}),   # nested stops
    (["1.0 S1 S2 2.0 S0 N 3.0 S2 S3 D", "0 S0 S1 1 2 S1 S2 D"], {"kind": "max"}),
    (["S1 S2 S1 S2 D", "S0 S1 S0 S1 D"], {}),                          # only empty outer fibers
    (["N S0 -2.0 S1 D", "N 3 S0 D"], {"kind": "max"}),                 # N coordinates and values
    (["-0.0 S0 -1.0 -3.0 S1 S1 D", "1 2 S0 S0 D"], {}),
    (["-1.0 -0.5 S0 S1 -4.0 S1 D", "0 1 S0 7 S0 D"], {"kind": "max"}),
    (["D", "D"], {}),
    (["S0 S0 S0 D", "1 2 3 D"], {}),
]


def _pairs(case):
    (values, outer), attrs = case
    return [values, outer], attrs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_hand_built_streams_agree(case, seed):
    inputs, attrs = _pairs(case)
    run_both("reduce", inputs, seed=seed, **attrs)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_hand_built_streams_fed_in_pieces_agree(case, seed):
    inputs, attrs = _pairs(case)
    run_in_pieces("reduce", inputs, 1, seed=seed, **attrs)


def test_a_result_is_stamped_before_the_outer_closing_stop_arrives():
    """Under ``S_k`` (k > 0) the result is sent once the coordinate is read, before the outer
    ``S(k-1)``: a late closing stop delays the ``S(k-1)`` and the next steps, not the result."""
    block = Block("b", "reduce", ("v", "o"), ("out",), {})
    values = [(np.float32(1.0), 0), (Stop(1), 1), (DONE, 2)]
    outer = [(0, 5), (Stop(0), 40), (DONE, 41)]
    (want,), ref = run_block(block, [values, outer])
    assert want == [(np.float32(1.0), 6), (Stop(0), 41), (DONE, 42)]
    ctx, _, _ = _context(block)
    got = fast_blocks.VECTORIZED["reduce"](ctx, [from_tokens(*zip(*s)) for s in (values, outer)])
    assert got[0].pairs() == want and ctx.clock == ref.clock == 42 and ctx.stats.steps == 3


def test_latency_and_interval_are_respected():
    arch = Arch(block_costs={"reduce": (3, 2)})
    for seed in range(4):
        run_both("reduce", ["1.0 S1 S2 2.0 S0 N 3.0 S2 S3 D", "0 S0 S1 1 2 S1 S2 D"], arch=arch,
                 seed=seed)


TILE_IN, TILE_OUT = ((2, 2),), ((2,),)


def _tile_stream(text, rng):
    """``text``'s tokens with every value a random 2x2 tile."""
    return [rng.standard_normal((2, 2)).astype(np.float32)
            if isinstance(t, (float, np.floating)) else t for t in stream(text)]


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("seed", range(4))
def test_tiles_agree(kind, seed):
    rng = np.random.default_rng(seed)
    values = _tile_stream("1.0 S1 S2 2.0 S0 N 3.0 2.0 S2 S3 D", rng)
    outer = stream("0 S0 S1 1 2 S1 S2 D")
    attrs = {"kind": kind, "tile": "ij->i", "tiles": (TILE_IN, TILE_OUT)}
    run_both("reduce", [values, outer], seed=seed, **attrs)
    run_in_pieces("reduce", [values, outer], 1, seed=seed, **attrs)
    same = {"kind": kind, "tiles": (TILE_IN, TILE_IN)}  # tiles kept whole
    run_both("reduce", [values, outer], seed=seed, **same)


# -- random fiber trees --------------------------------------------------------------------------

@st.composite
def outer_and_values(draw, tiles=False):
    """A random outer coordinate stream (fibers nested up to S2, ``N`` coordinates, empty fibers
    at every level) and the values under it by the scanner rule: each coordinate owns one fiber
    of values (possibly empty, ``N`` included) closed by ``S0``, or ``S(k+1)`` when the outer
    ``S_k`` follows (absorbed); a bare outer ``S_k`` gives a bare ``S(k+1)``."""
    outer = []
    for _ in range(draw(st.integers(0, 6))):
        crds = sorted(draw(st.sets(st.integers(0, 9), max_size=3)))
        outer += [EMPTY if draw(st.integers(0, 5)) == 0 else c for c in crds]
        outer.append(Stop(draw(st.integers(0, 2))))
    if draw(st.booleans()):  # coordinates of the root's fiber: no stop before D
        outer += list(range(draw(st.integers(0, 3))))
    values = []
    i = 0
    while i < len(outer):
        if isinstance(outer[i], Stop):
            values.append(Stop(outer[i].level + 1))
            i += 1
            continue
        for _ in range(draw(st.integers(0, 3))):
            v = draw(st.floats(-8, 8, width=32).map(np.float32))
            if tiles:  # (tile streams hold no N: a tile load turns it into a tile of zeros)
                v = np.full((2, 2), v, np.float32) + np.arange(4, dtype=np.float32).reshape(2, 2)
            elif draw(st.integers(0, 4)) == 0:
                v = EMPTY
            values.append(v)
        if i + 1 < len(outer) and isinstance(outer[i + 1], Stop):
            values.append(Stop(outer[i + 1].level + 1))
            i += 2
        else:
            values.append(Stop(0))
            i += 1
    return values + [DONE], outer + [DONE]


@settings(max_examples=120, deadline=None)
@given(outer_and_values(), st.integers(0, 9), st.sampled_from(["sum", "max"]))
def test_random_fiber_trees_agree(streams, seed, kind):
    values, outer = streams
    run_both("reduce", [values, outer], seed=seed, kind=kind)
    run_in_pieces("reduce", [values, outer], 1, seed=seed, kind=kind)


@settings(max_examples=40, deadline=None)
@given(outer_and_values(tiles=True), st.integers(0, 9), st.sampled_from(["sum", "max"]))
def test_random_tile_trees_agree(streams, seed, kind):
    values, outer = streams
    attrs = {"kind": kind, "tile": "ij->i", "tiles": (TILE_IN, TILE_OUT)}
    run_both("reduce", [values, outer], seed=seed, **attrs)
    run_in_pieces("reduce", [values, outer], 1, seed=seed, **attrs)


# -- malformed and unusual outer streams ---------------------------------------------------------

def _simulate(inputs, **attrs):
    """The fast engine's reducer on whole streams: the vectorized form's answer (None: it
    declined) and the block's outputs (vectorized, or the reference coroutine)."""
    block = Block("b", "reduce", ("v", "o"), ("out",), attrs)
    ctx, _, _ = _context(block)
    streams = [from_tokens(stream(s)) for s in inputs]
    vectorized = fast_blocks.VECTORIZED["reduce"](ctx, streams)
    ctx, _, _ = _context(block)
    return vectorized, fast_blocks.simulate(ctx, [from_tokens(stream(s)) for s in inputs])


MALFORMED = [
    ["1.0 S1 D", "S0 D"],            # a value inside an outer fiber without a coordinate
    ["1.0 S1 D", "0 1 D"],           # S1 closes a fiber, but the outer fiber goes on
    ["1.0 S0 D", "S0 D"],            # an empty outer fiber under S0
    ["1.0 S2 D", "0 S0 D"],          # the outer stop one level too low
    ["S1 S1 D", "S0 S1 D"],          # an empty outer fiber's stop at the wrong level
]


@pytest.mark.parametrize("inputs", MALFORMED)
def test_malformed_outer_streams_raise_the_reference_error(inputs):
    block = Block("b", "reduce", ("v", "o"), ("out",), {})
    with pytest.raises(SimulationError) as want:
        run_block(block, [stream(s) for s in inputs])
    with pytest.raises(SimulationError) as got:
        _simulate(inputs)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


@pytest.mark.parametrize("inputs", [["1.0 S0 D", "D"], ["1.0 S0 D", "0 1 D"], ["1.0 D", "0 D"],
                                    ["1.0 S0 D", "0 D 1"]])
def test_outer_streams_too_short_or_too_long_fail_as_in_the_reference_engine(inputs):
    vectorized = None
    with pytest.raises(SimulationError):
        vectorized, _ = _simulate(inputs)
    assert vectorized is None
    block = Block("b", "reduce", ("v", "o"), ("out",), {})
    with pytest.raises(SimulationError):
        run_block(block, [stream(s) for s in inputs])


UNPAIRED = [  # outer streams the reference reads without an error though no scanner makes them
    (["1.0 S0 S1 D", "5 S0 D"], {}),          # the outer S0 read as an empty outer fiber
    (["1.0 S0 S1 2.0 S0 D", "5 S0 6 D"], {}),
    (["1.0 S0 S1 D", "5 S0 D"], {"kind": "max"}),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("case", UNPAIRED, ids=[f"unpaired{i}" for i in range(len(UNPAIRED))])
def test_unpaired_outer_streams_decline_to_the_reference(case, seed):
    inputs, attrs = case
    vectorized, _ = _simulate(inputs, **attrs)
    assert vectorized is None
    run_both("reduce", inputs, seed=seed, vectorized=False, **attrs)
    run_in_pieces("reduce", inputs, 1, seed=seed, **attrs)


# -- compiled graphs -----------------------------------------------------------------------------

def _count_fallbacks(monkeypatch):
    """Counts, per block kind, the blocks the fast engine runs as reference coroutines, and the
    reducers with outer coordinates its vectorized reducer runs."""
    counts = collections.Counter()
    coroutine = fast_blocks.run_coroutine
    vectorized = fast_blocks.VECTORIZED["reduce"]

    def counting(ctx, ins, outs, streams):
        counts[ctx.block.kind] += 1
        return coroutine(ctx, ins, outs, streams)

    def reduce(ctx, ins):
        out = vectorized(ctx, ins)
        if len(ins) > 1 and out is not None:
            counts["vectorized reduce with outer coordinates"] += 1
        return out

    monkeypatch.setattr(fast_blocks, "run_coroutine", counting)
    monkeypatch.setitem(fast_blocks.VECTORIZED, "reduce", reduce)
    return counts


@pytest.fixture
def fallbacks(monkeypatch):
    return _count_fallbacks(monkeypatch)


def _agree(compiled_model, inputs, chunk_tokens):
    want = compiled_model.simulate(*inputs, engine="reference")
    with chunked(chunk_tokens):
        got = compiled_model.simulate(*inputs, engine="fast")
    assert len(want.run.kernels) == len(got.run.kernels)
    for a, b in zip(want.run.kernels, got.run.kernels):
        assert_same_results(a.result, b.result)
    for a, b in zip(want.outputs, got.outputs):
        assert a.numpy().tobytes() == b.numpy().tobytes()


@functools.lru_cache(maxsize=None)
def gpt3_tiny(fusion: str):
    """GPT-3 tiny as published: the BigBird mask declared sparse (CSR), whose empty rows of
    blocks give the attention's reducers their outer coordinates."""
    app = get_application("gpt3")
    with torch.no_grad():
        model, inputs = app.build("tiny", "b4", 0)
        plan = app.plan(model)
        return fuseflow.compile(model, inputs, plan.schedule(fusion), plan=plan), inputs


@pytest.mark.parametrize("chunk_tokens", [None, 32])
@pytest.mark.parametrize("fusion", ["partial", "full"])
def test_gpt3_tiny_fused_kernels_agree_without_reducer_coroutines(fusion, chunk_tokens, fallbacks):
    compiled_model, inputs = gpt3_tiny(fusion)
    with torch.no_grad():
        _agree(compiled_model, inputs, chunk_tokens)
    assert fallbacks["vectorized reduce with outer coordinates"] > 0
    assert fallbacks["reduce"] == 0


def _chain_inputs(density, seed, empty_rows):
    return chain_inputs(density, empty_rows, seeds=(seed, seed + 1, seed + 2))


@functools.lru_cache(maxsize=None)
def compiled_chain():
    return fuseflow.compile(ChainCSC(), _chain_inputs(0.5, 0, (2, 5)),
                            fuseflow.Schedule(fusion="full"))


@functools.lru_cache(maxsize=None)
def compiled_row_sum():
    return fuseflow.compile(RowSum(), (_sparse(4, 5, 0.6, 5, (1, 3)),),
                            fuseflow.Schedule(formats={"a": "dcsr"}))


@settings(max_examples=25, deadline=None)
@given(density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2**16),
       empty_rows=st.sets(st.integers(0, 5), max_size=6).map(tuple),
       chunk_tokens=st.sampled_from([None, 1, 2, 5]))
def test_compiled_reductions_under_sparse_rows_agree(density, seed, empty_rows, chunk_tokens):
    """The compiler's reducers with outer coordinates (a reduction under a level whose fibers
    can be empty: a fused chain over CSR rows, row sums of a DCSR matrix), vectorized, against
    the reference, on whole streams and in chunks."""
    with pytest.MonkeyPatch.context() as mp:
        counts = _count_fallbacks(mp)
        _agree(compiled_chain(), _chain_inputs(density, seed, empty_rows), chunk_tokens)
        a = _sparse(4, 5, density, seed, [r for r in empty_rows if r < 4])
        _agree(compiled_row_sum(), (a,), chunk_tokens)
    assert counts["vectorized reduce with outer coordinates"] >= 2
    assert counts["reduce"] == 0

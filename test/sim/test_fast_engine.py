"""The fast engine's pieces: stream arrays, the clock recurrence, sequential folds, and every
vectorized block against the reference implementation on hand-written streams with
non-monotone stamps; the fallbacks (other kinds, malformed streams, bounded FIFOs)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.sim.arch import Arch
from fuseflow.sim.blocks.alu import ALU_OPS, BINARY, SCALAR_BINARY
from fuseflow.sim.engines import DeadlockError, StreamError, fast_spacc, run
from fuseflow.sim.engines.fast import VECTORIZED, run_coroutine, topological_order
from fuseflow.sim.engines.fast_blocks import FastContext
from fuseflow.sim.engines.fast_stream import Stream, from_tokens, step_clocks
from fuseflow.sim.engines.fast_values import fold_by_key
from fuseflow.sim.engines.reference import Channel, run_block
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.tokens import format_stream, stream
from sim_helpers import token_key
from test_sim_engine import hold_graph, spmv_graph, spmv_inputs

B = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 4, 0, 5]], dtype=np.float32)
B_CSR = FiberTree.from_dense(B, TensorFormat.csr(B.shape))
B_COO = FiberTree.from_dense(B, TensorFormat.coo(B.shape))
VEC = FiberTree.from_dense(np.array([1.5, 2.5, 3.5], np.float32))
DENSE = FiberTree.from_dense(B, TensorFormat.dense(B.shape))


def _context(block, tensors=(), outputs=(), arch=None):
    ins = [Channel(ch, "<test>", block.name, None, False) for ch in block.inputs]
    outs = [Channel(ch, block.name, None, None, True) for ch in block.outputs]
    return FastContext(block, ins, outs, arch or Arch(), list(tensors), list(outputs)), ins, outs


def run_both(block_kind, inputs, n_out=1, tensors=(), outputs=(), arch=None, seed=0, vectorized=True, **attrs):
    """Runs one block on both engines' implementations with random stamps; checks they agree."""
    rng = np.random.default_rng(seed)
    streams = [stream(s) if isinstance(s, str) else s for s in inputs]
    if seed % 2:  # increasing stamps, as vectorized producers make (their fast paths apply)
        stamped = [list(zip(s, np.cumsum(rng.integers(1, 4, len(s))).tolist())) for s in streams]
    else:
        top = 12 + 2 * max(map(len, streams), default=0)  # late tokens anywhere, on every input
        stamped = [[(t, int(rng.integers(0, top))) for t in s] for s in streams]
    block = Block("b", block_kind, tuple(f"in{i}" for i in range(len(streams))),
                  tuple(f"out{i}" for i in range(n_out)), attrs)
    want, ref_ctx = run_block(block, stamped, tensors, outputs, arch)
    ctx, ins, outs = _context(block, tensors, outputs, arch)
    arrays = [from_tokens([t for t, _ in s], [x for _, x in s]) for s in stamped]
    for a in arrays:  # what the engine knows of a producer's stamps
        steps = np.diff(a.time)
        a.monotone = bool(np.all(steps >= 0))
        a.gap = int(steps.min()) if a.monotone and len(steps) else 0
    got = VECTORIZED[block_kind](ctx, arrays) if vectorized else None
    if vectorized:
        assert got is not None, f"the vectorized {block_kind} declined its input"
    else:
        got = run_coroutine(ctx, ins, outs, arrays)
    for w, g in zip(want, got):
        assert [(token_key(t), s) for t, s in w] == [(token_key(t), s) for t, s in g.pairs()]
    ref_ctx.stats.cycles, ctx.stats.cycles = ref_ctx.clock, ctx.clock
    assert ctx.stats.to_dict() == ref_ctx.stats.to_dict()
    sink = ctx.sink.tokens() if hasattr(ctx.sink, "tokens") else list(ctx.sink)  # Stream, DenseLevelSink
    assert [token_key(t) for t in sink] == [token_key(t) for t in ref_ctx.sink]
    return [format_stream(t for t, _ in g.pairs()) for g in got]


CSR_OUT = [TensorFormat.csr((3, 4))]
CASES = [
    ("root", [], 1, {}, {}),
    ("scan", ["0 1 2 S0 D"], 2, {"tensors": [B_CSR]}, {"tensor": 0, "level": 1}),
    ("scan", ["0 S0 N S1 S0 D"], 2, {}, {"tensor": None, "size": 2}),
    ("scan", ["0 2 S0 D"], 2, {}, {"tensor": None, "size": 3}),
    ("scan", ["0 D"], 2, {"tensors": [B_COO]}, {"tensor": 0, "level": 0}),
    ("scan", ["0 1 S0 D"], 2, {"tensors": [B_COO]}, {"tensor": 0, "level": 1}),
    ("scan", ["S0 S1 D"], 2, {"tensors": [B_CSR]}, {"tensor": 0, "level": 1}),
    ("repsiggen", ["1 3 S0 S0 0 N S1 D"], 1, {}, {}),
    ("repeat", ["0 1 S0 2 S0 3 S1 D", "R R R S R R R S R S R R S D"], 1, {}, {}),
    ("repeat", ["0 1 2 S0 D", "R R S R S R S D"], 1, {}, {}),
    ("repeat", ["0 S0 1 S1 D", "S R S D"], 1, {}, {}),
    ("repeat", ["0 S0 S1 D", "R R S S D"], 1, {}, {}),
    ("repeat", ["N 1.5 S0 D", "R S R R S D"], 1, {}, {}),
    ("intersect", ["1 3 S0 S0 0 1 3 S1 D", "1 3 S0 1 3 S0 1 3 S1 D", "0 1 S0 S0 2 3 4 S1 D",
                   "0 1 S0 0 1 S0 0 1 S1 D"], 3, {}, {"ref_groups": [1, 1]}),
    ("intersect", ["1 2 S0 D", "2 3 S0 D", "10 20 S0 D", "11 21 S0 D", "30 31 S0 D"], 4, {},
     {"ref_groups": [2, 1]}),
    ("intersect", ["0 2 S0 1 S1 D", "2 S0 0 1 S1 D", "5 6 S0 7 S1 D", "N S0 9 10 S1 D"], 3, {}, {}),
    ("union", ["1 3 S0 D", "2 3 S0 D", "10 30 S0 D", "20 31 S0 D"], 3, {}, {"ref_groups": [1, 1]}),
    ("union", ["0 S0 S1 D", "S0 1 S1 D", "0 S0 1 S1 D", "5 S0 S1 D", "S0 6 S1 D", "7 S0 8 S1 D"], 4, {},
     {"ref_groups": [1, 1, 1]}),
    ("union", ["S0 S1 D", "S0 S1 D", "S0 S1 D", "S0 S1 D"], 3, {}, {}),
    ("array", ["0 2 N S0 1 S1 D"], 1, {"tensors": [VEC]}, {"tensor": 0}),
    ("alu", ["1.5 2.0 S0 N S1 D", "2.0 N S0 3.0 S1 D"], 1, {}, {"op": "mul"}),
    ("alu", ["N 2.0 S0 D", "3.0 N S0 D"], 1, {}, {"op": "sub"}),
    ("alu", ["N inf 2.0 S0 D", "inf N N S0 D"], 1, {}, {"op": "mul"}),
    ("alu", ["N 2.0 N S0 D", "0.0 N N S0 D"], 1, {}, {"op": "div"}),
    ("alu", ["-1.0 2.0 S0 D"], 1, {}, {"op": "relu"}),
    ("alu", ["0.25 N S0 D"], 1, {}, {"op": "scalar_rsub", "scalar": 1.0}),
    ("alu", ["0.5 -1.5 N S0 D"], 1, {}, {"op": "gelu"}),
    ("alu", ["0.0 2.0 N S0 D", "1.5 N 3.0 S0 D"], 1, {}, {"op": "mask_fill", "scalar": -1e9}),
    ("reduce", ["1.0 2.0 S0 S0 3.0 4.0 S1 D"], 1, {}, {}),
    ("reduce", ["-3.0 -1.0 S0 S0 -2.0 S1 D"], 1, {}, {"kind": "max"}),
    ("reduce", ["1.0 N N S0 N D"], 1, {}, {}),
    ("reduce", ["S0 S1 S2 D"], 1, {}, {"kind": "max"}),
    ("spacc", ["0 2 S0 S0 1 2 S1 S2 D", "1.0 2.0 S0 S0 4.0 3.0 S1 S2 D"], 2, {}, {"order": 1}),
    ("spacc", ["N 1 S1 D", "5.0 2.0 S1 D"], 2, {}, {"order": 1}),
    ("spacc", ["0 1 S0 0 S1 D", "1 S0 0 S1 1 2 S2 D", "1.0 S0 2.0 S1 3.0 4.0 S2 D"], 3, {}, {"order": 2}),
    ("spacc", ["3 S1 S2 D", "5 S2 S3 D", "2.0 S2 S3 D"], 3, {}, {"order": 2}),
    ("spacc", ["0 1 S0 0 1 S1 D", "1 2 S0 2 S1 1 S0 1 2 S2 D", "1.0 -0.0 S0 2.0 S1 -0.0 S0 4.0 5.0 S2 D"],
     3, {}, {"order": 2}),
    ("spacc", ["3 1 N 3 S1 S0 S1 D", "1.0 N 2.0 4.0 S1 S0 S1 D"], 2, {}, {"order": 1}),
    ("spacc", ["0 1 0 S1 D", "N N 2.0 S1 D"], 2, {}, {"order": 1}),
    ("reduce", ["-1.0 N -2.0 S0 N S0 -3.0 S1 D"], 1, {}, {"kind": "max"}),
    ("spacc", ["3000000 1 S0 3000000 S1 7 S1 D", "1.0 2.0 S0 4.0 S1 8.0 S1 D"], 2, {}, {"order": 1}),
    ("level_write", ["1 3 S0 S0 0 1 3 S1 D"], 0, {"outputs": CSR_OUT}, {"result": 0, "level": 1}),
    ("level_write", ["0 1 2 S0 D"], 0, {"outputs": CSR_OUT}, {"result": 0, "level": 0}),
    ("value_write", ["1.0 N S0 2.0 S1 D"], 0, {"outputs": CSR_OUT}, {"result": 0}),
    ("locate", ["1 3 S0 2 S1 D", "5 7 S0 D"], 2, {}, {"tensor": None, "size": 4}),
    ("locate", ["N S0 D", "2 D"], 2, {}, {"tensor": None, "size": 4}),
    ("locate", ["S1 3 S1 D", "S0 1 S0 D"], 2, {}, {"tensor": None, "size": 4}),
    ("locate", ["9 N S0 2 S1 D", "N 3 S0 D"], 2, {}, {"tensor": None, "size": 4}),  # 9 under N: not checked
    ("locate", ["2 S1 S2 0 S3 D", "1 S0 S1 3 S2 D"], 2, {}, {"tensor": None, "size": 4}),
    ("locate", ["S0 S0 1 2 S1 D", "0 1 2 S0 D"], 2, {"tensors": [DENSE]}, {"tensor": 0, "level": 1}),
    ("locate", ["D", "D"], 2, {}, {"tensor": None, "size": 4}),
    ("locate", ["S0 S1 D", "0 1 S0 D"], 2, {}, {"tensor": None, "size": 0}),  # an empty level, empty fibers
    ("fork", ["0 1 2 S0 3 S1 D"], 2, {}, {}),
    ("fork", ["0 N 2 S0 3 4 5 S1 D"], 3, {}, {}),
    ("join", ["0 1 2 S0 3 S1 D", "0 2 S0 S1 D", "1 S0 3 S1 D"], 1, {}, {"depth": 0}),
    ("join", ["0 1 2 S0 D", "1 S0 S1 D", "3 S1 D"], 1, {}, {}),
    ("join", ["0 1 2 S0 D", "1 S0 2 S1 D", "3 S1 D"], 1, {}, {}),
    ("join", ["0 S0 1 S1 D", "7 S1 S2 D", "S1 8 S2 D"], 1, {}, {}),
    ("join", ["D", "D", "D"], 1, {}, {}),
    ("join", ["S0 D", "S1 D", "S1 D"], 1, {}, {}),
    ("broadcast", ["0 1 S0 D"], 3, {}, {}),
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_vectorized_block_matches_reference(case, seed):
    kind, inputs, n_out, kw, attrs = case
    run_both(kind, inputs, n_out, seed=seed, **kw, **attrs)


def test_vectorized_block_respects_latency_and_interval():
    arch = Arch(latency=3, initiation_interval=2, block_costs={"broadcast": (2, 1)})
    run_both("scan", ["0 1 2 S0 D"], 2, tensors=[B_CSR], arch=arch, tensor=0, level=1)
    run_both("broadcast", ["0 1 S0 D"], 2, arch=arch)
    run_both("union", ["1 3 S0 D", "2 3 S0 D", "10 30 S0 D", "20 31 S0 D"], 3, arch=arch)


@pytest.mark.parametrize("kind, inputs, n_out, attrs", [
    ("crddrop", ["1 S0 1 S0 S0 1 S1 D", "0 1 2 3 S0 D"], 2, {}),
    ("crdhold", ["0 2 S0 2 S0 2 S1 D", "0 1 2 S0 D"], 2, {}),
    ("spacc", ["0 1 S0 0 S1 D", "1 S0 0 S1 1 2 S2 D", "1.0 S0 2.0 S1 3.0 4.0 S2 D"], 3, {"order": 2}),
])
def test_other_kinds_run_the_reference_coroutine(kind, inputs, n_out, attrs):
    run_both(kind, inputs, n_out, vectorized=kind in VECTORIZED and kind != "spacc", **attrs)


@pytest.mark.parametrize("kind, inputs, n_out, attrs", [
    ("spacc", ["0 1 S0 0 S1 D", "1 S0 0 S1 1 2 S2 D 7", "1.0 S0 2.0 S1 3.0 4.0 S2 D 7.0"], 3, {"order": 2}),
    ("reduce", ["1.0 D 2.0"], 1, {}),
    ("alu", ["1.0 S0 D", "1.0 S1 D"], 1, {"op": "add"}),
    ("intersect", ["3 1 S0 D", "1 S0 D", "0 1 S0 D", "0 S0 D"], 3, {}),
    ("intersect", ["N S0 D", "1 S0 D", "N S0 D", "0 S0 D"], 3, {}),
    ("repeat", ["0 D", "R R D"], 1, {}),
    ("locate", ["1 S0 S1 D", "5 S0 D"], 2, {"tensor": None, "size": 4}),  # S0 then a bare S1: not a scan's
    ("locate", ["4 S0 D", "0 D"], 2, {"tensor": None, "size": 4}),  # out of range: the reference errs
    ("locate", ["1 S1 D", "S0 D"], 2, {"tensor": None, "size": 4}),  # a coordinate under a bare stop
    ("locate", ["1 S1 D", "5 D"], 2, {"tensor": None, "size": 4}),  # S1 but no parent stop to absorb
    ("locate", ["S0 D", "S0 D"], 2, {"tensor": None, "size": 4}),  # a bare parent S0 needs S1
])
def test_vectorized_blocks_decline_what_they_do_not_cover(kind, inputs, n_out, attrs):
    block = Block("b", kind, tuple(f"in{i}" for i in range(len(inputs))), tuple(f"o{i}" for i in range(n_out)), attrs)
    ctx, _, _ = _context(block)
    assert VECTORIZED[kind](ctx, [from_tokens(stream(s)) for s in inputs]) is None


def test_array_reads_whole_rows_under_a_dense_scan():
    """A dense scan's child references stay rows until read; an array copies whole rows of the
    level's values, with the reference's tokens, stamps and reads."""
    scan = Block("scan", "scan", ("r",), ("c", "ref"), {"tensor": 0, "level": 1})
    ctx, _, _ = _context(scan, [DENSE])
    _, refs = VECTORIZED["scan"](ctx, [from_tokens(stream("2 0 S0 D"), [1, 4, 4, 9])])
    assert refs.rows is not None and refs._data is None
    arr = Block("arr", "array", ("ref",), ("val",), {"tensor": 0})
    want, ref_ctx = run_block(arr, [refs.pairs()], [DENSE])
    assert refs._data is not None  # pairs() built the payload; the array still reads rows
    ctx, _, _ = _context(arr, [DENSE])
    (got,) = VECTORIZED["array"](ctx, [refs])
    assert [(token_key(t), x) for t, x in want[0]] == [(token_key(t), x) for t, x in got.pairs()]
    assert format_stream(t for t, _ in want[0]) == "3.0 4.0 0.0 5.0 S0 0.0 1.0 0.0 2.0 S1 D"
    ref_ctx.stats.cycles, ctx.stats.cycles = ref_ctx.clock, ctx.clock
    assert ctx.stats.to_dict() == ref_ctx.stats.to_dict() and ctx.stats.val_reads == 8


def test_locate_into_a_compressed_level_is_left_to_the_reference():
    block = Block("b", "locate", ("c", "r"), ("o0", "o1"), {"tensor": 0, "level": 1})
    ctx, _, _ = _context(block, [B_CSR])
    assert VECTORIZED["locate"](ctx, [from_tokens(stream("1 S0 D")), from_tokens(stream("0 D"))]) is None
    with pytest.raises(StreamError, match="locate needs a dense level"):
        run_block(block, [stream("1 S0 D"), stream("0 D")], [B_CSR])


def test_malformed_streams_raise_the_reference_errors():
    with pytest.raises(StreamError, match="different control structure"):
        run_both("alu", ["1.0 S0 D", "1.0 S1 D"], op="add", vectorized=False)
    with pytest.raises(StreamError, match="block 'scan_cj' \\(scan\\): reads input tensor 1 but 1 inputs were given"):
        run(spmv_graph(), spmv_inputs()[:1], engine="fast")


def test_stream_ending_early_is_a_deadlock():
    graph = BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("scan", "scan", ("r",), ("crd", "ref"), {"tensor": None, "size": 2}),
        Block("drop", "crddrop", ("crd", "ref2"), ("i", "o")),
        Block("root2", "root", (), ("r2",)),
        Block("scan2", "scan", ("r2",), ("c2", "ref2"), {"tensor": None, "size": 5}),
    ], [])
    for engine in ("reference", "fast"):
        with pytest.raises((DeadlockError, StreamError)):
            run(graph, [], engine=engine)


def test_bounded_fifos_deadlock_on_both_engines_naming_the_blocks():
    for engine in ("reference", "fast"):
        with pytest.raises(DeadlockError) as err:
            run(hold_graph(), [], Arch(fifo_depth=1), engine=engine)
        assert {"scan_i": "crd_i", "scan_j": "ref_i", "hold": "crd_j"}.items() <= err.value.blocked.items()
        assert "'scan_i' waits for space on channel 'crd_i'" in str(err.value)


@pytest.mark.parametrize("depth", [2, 3, 100])
def test_bounded_fifos_give_the_same_cycles_on_both_engines(depth):
    want = run(hold_graph(), [], Arch(fifo_depth=depth), engine="reference")
    got = run(hold_graph(), [], Arch(fifo_depth=depth), engine="fast")
    assert got.cycles == want.cycles
    assert [b.to_dict() for b in got.blocks.values()] == [b.to_dict() for b in want.blocks.values()]
    np.testing.assert_array_equal(got.outputs[0].to_dense(), want.outputs[0].to_dense())


def test_cyclic_graph_is_ordered_by_nobody():
    graph = BlockGraph([Block("a", "broadcast", ("y",), ("x",)), Block("b", "broadcast", ("x",), ("y",))], [])
    assert topological_order(graph) is None
    for engine in ("reference", "fast"):
        with pytest.raises(DeadlockError):
            run(graph, [], engine=engine)


def test_stream_round_trip():
    toks = stream("0 1 S0 N S1 R D")
    s = from_tokens(toks, list(range(len(toks))))
    assert format_stream(s.tokens()) == "0 1 S0 N S1 R D"
    assert [x for _, x in s.pairs()] == list(range(len(toks)))
    vals = from_tokens([np.float32(1.5), stream("S0")[0]])
    assert vals.data.dtype == np.float32 and vals.tokens()[0] == np.float32(1.5)
    assert len(Stream(np.zeros(0, np.int8), np.zeros(0), np.zeros(0, np.int64)).runmax()) == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=40), st.integers(0, 3))
def test_step_clocks_solve_the_recurrence(arrival, ii):
    clock, want = 0, []
    for t, a in enumerate(arrival):
        clock = max(clock + (ii if t else 0), a)
        want.append(clock)
    assert step_clocks(np.array(arrival, dtype=np.int64), ii).tolist() == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(-1e8, 1e8, width=32)), max_size=200),
       st.sampled_from(["add", "max"]))
def test_fold_by_key_is_sequential_float32(entries, kind):
    ufunc, init = (np.add, 0.0) if kind == "add" else (np.maximum, -np.inf)
    keys = np.array([k for k, _ in entries], dtype=np.int64)
    values = np.array([v for _, v in entries], dtype=np.float32)
    want = [np.float32(init)] * 6
    for k, v in zip(keys, values):
        want[k] = np.float32(ufunc(want[k], v))
    got = fold_by_key(values, keys, 6, ufunc, init)
    assert [w.tobytes() for w in want] == [g.tobytes() for g in got]


def test_level_spec_is_used_for_compressed_vectors():
    vec = FiberTree.from_dense(np.array([0, 10, 0, 100], np.float32), TensorFormat((4,), (LevelSpec("compressed", 0),)))
    assert run_both("scan", ["0 0 S0 D"], 2, tensors=[vec], tensor=0, level=0) == ["1 3 S0 1 3 S1 D", "0 1 S0 0 1 S1 D"]


@pytest.mark.parametrize("op", ALU_OPS)
def test_every_alu_op_is_bit_identical(op):
    rng = np.random.default_rng(3)
    values = np.concatenate([(rng.standard_normal(64) * 4).astype(np.float32),
                             np.array([0.0, -0.0, np.inf, -np.inf, 1e-40, 88.0, -104.0], np.float32)])
    toks = [list(values) + stream("S0 D"), list(np.roll(values, 5)) + stream("S0 D")]
    arity = 2 if op in BINARY or op in SCALAR_BINARY else 1
    run_both("alu", toks[:arity], op=op, scalar=0.75)


@pytest.mark.parametrize("levels, values", [
    (["0 1 2 S0", "1 3 S0 S0 0 1 3 S1"], [1.0, 2.0, 3.0, 4.0, 5.0]),     # CSR (3x4) as the SpMV example
    (["0 2 S0", "1 3 S0 0 1 3 S1"], [1.0, 2.0, 3.0, 4.0, 5.0]),          # DCSR
    (["0 1 2 S0", "1 3 S0 S0 0 1 3 S1"], [1.0, 2.0]),                     # too few values
    (["0 2 S0", "1 3 S0 S0 0 1 3 S1"], [1.0, 2.0, 3.0, 4.0, 5.0]),       # a fiber too many
])
@pytest.mark.parametrize("fmt", [TensorFormat.csr((3, 4)), TensorFormat.dcsr((3, 4))])
def test_assemble_result_matches_the_reference_assembly(levels, values, fmt):
    from fuseflow.sim.blocks.write import assemble
    from fuseflow.sim.engines.fast_write import assemble_result

    tokens = {lvl: stream(t) for lvl, t in enumerate(levels)}
    arrays = {lvl: from_tokens(t) for lvl, t in tokens.items()}
    vals = np.array(values, dtype=np.float32)
    try:
        want = assemble(fmt, tokens, list(vals))
    except StreamError as exc:
        with pytest.raises(StreamError, match=str(exc).split(":")[0]):
            assemble_result(fmt, arrays, vals, "result")
        return
    got = assemble_result(fmt, arrays, vals, "result")
    np.testing.assert_array_equal(got.to_dense(), want.to_dense())
    assert [None if p is None else p.tolist() for p in got.pos] == [None if p is None else p.tolist() for p in want.pos]


def test_a_stream_too_large_for_memory_fails_clearly():
    from fuseflow.sim.tokens import SimulationError

    graph = BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("huge", "scan", ("r",), ("crd", "ref"), {"tensor": None, "size": 10**13}),
    ], [])
    with pytest.raises(SimulationError, match="block 'huge' \\(scan\\) would emit 10,000,000,000,000 tokens"):
        run(graph, [], engine="fast")


# -- random streams ----------------------------------------------------------------------------

@st.composite
def fibers_of(draw, top=3, values=False, empty=True):
    """A random well-nested stream body: fibers of sorted coordinates (or values), stops of any
    level up to ``top``, optional ``N`` tokens; returns the token list without ``D``."""
    toks = []
    for _ in range(draw(st.integers(0, 6))):
        n = draw(st.integers(0, 4))
        if values:
            body = [np.float32(draw(st.floats(-8, 8, width=32))) for _ in range(n)]
        else:
            body = sorted(draw(st.sets(st.integers(0, 9), max_size=n)))
        if empty and draw(st.booleans()) and values:
            body.append(stream("N")[0])
        toks += body + [stream(f"S{draw(st.integers(0, top))}")[0]]
    return toks


@st.composite
def ref_streams(draw, size=4):
    """Random reference streams (data below ``size``, ``N``, stops), ending with ``D``."""
    toks = draw(st.lists(st.one_of(st.integers(0, size - 1), st.sampled_from(stream("N S0 S1 S2"))), max_size=12))
    return toks + stream("D")


@settings(max_examples=80, deadline=None)
@given(ref_streams(), st.integers(0, 9), st.sampled_from([None, "csr"]))
def test_random_scans_agree(refs, seed, tensor):
    if tensor is None:
        run_both("scan", [refs], 2, seed=seed, tensor=None, size=3)
    else:
        refs = [r if not isinstance(r, int) else r % 3 for r in refs]
        run_both("scan", [refs], 2, tensors=[B_CSR], seed=seed, tensor=0, level=1)


@settings(max_examples=60, deadline=None)
@given(fibers_of(values=True), st.integers(0, 9), st.sampled_from(["sum", "max"]))
def test_random_reductions_agree(body, seed, kind):
    run_both("reduce", [body + stream("D")], seed=seed, kind=kind)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 9))
def test_random_joiners_agree(data, seed):
    n = data.draw(st.integers(1, 3))
    structure = data.draw(st.lists(st.integers(0, 2), max_size=5))  # the stop closing each fiber
    groups = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))  # references per input
    crds, refs = [], []
    for i in range(n):
        c = []
        for level in structure:
            c += sorted(data.draw(st.sets(st.integers(0, 9), max_size=4))) + [stream(f"S{level}")[0]]
        crds.append(c + stream("D"))
        for g in range(groups[i]):
            refs.append([t if not isinstance(t, int) else 100 * (g + 1) + t for t in c] + stream("D"))
    kind = data.draw(st.sampled_from(["intersect", "union"]))
    run_both(kind, crds + refs, 1 + sum(groups), seed=seed, ref_groups=groups)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 9))
def test_random_order1_accumulators_agree(data, seed):
    crd, val = [], []
    for _ in range(data.draw(st.integers(0, 6))):
        for _ in range(data.draw(st.integers(0, 4))):
            c = data.draw(st.one_of(st.integers(0, 5), st.just(stream("N")[0])))
            crd.append(c)
            val.append(data.draw(st.one_of(st.floats(-8, 8, width=32).map(np.float32), st.just(stream("N")[0]))))
        stop = stream(f"S{data.draw(st.integers(0, 2))}")[0]
        crd.append(stop)
        val.append(stop)
    with pytest.MonkeyPatch.context() as mp:  # coordinates renumbered, as a wide range gets
        mp.setattr(fast_spacc, "TABLE_BYTES", data.draw(st.sampled_from([fast_spacc.TABLE_BYTES, 0])))
        run_both("spacc", [crd + stream("D"), val + stream("D")], 2, seed=seed, order=1)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 9))
def test_random_repeats_agree(data, seed):
    refs = data.draw(ref_streams())[:-1]
    units, sig = [], []
    for i, tok in enumerate(refs):  # units: data/N with an absorbed stop, or a bare stop
        if isinstance(tok, int) or tok == stream("N")[0] or i == 0 or isinstance(refs[i - 1], int) is False and \
                refs[i - 1] != stream("N")[0]:
            units.append(tok)
    for tok in units:
        repeats = 0 if tok in stream("S0 S1 S2") else data.draw(st.integers(0, 3))
        sig += stream("R") * repeats + stream("S")
    run_both("repeat", [refs + stream("D"), sig + stream("D")], seed=seed)


@st.composite
def located_streams(draw, size=4):
    """Random parent references (data, ``N``, stops of any level) and coordinates with one fiber
    per parent unit, closed as a scanner of the parents would close it; coordinates in any
    order, ``N`` among them, empty fibers. Returns ``(crd, ref)`` token lists ending with ``D``."""
    parents = draw(ref_streams(size))[:-1]
    crds, i = [], 0
    while i < len(parents):
        tok = parents[i]
        if isinstance(tok, int) or tok == stream("N")[0]:
            crds += draw(st.lists(st.one_of(st.integers(0, size - 1), st.just(stream("N")[0])), max_size=4))
            nxt = parents[i + 1] if i + 1 < len(parents) else None
            absorbs = nxt is not None and nxt in stream("S0 S1 S2")
            crds.append(stream(f"S{nxt.level + 1}")[0] if absorbs else stream("S0")[0])
            i += 2 if absorbs else 1
        else:
            crds.append(stream(f"S{tok.level + 1}")[0])
            i += 1
    return crds + stream("D"), parents + stream("D")


@settings(max_examples=80, deadline=None)
@given(located_streams(), st.integers(0, 9), st.booleans())
def test_random_locates_agree(streams, seed, tensor):
    crd, ref = streams
    attrs = {"tensors": [DENSE], "tensor": 0, "level": 1} if tensor else {"tensor": None, "size": 4}
    run_both("locate", [crd, ref], 2, seed=seed, **attrs)


@settings(max_examples=40, deadline=None)
@given(fibers_of(values=True), st.integers(0, 9), st.integers(1, 3))
def test_random_forks_and_alus_agree(body, seed, lanes):
    run_both("fork", [body + stream("D")], lanes, seed=seed)
    run_both("alu", [body + stream("D")], seed=seed, op="exp")
    run_both("alu", [body + stream("D"), list(reversed(body[:-1])) + body[-1:] + stream("D")]
             if all(isinstance(t, np.float32) for t in body[:-1]) else [body + stream("D")] * 2,
             seed=seed, op="add")


@st.composite
def joined_lanes(draw):
    """A random forked level and what its lanes grew into: ``(order, lanes, depth, direct)``.

    The order is a random reference stream into the rows of a random CSR matrix (empty rows
    and fibers included); each lane scans its references ``depth`` times (0: loads a value)."""
    rows = draw(st.integers(1, 4))
    dense = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=3, max_size=3),
                                   min_size=rows, max_size=rows)), np.float32)
    tree = FiberTree.from_dense(dense, TensorFormat.csr(dense.shape))
    row_values = FiberTree.from_dense(dense[:, 0])
    refs = [t if isinstance(t, int) and t < rows else stream("S0")[0]
            for t in draw(fibers_of(top=1))] + stream("D")
    refs = stream(format_stream(refs))
    lanes = draw(st.integers(1, 4))
    depth = draw(st.integers(0, 2))

    def grow(stream_in):
        if depth == 0:  # a row's reference loads one of `rows` values (the tree may hold none)
            return run_block(Block("a", "array", ("r",), ("v",), {"tensor": 0}),
                             [[(t, 0) for t in stream_in]], [row_values], [], None)[0][0]
        crd, ref = [[t for t, _ in o] for o in run_block(
            Block("s", "scan", ("r",), ("c", "f"), {"tensor": 0, "level": 1}),
            [[(t, 0) for t in stream_in]], [tree], [], None)[0]]
        if depth == 1:
            return [(t, 0) for t in crd]
        return run_block(Block("s2", "scan", ("r",), ("c", "f"), {"tensor": None, "size": 2}),
                         [[(t, 0) for t in ref]], [], [], None)[0][0]

    forked = run_block(Block("f", "fork", ("r",), tuple(f"l{p}" for p in range(lanes))),
                       [[(t, 0) for t in refs]], [], [], None)[0]
    grown = [[t for t, _ in grow([t for t, _ in lane])] for lane in forked]
    direct = [t for t, _ in grow(refs)]
    return refs, grown, depth, direct


@settings(max_examples=80, deadline=None)
@given(joined_lanes(), st.integers(0, 9))
def test_random_joins_agree_and_restore_the_unforked_stream(case, seed):
    order, lanes, depth, direct = case
    run_both("join", [order] + lanes, seed=seed, depth=depth)
    block = Block("j", "join", tuple(f"in{i}" for i in range(len(lanes) + 1)), ("out",),
                  {"depth": depth})
    merged = run_block(block, [[(t, 0) for t in s] for s in [order] + lanes], [], [], None)[0][0]
    assert [token_key(t) for t, _ in merged] == [token_key(t) for t in direct]


def run_in_pieces(block_kind, inputs, n_out, tensors=(), outputs=(), arch=None, seed=0, **attrs):
    """Runs one block of the chunked engine on its inputs fed in random pieces (random stamps,
    boundaries anywhere, each input cut on its own) and checks it against the reference block:
    tokens and stamps, final clock, every statistic and the writer's sink."""
    from fuseflow.sim.engines.fast_chunked import _PieceRunner

    rng = np.random.default_rng(seed)
    streams = [stream(s) if isinstance(s, str) else s for s in inputs]
    top = 12 + 2 * max(map(len, streams), default=0)
    stamped = [[(t, int(rng.integers(0, top))) for t in s] for s in streams]
    if seed % 2:
        stamped = [list(zip(s, np.cumsum(rng.integers(0, 4, len(s))).tolist())) for s in streams]
    block = Block("b", block_kind, tuple(f"in{i}" for i in range(len(streams))),
                  tuple(f"out{i}" for i in range(n_out)), attrs)
    want, ref_ctx = run_block(block, stamped, tensors, outputs, arch)
    ctx, _, _ = _context(block, tensors, outputs, arch)
    runner = _PieceRunner(block, ctx, None)
    arrays = [from_tokens([t for t, _ in s], [x for _, x in s]) for s in stamped]
    cuts = [sorted(set(rng.integers(0, len(a) + 1, 3).tolist()) | {0, len(a)}) for a in arrays]
    got = [[] for _ in range(n_out)]
    for step in range(4):
        for i, (a, c) in enumerate(zip(arrays, cuts)):
            lo, hi = (c[step], c[step + 1]) if step + 1 < len(c) else (len(a), len(a))
            if hi > lo:
                runner.feed(i, a.head(hi).tail(lo))
        if step == 3:
            for i in range(len(arrays)):
                runner.finished_input(i)
        for j, pieces in enumerate(runner.advance()):
            got[j] += [p for piece in pieces for p in piece.pairs()]
    assert runner.done
    runner.finish()
    for w, g in zip(want, got):
        assert [(token_key(t), s) for t, s in w] == [(token_key(t), s) for t, s in g]
    ref_ctx.stats.cycles = ref_ctx.clock
    assert ctx.clock == ref_ctx.clock
    assert ctx.stats.to_dict() == ref_ctx.stats.to_dict()
    sink = ctx.sink.tokens() if hasattr(ctx.sink, "tokens") else list(ctx.sink)  # Stream, DenseLevelSink
    assert [token_key(t) for t in sink] == [token_key(t) for t in ref_ctx.sink]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind,inputs,n_out,kw,attrs", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_blocks_fed_in_pieces_agree(kind, inputs, n_out, kw, attrs, seed):
    run_in_pieces(kind, inputs, n_out, seed=seed, **kw, **attrs)


def test_chunking_options_are_validated():
    from fuseflow.sim.engines import Chunking

    for bad in (0, -1, 1.5, True, "4G"):
        with pytest.raises(ValueError, match="memory_budget must be a positive integer or None"):
            Chunking(memory_budget=bad)
        with pytest.raises(ValueError, match="chunk_tokens must be a positive integer or None"):
            run(spmv_graph(), spmv_inputs(), engine="fast", chunk_tokens=bad)
    assert Chunking(memory_budget=None).stream_tokens() is None


def test_a_run_over_its_budget_is_redone_in_chunks_with_the_same_results(caplog):
    from sim_helpers import assert_same_results

    want = run(spmv_graph(), spmv_inputs(), engine="reference", trace=True)
    with caplog.at_level("INFO", logger="fuseflow.sim.engines"):
        got = run(spmv_graph(), spmv_inputs(), engine="fast", trace=True, memory_budget=64)
    assert "simulating it in chunks of the outermost loop" in caplog.text
    assert "rounds over 3 outer coordinates" in caplog.text
    assert_same_results(want, got, trace=True)
    caplog.clear()
    with caplog.at_level("INFO", logger="fuseflow.sim.engines"):
        assert_same_results(want, run(spmv_graph(), spmv_inputs(), engine="fast", trace=True), trace=True)
    assert "chunks" not in caplog.text  # within the default budget: whole streams


def test_a_chunked_run_leaves_no_cycle_holding_its_streams():
    """A chunked run's block runners (and the stream pieces they hold) are freed when the run
    returns, without waiting for the cycle collector: on the published workloads a cycle
    through them kept several GB alive into the next kernel and the check against PyTorch."""
    import gc

    from fuseflow.sim.engines import fast_chunked

    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        run(spmv_graph(), spmv_inputs(), engine="fast", memory_budget=64)
        left = [o for o in gc.get_objects() if isinstance(o, fast_chunked._Runner)]
    finally:
        if enabled:
            gc.enable()
    assert not left, f"{len(left)} runners outlived the run"


def test_windows_grow_from_one_coordinate_and_follow_the_bytes_held():
    from fuseflow.sim.engines.fast_chunked import _Windows

    w = _Windows(target=1000, byte_target=10_000)
    assert w.next(0, 0) == 1                      # the first window: one outer coordinate
    assert w.next(10, 100) == 1 + 4               # far below both targets: 4x, no more
    assert w.next(1000, 5_000) - 5 == 4           # tokens on target, bytes half: tokens rule
    assert w.next(100, 40_000) - 9 == 1           # 4x the bytes: a quarter of the width
    assert _Windows(target=1000).next(0) == 1     # no byte target: tokens alone


def test_a_budget_bounds_the_stream_bytes_a_chunked_round_holds(monkeypatch):
    """Under a budget, a chunked run's rounds hold about the budget's stream share at once
    (after the first windows grow to it), and the results stay the reference's."""
    import functools

    from sim_helpers import compiled

    from fuseflow.kernels import KERNELS
    from fuseflow.sim import engines
    from fuseflow.sim.engines import fast_chunked

    budget = 1 << 20
    made = []

    class Recording(fast_chunked._Windows):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    inputs = KERNELS["spmm"].inputs(0.5, seed=3, scale=8)
    model = compiled("spmm", 8)
    want = model.simulate(*inputs, engine="reference")
    monkeypatch.setattr(fast_chunked, "_Windows", Recording)
    # a share small enough that the bytes, not the stream length, must size the windows
    monkeypatch.setattr(fast_chunked, "STREAM_BYTES_SHARE", 1 / 16)
    monkeypatch.setattr(engines, "run", functools.partial(engines.run, memory_budget=budget))
    got = model.simulate(*inputs, engine="fast")
    assert want.cycles == got.cycles
    for a, b in zip(want.outputs, got.outputs):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    assert made, "the budget did not make the run chunked"
    share = fast_chunked.STREAM_BYTES_SHARE * budget
    for windows in made:
        assert windows.byte_target == int(share)
        assert len(windows.peaks) > 4
        assert max(windows.peaks) <= 2 * share, windows.peaks


def _level_piece(tokens):
    return from_tokens(tokens, [0] * len(tokens))


@pytest.mark.parametrize("cuts", [(0, 9), (0, 1, 9), (0, 3, 4, 8, 9), tuple(range(10))])
def test_a_dense_level_sink_keeps_only_the_stops_of_a_level_in_storage_order(cuts):
    from fuseflow.sim.engines.fast_write import DenseLevelSink
    from fuseflow.sim.tokens import Stop

    tokens = [0, 1, Stop(0), 0, 1, Stop(0), 0, 1, Stop(1)]     # 3 fibers of a level of size 2
    sink = DenseLevelSink(2)
    for lo, hi in zip(cuts, cuts[1:]):
        sink.add(_level_piece(tokens[lo:hi]))
    assert sink.in_storage_order and len(sink) == 9
    assert sum(len(c) for c in sink.stop_codes) == 3          # the coordinates are not kept
    assert [token_key(t) for t in sink.tokens()] == [token_key(t) for t in tokens]


def test_a_dense_level_sink_out_of_storage_order_keeps_every_token():
    from fuseflow.sim.engines.fast_write import DenseLevelSink
    from fuseflow.sim.tokens import Stop

    tokens = [0, 1, Stop(0), 1, 0, Stop(0), 0, Stop(1)]
    sink = DenseLevelSink(2)
    sink.add(_level_piece(tokens[:4]))
    sink.add(_level_piece(tokens[4:]))
    assert not sink.in_storage_order and len(sink) == len(tokens)
    assert [token_key(t) for t in sink.tokens()] == [token_key(t) for t in tokens]


def test_one_outer_coordinate_longer_than_the_budget_runs_in_bounded_pieces(monkeypatch):
    """An outer coordinate whose inner loops expand to many times the chunk target (two rows
    of A, each spread over all of B's 64 columns) is split inside the coordinate: no block
    emits more than about the target per piece (the scanners' pieces are cut to fit), and the
    results and cycles stay the reference's."""
    import functools

    import fuseflow
    from fuseflow.kernels import KERNELS, Kernel
    from fuseflow.sim import engines
    from fuseflow.sim.engines import fast_chunked

    wide = Kernel("wide_spmm", KERNELS["spmm"].module, ((2, 24), (24, 64)), ("csr", "dense"))
    inputs = wide.inputs(0.5, seed=5)
    model = fuseflow.compile(wide.module(), inputs)
    want = model.simulate(*inputs, engine="reference")
    budget = 8192  # a chunk target of 64 tokens per stream piece
    target = fast_chunked.Chunking(memory_budget=budget).stream_tokens() // 2
    pieces: list[int] = []
    run_piece = fast_chunked._PieceRunner._run

    def recording(self, piece):
        outs = run_piece(self, piece)
        pieces.append(max((len(o) for o in outs), default=0))
        return outs

    monkeypatch.setattr(fast_chunked._PieceRunner, "_run", recording)
    monkeypatch.setattr(engines, "run", functools.partial(engines.run, memory_budget=budget))
    got = model.simulate(*inputs, engine="fast")
    assert want.cycles == got.cycles
    for a, b in zip(want.outputs, got.outputs):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    assert sum(pieces) > 10 * target               # the run is many times the target
    fiber = 64 + 2                                 # one fiber of B's columns and its stops
    assert max(pieces) <= target + fiber, sorted(pieces)[-5:]


@pytest.mark.parametrize("name", ["spmm", "spgemm", "spmm_coo"])
@pytest.mark.parametrize("chunk_tokens", [1, 3])
def test_an_accumulator_cut_inside_a_reduction_carries_its_entries_exactly(name, chunk_tokens,
                                                                           monkeypatch):
    """With tiny chunks an order-1 sparse accumulator folds its input inside a reduction (no
    flushing stop yet) and carries the entries into the next piece: values, cycles and every
    block's statistics stay the reference's."""
    from sim_helpers import simulate_both

    from fuseflow.kernels import KERNELS
    from fuseflow.sim.engines import fast_chunked

    folds = []
    real_outputs = fast_chunked._AccumulatorRunner._real_outputs

    def counting(self, piece, full):
        folds.append(isinstance(piece, fast_chunked._FoldPiece))
        return real_outputs(self, piece, full)

    monkeypatch.setattr(fast_chunked._AccumulatorRunner, "_real_outputs", counting)
    simulate_both(name, KERNELS[name].inputs(0.5, seed=1, scale=2), scale=2, chunk_tokens=chunk_tokens)
    assert sum(folds) > 0 and not all(folds)


def test_an_accumulators_leftover_joins_only_the_next_pieces_first_reduction(monkeypatch):
    """An order-1 accumulator's open reduction after its last flush, followed by a long piece,
    is joined with that piece up to its first flush only; the rest of the piece, a view of its
    arrays, is cut alone next. Values, cycles and every block's statistics stay the
    reference's."""
    from sim_helpers import simulate_both

    from fuseflow.kernels import KERNELS
    from fuseflow.sim.engines import fast_chunked

    joined = []
    leftover_joined = fast_chunked._AccumulatorRunner._reduction_joined

    def recording(self):
        split = leftover_joined(self)
        if split is not None:
            streams, rest = split
            joined.append(all(r and r[0].base.base is not None for r in rest))  # views
        return split

    monkeypatch.setattr(fast_chunked._AccumulatorRunner, "_reduction_joined", recording)
    simulate_both("spgemm", KERNELS["spgemm"].inputs(0.5, seed=1), chunk_tokens=4)
    assert joined and all(joined), joined


@pytest.mark.parametrize("name", ["spmm", "spgemm"])
def test_an_accumulator_folds_a_long_first_piece_without_joining_the_queue(name, monkeypatch):
    """An order-1 accumulator whose first queued pieces hold no flush, with more queued behind
    them, folds them alone (no copy of the whole queue) before the round's budget. Values,
    cycles and every block's statistics stay the reference's."""
    from sim_helpers import simulate_both

    from fuseflow.kernels import KERNELS
    from fuseflow.sim.engines import fast_chunked

    alone = []
    fold_alone = fast_chunked._AccumulatorRunner._fold_alone

    def recording(self, streams, n):
        taken = fold_alone(self, streams, n)
        alone.append(taken)
        return taken

    monkeypatch.setattr(fast_chunked._AccumulatorRunner, "_fold_alone", recording)
    monkeypatch.setattr(fast_chunked, "FRONT_TOKENS", 2)  # pieces this long are cut alone, below the budget
    simulate_both(name, KERNELS[name].inputs(0.5, seed=1, scale=2), scale=2, chunk_tokens=64)
    assert any(alone), alone

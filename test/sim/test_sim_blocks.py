"""Every primitive against small hand-written token streams (expected streams by hand)."""

import numpy as np
import pytest
import torch

from fuseflow.sim.formats import FiberTree, TensorFormat
from fuseflow.sim.tokens import StreamError, format_stream, stream
from sim_helpers import out1, run1

# B (3x4, CSR) of the worked SpMV example: pos=[0,2,2,5], crd=[1,3,0,1,3], vals 1..5.
B = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 4, 0, 5]], dtype=np.float32)
B_CSR = FiberTree.from_dense(B, TensorFormat.csr(B.shape))


# -- root and scanners -----------------------------------------------------------------------

def test_root_emits_zero_then_done_at_one_and_two():
    texts, stamps, ctx = run1("root", [])
    assert texts == ["0 D"] and stamps == [[1, 2]] and ctx.clock == 2


def test_compressed_scanner_reproduces_worked_example():
    crd, ref = out1("scan", ["0 1 2 S0 D"], n_out=2, tensors=[B_CSR], tensor=0, level=1)
    assert crd == "1 3 S0 S0 0 1 3 S1 D"
    assert ref == "0 1 S0 S0 2 3 4 S1 D"


def test_scanner_cost_is_fiber_length_plus_one():
    texts, stamps, ctx = run1("scan", ["0 1 2 S0 D"], n_out=2, tensors=[B_CSR], tensor=0, level=1)
    # fibers of 2, 0 and 3 coordinates cost 3 + 1 + 4, then D costs 1.
    assert stamps[0] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert ctx.clock == 9
    assert ctx.stats.crd_reads == 5 and ctx.stats.ref_reads == 6


def test_scanner_closing_stop_waits_for_next_input_token():
    ref = [(0, 0), (1, 10), (stream("S0")[0], 10), (stream("D")[0], 10)]
    texts, stamps, ctx = run1("scan", [ref], n_out=2, tensor=None, size=2)
    assert texts[0] == "0 1 S0 0 1 S1 D"
    assert stamps[0] == [1, 2, 11, 12, 13, 14, 15]


def test_dense_scanner_bare_stops_and_empty_token():
    crd, ref = out1("scan", ["0 S0 N S1 S0 D"], n_out=2, tensor=None, size=2)
    assert crd == "0 1 S1 N S2 S1 D"
    assert ref == "0 1 S1 N S2 S1 D"


def test_dense_scanner_child_references():
    crd, ref = out1("scan", ["0 2 S0 D"], n_out=2, tensor=None, size=3)
    assert crd == "0 1 2 S0 0 1 2 S1 D"
    assert ref == "0 1 2 S0 6 7 8 S1 D"


def test_coo_is_scanned_as_its_deduplicated_equivalent():
    coo = FiberTree.from_dense(B, TensorFormat.coo(B.shape))
    crd_i, ref_i = out1("scan", ["0 D"], n_out=2, tensors=[coo], tensor=0, level=0)
    assert (crd_i, ref_i) == ("0 2 S0 D", "0 1 S0 D")
    crd_j, ref_j = out1("scan", [ref_i], n_out=2, tensors=[coo], tensor=0, level=1)
    assert crd_j == "1 3 S0 0 1 3 S1 D"
    assert ref_j == "0 1 S0 2 3 4 S1 D"


def test_scanner_rejects_format_mismatch():
    with pytest.raises(StreamError, match="scans a 'dense' level"):
        out1("scan", ["0 D"], n_out=2, tensors=[B_CSR], tensor=0, level=1, format="dense")


def test_locate_computes_dense_references():
    ref, crd = out1("locate", ["1 3 S0 2 S1 D", "5 7 S0 D"], n_out=2, tensor=None, size=4)
    assert ref == "21 23 S0 30 S1 D"
    assert crd == "1 3 S0 2 S1 D"


def test_locate_empty_and_bare_fibers():
    assert out1("locate", ["N S0 D", "2 D"], n_out=2, tensor=None, size=4) == ["N S0 D", "N S0 D"]
    ref, crd = out1("locate", ["S1 3 S1 D", "S0 1 S0 D"], n_out=2, tensor=None, size=4)
    assert ref == "S1 7 S1 D" and crd == "S1 3 S1 D"


# -- repeat ----------------------------------------------------------------------------------

def test_repsiggen():
    assert out1("repsiggen", ["1 3 S0 S0 0 N S1 D"]) == "R R S0 S0 R R S0 D"


@pytest.mark.parametrize("ref, sig, expected", [
    ("0 1 S0 2 S0 3 S1 D", "R R R S R R R S R S R R S D", "0 0 0 S0 1 1 1 S1 2 S1 3 3 S2 D"),
    ("0 1 2 S0 D", "R R S R S R S D", "0 0 S0 1 S0 2 S1 D"),
    ("0 S0 1 S1 D", "S R S D", "S1 1 S2 D"),
    ("0 S0 S1 D", "R R S S D", "0 0 S1 S2 D"),
])
def test_repeat(ref, sig, expected):
    assert out1("repeat", [ref, sig]) == expected


def _structure(text):
    return " ".join(t if t[0] in "SD" else "x" for t in text.split())


@pytest.mark.parametrize("refs", ["0 1 2 S0 D", "0 S0 1 2 S1 D", "S0 0 1 S1 S1 2 S2 D", "1 S0 S0 2 S1 D"])
def test_repeat_of_repsiggen_has_the_stop_structure_of_the_scanned_stream(refs):
    coo = FiberTree.from_dense(np.array([[1, 0, 2], [0, 0, 0], [0, 3, 0]], np.float32),
                               TensorFormat.csr((3, 3)))
    crd, _ = out1("scan", [refs], n_out=2, tensors=[coo], tensor=0, level=1)
    sig = out1("repsiggen", [crd])
    repeated = out1("repeat", [refs, sig])
    assert _structure(repeated) == _structure(crd)


# -- joiners ---------------------------------------------------------------------------------

def test_intersect_worked_example_and_cost():
    texts, _, ctx = run1("intersect", ["1 3 S0 S0 0 1 3 S1 D", "1 3 S0 1 3 S0 1 3 S1 D",
                                       "0 1 S0 S0 2 3 4 S1 D", "0 1 S0 0 1 S0 0 1 S1 D"], n_out=3,
                         ref_groups=[1, 1])
    assert texts == ["1 3 S0 S0 1 3 S1 D", "0 1 S0 S0 3 4 S1 D", "0 1 S0 S0 0 1 S1 D"]
    assert ctx.clock == 3 + 3 + 4 + 1  # |A u B| + 1 per fiber pair, then D


def test_intersect_skips_empty_token_and_keeps_ref_groups():
    texts, _, ctx = run1("intersect", ["N S0 2 S1 D", "4 S0 2 S1 D", "N S0 5 S1 D", "7 S0 8 S1 D"],
                         n_out=3, ref_groups=[1, 1])
    assert texts == ["S0 2 S1 D", "S0 5 S1 D", "S0 8 S1 D"]
    assert ctx.clock == 6
    texts = out1("intersect", ["1 2 S0 D", "2 3 S0 D", "10 20 S0 D", "11 21 S0 D", "30 31 S0 D"],
                 n_out=4, ref_groups=[2, 1])
    assert texts == ["2 S0 D", "20 S0 D", "21 S0 D", "30 S0 D"]


def test_union_emits_empty_for_missing_operands():
    texts, _, ctx = run1("union", ["1 3 S0 D", "2 3 S0 D", "10 30 S0 D", "20 31 S0 D"], n_out=3,
                         ref_groups=[1, 1])
    assert texts == ["1 2 3 S0 D", "10 N 30 S0 D", "N 20 31 S0 D"]
    assert ctx.clock == 5


def test_union_skips_empty_crd_and_three_way():
    assert out1("union", ["N S0 D", "4 S0 D", "N S0 D", "7 S0 D"], n_out=3) == ["4 S0 D", "N S0 D", "7 S0 D"]
    texts = out1("union", ["0 S0 S1 D", "S0 1 S1 D", "0 S0 1 S1 D", "5 S0 S1 D", "S0 6 S1 D", "7 S0 8 S1 D"],
                 n_out=4, ref_groups=[1, 1, 1])
    assert texts == ["0 S0 1 S1 D", "5 S0 N S1 D", "N S0 6 S1 D", "7 S0 8 S1 D"]


def test_joiner_rejects_different_stop_structure():
    with pytest.raises(StreamError, match="different stop structure"):
        out1("intersect", ["1 S0 D", "1 S1 D", "0 S0 D", "0 S1 D"], n_out=3)


# -- array, alu, reduce ----------------------------------------------------------------------

def test_array_loads_values():
    vec = FiberTree.from_dense(np.array([1.5, 2.5, 3.5], np.float32))
    texts, _, ctx = run1("array", ["0 2 N S0 1 S1 D"], tensors=[vec], tensor=0)
    assert texts == ["1.5 3.5 N S0 2.5 S1 D"]      # N passes on: it annihilates in the ALU
    assert ctx.stats.val_reads == 4 - 1


def test_alu_binary_with_missing_operands():
    assert out1("alu", ["1.5 2.0 S0 N S1 D", "2.0 N S0 3.0 S1 D"], op="mul") == "3.0 0.0 S0 0.0 S1 D"
    assert out1("alu", ["N 2.0 S0 D", "3.0 N S0 D"], op="sub") == "-3.0 2.0 S0 D"


def test_alu_absent_entries_annihilate():
    """A product with N is 0.0 (not 0 * inf or 0 * NaN); other ops read N as 0.0, a quotient
    too (0 / 0 is NaN, as PyTorch computes it)."""
    assert out1("alu", ["N 2.0 N S0 D", "0.0 N N S0 D"], op="div") == "nan inf nan S0 D"
    assert out1("alu", ["N inf S0 D", "inf N S0 D"], op="mul") == "0.0 0.0 S0 D"
    assert out1("alu", ["N N S0 D", "0.0 N S0 D"], op="mul") == "0.0 0.0 S0 D"
    assert out1("alu", ["N S0 D", "N S0 D"], op="add") == "0.0 S0 D"


def test_alu_unary_and_scalar_ops():
    assert out1("alu", ["-1.0 2.0 S0 D"], op="relu") == "0.0 2.0 S0 D"
    assert out1("alu", ["0.25 N S0 D"], op="scalar_rsub", scalar=1.0) == "0.75 1.0 S0 D"
    assert out1("alu", ["4.0 S0 D"], op="scalar_rdiv", scalar=1.0) == "0.25 S0 D"
    assert out1("alu", ["4.0 S0 D"], op="scalar_div", scalar=2.0) == "2.0 S0 D"


def test_alu_rejects_mismatched_control_and_unknown_op():
    with pytest.raises(StreamError, match="different control structure"):
        out1("alu", ["1.0 S0 D", "1.0 S1 D"], op="add")
    with pytest.raises(StreamError, match="valid ops: add, sub"):
        out1("alu", ["1.0 D"], op="pow")


EXACT = ["add", "sub", "mul", "div", "max", "min", "neg", "relu", "rsqrt"] + \
    ["scalar_add", "scalar_sub", "scalar_rsub", "scalar_mul", "scalar_div", "scalar_rdiv", "scalar_max", "scalar_min"]
TORCH = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "max": torch.maximum,
    "min": torch.minimum, "neg": torch.neg, "relu": torch.relu, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "exp": torch.exp, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
    "gelu": torch.nn.functional.gelu, "scalar_add": lambda x, s: x + s, "scalar_sub": lambda x, s: x - s,
    "scalar_rsub": lambda x, s: s - x, "scalar_mul": lambda x, s: x * s, "scalar_div": lambda x, s: x / s,
    "scalar_rdiv": lambda x, s: s / x, "scalar_max": lambda x, s: torch.clamp(x, min=s),
    "scalar_min": lambda x, s: torch.clamp(x, max=s),
}


@pytest.mark.parametrize("op", list(TORCH))
def test_alu_matches_torch_float32(op):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(16) * 3).astype(np.float32)
    b = (rng.standard_normal(16) * 3).astype(np.float32)
    if op in ("sqrt", "rsqrt"):
        a = np.abs(a)
    toks = list(a) + stream("S0 D")
    ins = [toks, list(b) + stream("S0 D")] if op in ("add", "sub", "mul", "div", "max", "min") else [toks]
    texts, _, _ = run1("alu", ins, op=op, scalar=0.75)
    got = np.array([float(t) for t in texts[0].split()[:-2]], np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    if op.startswith("scalar"):
        want = TORCH[op](ta, 0.75)
    elif len(ins) == 2:
        want = TORCH[op](ta, tb)
    else:
        want = TORCH[op](ta)
    if op in EXACT:
        np.testing.assert_array_equal(got, want.numpy())
    else:
        np.testing.assert_allclose(got, want.numpy(), rtol=2e-6, atol=1e-6)


def test_reduce_sum_worked_example():
    assert out1("reduce", ["1.0 2.0 S0 S0 3.0 4.0 S1 D"]) == "3.0 0.0 7.0 S0 D"


def test_reduce_max_resets_per_fiber_and_empty_gives_zero():
    assert out1("reduce", ["-3.0 -1.0 S0 S0 -2.0 S1 D"], kind="max") == "-1.0 0.0 -2.0 S0 D"


def test_reduce_reads_absent_entries_as_zero():
    """An array's N (an absent entry) is a value 0.0 to a reducer, one step each: a max over a
    full space counts the absent zeros."""
    texts, stamps, ctx = run1("reduce", ["1.0 N N S0 D"])
    assert texts == ["1.0 D"] and stamps == [[4, 5]] and ctx.clock == 5
    assert ctx.stats.ops == 3
    assert out1("reduce", ["-1.0 N -2.0 S0 N S0 -3.0 S1 D"], kind="max") == "0.0 0.0 -3.0 S0 D"


def test_reduce_accumulates_float32_in_arrival_order():
    vals = [np.float32(1e8), np.float32(1.0), np.float32(-1e8)]
    texts, _, _ = run1("reduce", [vals + stream("S0 D")])
    assert texts == ["0.0 D"]  # (1e8 + 1) rounds to 1e8 in float32


# -- sparse accumulator ----------------------------------------------------------------------

def test_spacc_order1_flushes_sorted_per_reduced_fiber():
    texts, stamps, ctx = run1("spacc", ["0 2 S0 S0 1 2 S1 S2 D", "1.0 2.0 S0 S0 4.0 3.0 S1 S2 D"],
                              n_out=2, order=1)
    assert texts == ["0 1 2 S0 S1 D", "1.0 4.0 5.0 S0 S1 D"]
    # one step per (crd, val) pair, stops included; the flush is stamped with its step.
    assert stamps[0] == [7, 7, 7, 7, 8, 9]
    assert ctx.clock == 9 and ctx.stats.ops == 4


def test_spacc_order2():
    texts = out1("spacc", ["0 1 S0 0 S1 D", "1 S0 0 S1 1 2 S2 D", "1.0 S0 2.0 S1 3.0 4.0 S2 D"],
                 n_out=3, order=2)
    assert texts == ["0 1 S0 D", "1 2 S0 0 S1 D", "4.0 4.0 S0 2.0 S1 D"]


def test_spacc_order2_with_empty_outer_fiber_and_two_reductions():
    # Reduced variable r under an outer variable: two r fibers; in the second, the only r
    # coordinate has an empty crds[0] fiber.
    texts = out1("spacc", ["3 S1 S2 D", "5 S2 S3 D", "2.0 S2 S3 D"], n_out=3, order=2)
    assert texts == ["3 S0 S1 D", "5 S1 S2 D", "2.0 S1 S2 D"]


# -- coordinate dropper and hold -------------------------------------------------------------

@pytest.mark.parametrize("inner, outer, want_inner, want_outer", [
    ("1 S0 S1 D", "0 1 S0 D", "1 S1 D", "0 S0 D"),
    ("1 S0 1 S0 S0 1 S1 D", "0 1 2 3 S0 D", "1 S0 1 S0 1 S1 D", "0 1 3 S0 D"),
    ("S0 S1 5 S2 D", "0 1 S0 2 S1 D", "S1 5 S2 D", "S0 2 S1 D"),
    ("S1 7 S2 D", "S0 3 S1 D", "S1 7 S2 D", "S0 3 S1 D"),
    ("S0 4 S0 S1 D", "0 1 2 S0 D", "4 S1 D", "1 S0 D"),
])
def test_crddrop(inner, outer, want_inner, want_outer):
    texts, _, ctx = run1("crddrop", [inner, outer], n_out=2)
    assert texts == [want_inner, want_outer]
    assert ctx.clock == len(outer.split())  # one step per outer token


@pytest.mark.parametrize("inner, outer, want", [
    ("0 2 S0 2 S0 2 S1 D", "0 1 2 S0 D", "0 0 S0 1 S0 2 S1 D"),
    ("0 2 3 S0 0 2 3 S1 0 S1 2 3 S2 D", "0 2 S0 3 S0 4 S1 D", "0 0 0 S0 2 2 2 S1 3 S1 4 4 S2 D"),
    ("S0 5 S1 S2 D", "0 1 S0 S1 D", "S0 1 S1 S2 D"),
])
def test_crdhold(inner, outer, want):
    assert out1("crdhold", [inner, outer], n_out=2) == [inner, want]


# -- writers ---------------------------------------------------------------------------------

def test_level_writer_counts_compressed_writes():
    texts, _, ctx = run1("level_write", ["1 3 S0 S0 0 1 3 S1 D"], n_out=0,
                         outputs=[TensorFormat.csr((3, 4))], result=0, level=1)
    assert format_stream(ctx.sink) == "1 3 S0 S0 0 1 3 S1"
    assert (ctx.stats.crd_writes, ctx.stats.ref_writes, ctx.clock) == (5, 3, 9)


def test_value_writer():
    _, _, ctx = run1("value_write", ["1.0 N S0 2.0 S1 D"], n_out=0, outputs=[TensorFormat.csr((3, 4))], result=0)
    assert ctx.sink == [1.0, 0.0, 2.0] and ctx.stats.val_writes == 3


# -- fork, join, broadcast -------------------------------------------------------------------

def test_broadcast_copies_with_latency_one_and_no_interval():
    texts, stamps, ctx = run1("broadcast", ["0 1 S0 D"], n_out=2)
    assert texts == ["0 1 S0 D", "0 1 S0 D"] and stamps == [[1, 1, 1, 1]] * 2 and ctx.clock == 0


def test_fork_deals_round_robin_across_fibers():
    assert out1("fork", ["0 1 2 S0 3 S1 D"], n_out=2) == ["0 2 S0 S1 D", "1 S0 3 S1 D"]


def test_join_depth0_restores_fork_order():
    order = "0 1 2 S0 3 S1 D"
    lanes = out1("fork", [order], n_out=2)
    assert out1("join", [order] + lanes, depth=0) == order


@pytest.mark.parametrize("refs", ["0 1 2 S0 D", "0 1 2 3 S0 D", "S0 0 1 S1 D", "0 S0 1 2 3 S1 D", "0 S0 S0 1 S1 D"])
def test_join_depth1_merges_scanned_lanes_in_order(refs):
    lanes = out1("fork", [refs], n_out=2)
    scanned = [out1("scan", [lane], n_out=2, tensor=None, size=2)[0] for lane in lanes]
    direct = out1("scan", [refs], n_out=2, tensor=None, size=2)[0]
    assert out1("join", [refs] + scanned, depth=1) == direct


@pytest.mark.parametrize("refs", ["0 1 S0 D", "1 S0 0 1 S1 D", "0 1 2 S0 D", "1 1 1 S0 D"])
@pytest.mark.parametrize("lanes", [2, 3])
def test_join_depth1_restores_empty_units_anywhere(refs, lanes):
    # Row 1 of B is empty: a lane whose last unit of a fiber is that row shows the same bare
    # stop as a lane without a unit; the order tells them apart.
    forked = out1("fork", [refs], n_out=lanes)
    scanned = [out1("scan", [lane], n_out=2, tensors=[B_CSR], tensor=0, level=1)[0]
               for lane in forked]
    direct = out1("scan", [refs], n_out=2, tensors=[B_CSR], tensor=0, level=1)[0]
    assert out1("join", [refs] + scanned, depth=1) == direct


def test_join_equals_published_join_on_even_lanes():
    # Every lane gets two units per fiber: stops of lane 0 are lowered to S0.
    assert out1("join", ["0 1 2 3 S0 D", "1 S0 2 S1 D", "3 S0 4 S1 D"]) == "1 S0 3 S0 2 S0 4 S1 D"


def test_join_costs_one_step_per_lane_token():
    # Units 1 | 3 | 2 (lanes 0, 1, 0), then the fiber close: lane tokens 1 S0 3 S1 2 S1 and the
    # three D, one step each; the merged S1 costs nothing.
    texts, stamps, ctx = run1("join", ["0 1 2 S0 D", "1 S0 2 S1 D", "3 S1 D"], depth=1)
    assert texts == ["1 S0 3 S0 2 S1 D"]
    assert ctx.stats.steps == 8 and ctx.clock == 8
    assert stamps == [[1, 3, 3, 5, 5, 7, 8]]


@pytest.mark.parametrize("inputs, message", [
    (["0 S0 D", "1 S1 D", "S0 D"], "holds S0 where the order closes"),
    (["0 S0 D", "1 S1 D", "2 S1 D"], "holds 2 where the order closes"),
    (["0 1 S0 D", "1 S1 D", "3 S0 D"], "closed its last unit with S0"),
    (["0 1 2 S0 D", "1 S1 2 S1 D", "3 S1 D"], "closed the fiber with S1 before its last unit"),
])
def test_join_reports_lanes_the_order_does_not_fit(inputs, message):
    with pytest.raises(StreamError, match=message):
        out1("join", inputs, depth=1)


def test_spacc_drops_keys_with_empty_coordinates_and_checks_lengths():
    assert out1("spacc", ["N 1 S1 D", "5.0 2.0 S1 D"], n_out=2, order=1) == ["1 S0 D", "2.0 S0 D"]
    with pytest.raises(StreamError, match=r"crds\[0\] ended before the values"):
        out1("spacc", ["D", "1 S1 D", "2.0 S1 D"], n_out=3, order=2)


def test_spacc_accumulates_absent_values_as_zero():
    """A value N (an array's absent entry) at a coordinate accumulates 0.0 there, as the ALU
    reads it: the key is kept (its value 0.0)."""
    assert out1("spacc", ["0 1 0 S1 D", "N N 2.0 S1 D"], n_out=2, order=1) == ["0 1 S0 D",
                                                                               "2.0 0.0 S0 D"]


def test_spacc_drops_a_reducers_zero_for_a_fiber_that_does_not_exist():
    # A row sum over (block column, in-block column) with an empty first block row: the
    # in-block rows of that block row are a bare S1, the reducer below still emits 0.0.
    texts, stamps, ctx = run1("spacc", ["S1 0 1 S2 D", "0.0 S1 3.0 4.0 S2 D"], n_out=2, order=1)
    assert texts == ["S0 0 1 S1 D", "S0 3.0 4.0 S1 D"]
    assert ctx.clock == 6 and ctx.stats.ops == 2          # the dropped value costs one step
    with pytest.raises(StreamError, match="does not match inner coordinate S1"):
        out1("spacc", ["S1 0 S2 D", "2.0 S1 3.0 S2 D"], n_out=2, order=1)


def test_reduce_rejects_unknown_kind():
    with pytest.raises(StreamError, match="valid kinds: sum, max"):
        out1("reduce", ["1.0 S0 D"], kind="mean")


@pytest.mark.parametrize("refs", ["0 1 2 S0 D", "0 1 2 3 4 S0 D", "0 S0 1 2 S1 D"])
@pytest.mark.parametrize("lanes", [2, 3])
def test_join_depth2_merges_two_level_units(refs, lanes):
    def scan2(stream_text):
        crd_i, ref_i = out1("scan", [stream_text], n_out=2, tensor=None, size=2)
        return out1("scan", [ref_i], n_out=2, tensor=None, size=3)[0]
    forked = out1("fork", [refs], n_out=lanes)
    assert out1("join", [refs] + [scan2(lane) for lane in forked], depth=2) == scan2(refs)

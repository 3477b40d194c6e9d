"""Copy unification in the fused index notation (passes/lowering/copies.py)."""

from fuseflow.passes.lowering.copies import unify_copies
from fuseflow.passes.lowering.einsum import Const, KernelExpr, Op, Reduce, Root, Use


def _row_sum(rid, uid, var):
    """sum_{var} T0[d0, var]"""
    return Reduce(rid, "sum", (var,), Use(uid, 0, (0, 1), ("d0", var), True), None, ("d0",))


def _kernel(expr, sizes):
    uses = []

    def collect(e):
        if isinstance(e, Use):
            uses.append(e)
        elif isinstance(e, Op):
            for a in e.args:
                collect(a)
        elif isinstance(e, Reduce):
            collect(e.body)

    collect(expr)
    return KernelExpr([Root(expr, ("d0", "d1"), None, 0)], sorted(uses, key=lambda u: u.uid), sizes)


def test_copies_with_the_same_free_variables_share_their_bound_variables():
    # layernorm-like: (x[d0,d1] - mean) / mean, the mean read twice with fresh variables
    x = Use(0, 0, (0, 1), ("d0", "d1"), True)
    expr = Op("div", (Op("sub", (x, Op("div", (_row_sum(0, 1, "d2"), Const(8.0))))),
                      Op("div", (_row_sum(1, 2, "d3"), Const(8.0)))))
    unified = unify_copies(_kernel(expr, {"d0": 4, "d1": 8, "d2": 8, "d3": 8}))
    assert str(unified) == ("out0[d0,d1] = div(sub(T0[d0,d1], div(sum_{d2}(T0[d0,d2]), 8.0)), "
                            "div(sum_{d2}(T0[d0,d2]), 8.0))")
    assert sorted(unified.sizes) == ["d0", "d1", "d2"]
    # each copy keeps its own nodes: the lowering still handles them one by one
    assert sorted(r.rid for r in unified.reduces()) == [0, 1]
    assert [u.uid for u in unified.uses] == [0, 1, 2]
    assert unified.uses[2].vars == ("d0", "d2")


def test_reductions_that_differ_are_left_alone():
    # different operand, different extent, different kind: nothing to unify
    a = _row_sum(0, 0, "d2")
    b = Reduce(1, "sum", ("d3",), Use(1, 1, (0, 1), ("d0", "d3"), True), None, ("d0",))
    c = Reduce(2, "max", ("d4",), Use(2, 0, (0, 1), ("d0", "d4"), True), None, ("d0",))
    d = _row_sum(3, 3, "d5")
    expr = Op("add", (Op("add", (a, b)), Op("add", (c, d))))
    sizes = {"d0": 4, "d1": 8, "d2": 8, "d3": 8, "d4": 8, "d5": 6}
    unified = unify_copies(_kernel(expr, sizes))
    assert str(unified) == str(_kernel(expr, sizes))


def test_copies_over_different_free_variables_keep_their_own_loops():
    # x[d0,d1] * sum_{d2} T[d1,d2]  and  sum_{d3} T[d5,d3] inside a reduction over d5: the same
    # shape but over another free variable, so placed independently by the order
    inner1 = Reduce(0, "sum", ("d2",), Use(0, 0, (0, 1), ("d1", "d2"), True), None, ("d1",))
    inner2 = Reduce(1, "sum", ("d3",), Use(1, 0, (0, 1), ("d5", "d3"), True), None, ("d5",))
    outer = Reduce(2, "sum", ("d5",), Op("mul", (inner2, Use(2, 1, (0, 1), ("d0", "d5"), True))),
                   None, ("d0",))
    expr = Op("add", (inner1, outer))
    sizes = {"d0": 4, "d1": 8, "d2": 8, "d3": 8, "d5": 8}
    assert str(unify_copies(_kernel(expr, sizes))) == str(_kernel(expr, sizes))

"""Lowers one :class:`Einsum` under a dataflow order to a SAM graph.

For each index variable in order, the *iteration space* of the expression over that variable
is planned from the expression tree: a use that indexes the variable scans its next level;
``mul`` intersects its operands' spaces; an op that is non-zero where an operand is absent
(``add``, ``exp``, ``x + 1``, ``a / b`` …) unions its operands with the dense *universe* of
the variable, so results keep their PyTorch (dense) meaning. Uses that do not index the
variable are repeated over its merged coordinates. After the last variable, each use's
references load values, ALUs compute the body, reductions run innermost first (a reducer when
nothing kept lies below the reduced variable, a sparse accumulator otherwise), coordinate
droppers clean compressed output levels, and writers store the result.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.passes.lowering.builder import GraphBuilder
from fuseflow.passes.lowering.einsum import Const, Einsum, LoweringError, Op, Use

# Unary ops with f(0) == 0: their iteration space is their operand's.
ZERO_PRESERVING = {"neg", "relu", "sqrt", "tanh"}
UNION_LIKE = {"add", "sub", "max", "min"}


@dataclass(frozen=True)
class Leaf:
    use: Use


@dataclass(frozen=True)
class Universe:
    pass


@dataclass(frozen=True)
class Merge:
    kind: str          # 'intersect' | 'union'
    children: tuple


UNIVERSE = Universe()


def _apply(kind: str, args: list[float]) -> float:
    """Scalar semantics used to decide whether a node is zero where its operands are absent."""
    table = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "max": max, "min": min}
    return table[kind](*args)


def plan(expr, var: str):
    """The iteration space of ``expr`` over ``var``, or None when it does not constrain it."""
    if isinstance(expr, Use):
        return Leaf(expr) if var in expr.vars else None
    if isinstance(expr, Const):
        return None
    assert isinstance(expr, Op)
    child_plans = [plan(a, var) for a in expr.args]
    present = [p for p in child_plans if p is not None]
    if not present:
        return None
    if expr.kind == "mul":
        return _merge("intersect", present)
    if expr.kind == "div":
        if child_plans[1] is None:
            return child_plans[0]
        return _merge("union", [UNIVERSE] + present)
    if expr.kind in UNION_LIKE:
        others = [a for a, p in zip(expr.args, child_plans) if p is None]
        zero_when_absent = all(isinstance(a, Const) for a in others) and _apply(
            expr.kind, [0.0 if p is not None else a.value for a, p in zip(expr.args, child_plans)]) == 0.0
        return _merge("union", present if zero_when_absent else [UNIVERSE] + present)
    if expr.kind in ZERO_PRESERVING:
        return present[0]
    return _merge("union", [UNIVERSE] + present)


def _merge(kind: str, plans: list):
    flat = []
    for p in plans:
        for q in (p.children if isinstance(p, Merge) and p.kind == kind else (p,)):
            if q not in flat:
                flat.append(q)
    if kind == "intersect":
        flat = [p for p in flat if not isinstance(p, Universe)] or [UNIVERSE]
    if kind == "union" and any(isinstance(p, Universe) for p in flat):
        flat = [UNIVERSE] + [p for p in flat if not isinstance(p, Universe)]
    return flat[0] if len(flat) == 1 else Merge(kind, tuple(flat))


class KernelLowering:
    """Builds the streams of one Einsum under ``order`` with a GraphBuilder."""

    def __init__(self, einsum: Einsum, order: tuple[str, ...], builder: GraphBuilder):
        self.e = einsum
        self.order = order
        self.b = builder
        self.crd: dict[str, object] = {}            # merged coordinate stream per variable
        self.ref: dict[int, object] = {}            # current reference stream per use
        self.next_level: dict[int, int] = {}
        self._iteration_refs: dict[int, object] = {}

    def run(self, result: int = 0) -> None:
        b = self.b
        self.root = b.root()
        for u in self.e.uses:
            self.ref[u.uid] = self.root
            self.next_level[u.uid] = 0
        for pos, var in enumerate(self.order):
            space = plan(self.e.body, var) or UNIVERSE
            crd, refs = self._build(space, pos)
            self.crd[var] = crd
            for u in self.e.uses:
                if u.uid in refs:
                    self.ref[u.uid] = refs[u.uid]
                else:
                    self.ref[u.uid] = b.repeat(self.ref[u.uid], crd)
        vals = self._evaluate(self.e.body)
        vals, crds = self._reduce(vals)
        self._write(vals, crds, result)

    # Iteration spaces -------------------------------------------------------------------
    def _iteration_ref(self, pos: int):
        """A reference stream with one token per iteration of the first ``pos`` variables."""
        if pos not in self._iteration_refs:
            ref = self.root if pos == 0 else self.b.repeat(self._iteration_ref(pos - 1),
                                                           self.crd[self.order[pos - 1]])
            self._iteration_refs[pos] = ref
        return self._iteration_refs[pos]

    def _build(self, space, pos: int):
        """(crd, {use id: ref}) for a planned space at order position ``pos``."""
        var = self.order[pos]
        if isinstance(space, Leaf):
            u = space.use
            level_index = self.next_level[u.uid]
            if level_index >= len(u.vars) or u.vars[level_index] != var:
                raise LoweringError(self.e.loc, f"{u} takes part in several branches of the "
                                                f"iteration space over {var}; not supported yet")
            crd, ref = self.b.scan(self.ref[u.uid], u.operand, u.levels[level_index])
            self.next_level[u.uid] = level_index + 1
            return crd, {u.uid: ref}
        if isinstance(space, Universe):
            crd, _ = self.b.range_scan(self._iteration_ref(pos), self.e.sizes[var])
            return crd, {}
        parts = [self._build(child, pos) for child in space.children]
        groups = [(crd, list(refs.values())) for crd, refs in parts]
        crd, out_refs = self.b.joiner(space.kind, groups)
        uids = [uid for _, refs in parts for uid in refs]
        return crd, dict(zip(uids, out_refs))

    # Values -----------------------------------------------------------------------------
    def _evaluate(self, expr):
        b = self.b
        if isinstance(expr, Use):
            return b.array(self.ref[expr.uid], expr.operand)
        if isinstance(expr, Const) or all(isinstance(a, Const) for a in expr.args):
            raise LoweringError(self.e.loc, "a kernel whose value does not depend on any tensor "
                                            "is not supported")
        if len(expr.args) == 1:
            return b.alu(expr.kind, self._evaluate(expr.args[0]))
        lhs, rhs = expr.args
        if isinstance(rhs, Const):
            return _scalar_op(b, expr.kind, self._evaluate(lhs), rhs.value, reverse=False)
        if isinstance(lhs, Const):
            return _scalar_op(b, expr.kind, self._evaluate(rhs), lhs.value, reverse=True)
        return b.alu(expr.kind, self._evaluate(lhs), self._evaluate(rhs))

    # Reductions and writers ------------------------------------------------------------
    def _reduce(self, vals):
        live = list(self.order)
        crds = {v: self.crd[v] for v in self.order}
        kind = self.e.reduce_kind
        for var in reversed(self.order):
            if var not in self.e.reduce_vars:
                continue
            pos = live.index(var)
            below = live[pos + 1:]
            if not below:
                vals = self.b.reduce(kind, vals)
            else:
                if kind != "sum":
                    raise LoweringError(self.e.loc, "a max reduction over a non-innermost index "
                                                    "variable is not supported")
                new_crds, vals = self.b.spacc([crds[v] for v in below], vals)
                crds.update(zip(below, new_crds))
            live.remove(var)
        if self.e.init is not None:
            vals = self.b.alu("scalar_add" if kind == "sum" else "scalar_max", vals,
                              scalar=self.e.init)
        return vals, crds

    def _write(self, vals, crds, result: int) -> None:
        from fuseflow.dialects.types import storage_levels

        _, levels = storage_levels(self.e.result_type)
        streams = [crds[v] for v in self.e.out_vars]
        for lvl in range(len(streams) - 2, -1, -1):
            if levels[lvl].format != "dense":
                streams[lvl + 1], streams[lvl] = self.b.crddrop(streams[lvl + 1], streams[lvl])
        for lvl, crd in enumerate(streams):
            self.b.level_write(crd, result, lvl)
        self.b.value_write(vals, result)


def _scalar_op(b: GraphBuilder, kind: str, vals, c: float, reverse: bool):
    """A binary op with one constant operand as a scalar ALU op."""
    if kind == "max" and c == 0.0:
        return b.alu("relu", vals)
    direct = {"add": "scalar_add", "mul": "scalar_mul", "max": "scalar_max", "min": "scalar_min"}
    if kind in direct:
        return b.alu(direct[kind], vals, scalar=c)
    if kind == "sub":
        return b.alu("scalar_rsub" if reverse else "scalar_sub", vals, scalar=c)
    if kind == "div":
        return b.alu("scalar_rdiv" if reverse else "scalar_div", vals, scalar=c)
    raise AssertionError(f"no scalar form of {kind}")


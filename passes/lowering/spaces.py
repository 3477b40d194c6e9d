"""Iteration spaces: which streams a scope joins to iterate one index variable.

For each variable a scope visits, the space of its expression over that variable is planned
bottom-up with each node's background value β (:mod:`.background`). An operand is
*annihilating* for an op when the op's result is β wherever the operand is absent, whatever
the other operands are (``A`` in ``A*B``, the mask in ``mask_fill``): the op's space is the
intersection of its annihilating operands (others ride along through ``union(universe,
...)``). Otherwise the space is the union of its operands. A node whose absent points would
be read with a non-zero β (a union partner, a sum, a writer) is planned *full* (unioned with
the dense universe of the variable) so its value is computed there explicitly; the ALU reads
an absent (``N``) operand as 0.

A space is a tree of :class:`Leaf` (a tensor use's next level), :class:`VLeaf` (a level of an
activated reduction's result), :data:`UNIVERSE` (every coordinate) and :class:`Merge`
(intersection or union). Before it is built, sibling uses reading one level from one
reference are merged, and dense levels are *located* at the coordinates of the others
instead of being scanned and joined.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fuseflow.dialects.types import storage_levels
from fuseflow.passes.lowering.background import (
    PROBES,
    constant_over,
    needs_full_body,
    reduce_beta,
    static_beta,
)
from fuseflow.passes.lowering.einsum import Const, LoweringError, Op, Reduce, Use

if TYPE_CHECKING:
    from fuseflow.passes.lowering.lower import KernelLowering


@dataclass(frozen=True)
class Leaf:
    use: Use


@dataclass(frozen=True)
class VLeaf:
    rid: int


@dataclass(frozen=True)
class Universe:
    pass


@dataclass(frozen=True)
class Merge:
    kind: str          # 'intersect' | 'union'
    children: tuple


UNIVERSE = Universe()


def _probes(op: Op, index: int) -> list[float]:
    """Values tried for operand ``index`` of ``op`` where it is present: the probes, and 0 for
    a mask (a present mask entry can be 0 — a dense or negated mask — and then the fill is
    the result, whatever the other operand is)."""
    return list(PROBES) + ([0.0] if op.kind == "mask_fill" and index == 0 else [])


def merge(kind: str, plans: list):
    """The ``kind`` merge of ``plans``, flattened, without duplicates (a universe absorbs an
    intersection and leads a union)."""
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


def is_full(space) -> bool:
    """Whether ``space`` holds every coordinate (it contains the universe)."""
    return isinstance(space, Universe) or (
        isinstance(space, Merge) and space.kind == "union" and UNIVERSE in space.children)


def full(space):
    """``space`` unioned with the universe."""
    return space if is_full(space) else merge("union", [UNIVERSE, space])


class IterationSpaces:
    """Plans the spaces of one kernel's lowering (reads its use and virtual-tensor state)."""

    def __init__(self, lowering: KernelLowering):
        self.lw = lowering
        self.formats: dict[int, tuple[str, ...]] = {}  # operand -> storage level formats

    def plan(self, expr, var: str, full_space: bool = False):
        """(space over ``var`` or None if ``expr`` does not depend on it, background)."""
        if isinstance(expr, Use):
            if var not in expr.vars:
                return None, None
            return (full(Leaf(expr)) if full_space else Leaf(expr)), 0.0
        if isinstance(expr, Const):
            return None, expr.value
        if isinstance(expr, Reduce):
            return self._plan_reduce(expr, var, full_space)
        return self._plan_op(expr, var, full_space)

    def _plan_reduce(self, r: Reduce, var: str, full_space: bool):
        virt = self.lw.virtual.get(r.rid)
        if virt is not None:
            if var not in virt.remaining():
                return None, None
            if full_space and virt.beta != 0.0:
                raise LoweringError(self.lw.k.loc, f"the fused intermediate {r} has background "
                                                   f"{virt.beta} and cannot be densified over "
                                                   f"{var}")
            return (full(VLeaf(r.rid)) if full_space else VLeaf(r.rid)), virt.beta
        if var not in r.free:
            return None, None
        beta = reduce_beta(r)
        body_beta = static_beta(r.body)
        space, _ = self.plan(r.body, var, (full_space or beta is None)
                             and needs_full_body(r.kind, body_beta))
        if space is None:
            return None, beta
        if full_space or beta is None:
            return full(space), beta
        return space, beta

    def _plan_op(self, op: Op, var: str, full_space: bool):
        kids = [self.plan(a, var) for a in op.args]
        present = [i for i, (sp, _) in enumerate(kids) if sp is not None]
        if not present:
            return None, None
        choices = []
        for i, (sp, beta) in enumerate(kids):
            if sp is not None:
                choices.append([beta] if beta is not None and not is_full(sp)
                               else _probes(op, i))
            elif isinstance(op.args[i], Const):
                choices.append([op.args[i].value])
            else:
                choices.append(_probes(op, i))
        beta = constant_over(op, choices)   # full operands are probed: no absent points

        def readable(i):
            """Child ``i`` planned so that its absent points can be read (as 0)."""
            sp, b = kids[i]
            if is_full(sp) or b == 0.0:
                return sp
            return self.plan(op.args[i], var, True)[0]

        if full_space or beta is None:
            return merge("union", [UNIVERSE] + [readable(i) for i in present]), None
        annihilating = []
        for i in present:
            if is_full(kids[i][0]) or kids[i][1] is None:
                continue
            alone = list(choices)
            alone[i] = [kids[i][1]]
            others = [j for j in present if j != i]
            for j in others:
                alone[j] = _probes(op, j)
            if constant_over(op, alone) == beta:
                annihilating.append(i)
        if annihilating:
            parts = [kids[i][0] for i in annihilating]
            parts += [full(readable(i)) for i in present if i not in annihilating]
            return merge("intersect", parts), beta
        if len(present) == 1:
            return kids[present[0]][0], beta
        return merge("union", [readable(i) for i in present]), beta

    def merge_same_levels(self, space, var: str):
        """The space with sibling uses that read the same level of one tensor from the same
        reference (several uses of one input) replaced by one of them, and {uid:
        representative uid}: such uses have the same coordinates, so joining them with each
        other is the identity. (Across branches they differ after the joins.)"""
        aliases: dict[int, int] = {}
        lw = self.lw

        def canonical(node):
            if not isinstance(node, Merge):
                return node
            reps: dict = {}
            children = []
            for child in node.children:
                child = canonical(child)
                if isinstance(child, Leaf):
                    u = child.use
                    index = lw.next_level[u.uid]
                    if index < len(u.vars) and u.vars[index] == var:
                        rep = reps.setdefault((u.operand, u.levels[index], lw.ref[u.uid]), child)
                        if rep is not child:
                            aliases[u.uid] = rep.use.uid
                            continue
                children.append(child)
            return merge(node.kind, children)

        space = canonical(space)
        for uid, rep in aliases.items():
            while rep in aliases:           # a representative merged again further out
                rep = aliases[rep]
            aliases[uid] = rep
        return space, aliases

    def locatable(self, node, var: str) -> bool:
        """Whether ``node`` is a use whose next level (over ``var``) is dense, as are all the
        levels above it: its reference there is never absent and a coordinate gives its
        position directly, so it is reached by ``sam.locate`` instead of a scan and a join."""
        if not isinstance(node, Leaf):
            return False
        u = node.use
        index = self.lw.next_level[u.uid]
        if index >= len(u.vars) or u.vars[index] != var:
            return False
        formats = self.level_formats(u.operand)
        return all(f == "dense" for f in formats[:u.levels[index] + 1])

    def level_formats(self, operand: int) -> tuple[str, ...]:
        if operand not in self.formats:
            _, levels = storage_levels(self.lw.b.tensor_types[operand])
            self.formats[operand] = tuple(lv.format for lv in levels)
        return self.formats[operand]

    def split_located(self, space: Merge, var: str):
        """(dense leaves to locate, the children that drive the join) of a merged space.

        In an intersection a dense leaf, or a full union of dense leaves, contains every
        coordinate of the others: the others are joined and the dense leaves located at their
        coordinates (if all children are dense, the first is scanned). In a union a dense leaf
        holds every coordinate: the universe, or else the first dense leaf, drives the union
        and the other dense leaves are located."""
        located, drivers = [], []
        if space.kind == "intersect":
            for child in space.children:
                group = [child] if self.locatable(child, var) else None
                if is_full(child) and isinstance(child, Merge):
                    rest = [c for c in child.children if not isinstance(c, Universe)]
                    if all(self.locatable(c, var) for c in rest):
                        group = rest
                if group is None:
                    drivers.append(child)
                else:
                    located += [leaf for leaf in group if leaf not in located]
            if not drivers and located:
                drivers.append(located.pop(0))
        else:
            located = [c for c in space.children if self.locatable(c, var)]
            drivers = [c for c in space.children if c not in located]
            if located and UNIVERSE not in drivers:
                drivers.insert(0, located.pop(0))
        return located, drivers

    def covers_all(self, space, var: str) -> bool:
        """Whether ``space`` holds every coordinate of ``var`` (its fibers are never empty)."""
        if self.lw.k.sizes.get(var) == 0:
            return False
        if isinstance(space, Universe) or is_full(space):
            return True
        if isinstance(space, Leaf):
            return self.locatable(space, var)
        if isinstance(space, Merge):
            test = any if space.kind == "union" else all
            return test(self.covers_all(c, var) for c in space.children)
        return False

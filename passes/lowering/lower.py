"""Lowers a kernel's fused index notation under a dataflow order to one SAM graph.

**Scopes.** Each output is written by a *root scope* iterating the output's variables; each
:class:`Reduce` node runs in its own scope iterating its bound variables and the free
variables it must produce itself. Variables are visited in the global order. While a scope
visits a variable that is free in a nested reduction not yet started, the reduction's uses
take part *transparently* (they are scanned or repeated like the scope's own), so work that
does not depend on the reduction's bound variables is shared. A reduction is *activated*
just before its scope visits a variable placed after the reduction's first bound variable
(that variable must be one the reduction produces, unless the reduction produces none) or
at the end of the scope: its scope then visits its remaining variables, evaluates its body
and reduces (a reducer when nothing free lies below the bound variable, a sparse accumulator
otherwise). Its result then acts as a *virtual tensor* in the enclosing scope: coordinate
streams for the free variables it produced and a value stream that travels through
joiners and repeaters like a reference stream.

**Iteration spaces.** For each variable a scope visits, the space of its expression over that
variable is planned bottom-up with each node's *background* value β (its value where all its
sparse operands are absent: 0 for a sparse tensor, ``-inf`` for a masked score, ``1`` for
``exp(A)``...). An operand is *annihilating* for an op when the op's result is β wherever the
operand is absent, whatever the other operands are (``A`` in ``A*B``, the mask in
``mask_fill``): the op's space is the intersection of its annihilating operands (others ride
along through ``union(universe, ...)``). Otherwise the space is the union of its operands.
A node whose absent points would be read with a non-zero β (a union partner, a sum, a
writer) is planned *full* (unioned with the dense universe of the variable) so its value is
computed there explicitly; the ALU reads an absent (``N``) operand as 0.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from fuseflow.dialects.types import storage_levels
from fuseflow.passes.lowering.builder import GraphBuilder
from fuseflow.passes.lowering.einsum import (
    Const,
    KernelExpr,
    LoweringError,
    Op,
    Reduce,
    Root,
    Use,
)


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
PROBES = (1.0, -2.5, 3.25)
"""Values tried for operands the background analysis cannot see (they do not index the var)."""


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


def _is_full(space) -> bool:
    return isinstance(space, Universe) or (
        isinstance(space, Merge) and space.kind == "union" and UNIVERSE in space.children)


def _full(space):
    return space if _is_full(space) else _merge("union", [UNIVERSE, space])


# Scalar semantics for the background analysis (float64; only equalities matter).
_SCALAR = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "max": max, "min": min, "neg": lambda x: -x,
    "exp": np.exp, "log": np.log, "rsqrt": lambda x: 1.0 / np.sqrt(x), "sqrt": np.sqrt,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "relu": lambda x: max(x, 0.0),
}


def _apply(op: Op, args) -> float | None:
    with np.errstate(all="ignore"):
        if op.kind == "mask_fill":
            value = args[1] if args[0] != 0 else op.fill
        else:
            value = float(_SCALAR[op.kind](*[np.float64(a) for a in args]))
    return None if value is None or math.isnan(value) else float(value)


def _constant_over(op: Op, choices: list[tuple]) -> float | None:
    """The op's value if it is the same for every combination of argument choices."""
    seen = set()
    for args in itertools.product(*choices):
        value = _apply(op, args)
        if value is None:
            return None
        seen.add(value)
        if len(seen) > 1:
            return None
    return seen.pop() if seen else None


def static_beta(expr) -> float | None:
    """The value of ``expr`` where all of its sparse operands are absent (None if unknown)."""
    if isinstance(expr, Use):
        return 0.0
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Reduce):
        return reduce_beta(expr)
    betas = [static_beta(a) for a in expr.args]
    if any(b is None for b in betas):
        return None
    return _apply(expr, betas)


def reduce_beta(r: Reduce) -> float | None:
    body = static_beta(r.body)
    if body is None:
        return None
    if r.kind == "sum":
        return (r.init or 0.0) if body == 0.0 else None
    return body if r.init is None else max(r.init, body)


def _needs_full_body(kind: str, beta: float | None) -> bool:
    """Whether a reduction must visit absent points of a body with background ``beta``."""
    if beta is None:
        return False                    # the body is already planned full
    return beta != (0.0 if kind == "sum" else -math.inf)


@dataclass
class _Virtual:
    """An activated reduction's result, consumed by its enclosing scope like a tensor."""

    levels: list[str]
    crds: dict
    val: object
    beta: float | None
    next: int = 0

    def remaining(self) -> list[str]:
        return self.levels[self.next:]


@dataclass
class _Scope:
    """One root or reduction scope: the variables it visits and their coordinate streams."""

    body: object
    vars: list[str]
    entry: object                         # iteration reference when the scope starts
    reduce: Reduce | None = None
    crd: dict = field(default_factory=dict)
    visited: list[str] = field(default_factory=list)
    context: list = field(default_factory=list)     # (var, crd) iterated outside the scope


class KernelLowering:
    """Builds the streams of one kernel's fused index notation under ``order``."""

    def __init__(self, kernel: KernelExpr, order: tuple[str, ...], builder: GraphBuilder):
        self.k = kernel
        self.order = tuple(order)
        self.pos = {v: i for i, v in enumerate(self.order)}
        self.b = builder
        self.ref: dict[int, object] = {}
        self.next_level: dict[int, int] = {}
        self.virtual: dict[int, _Virtual] = {}
        self.shared: dict[int, set[str]] = {}       # rid -> variables visited transparently
        self.never_empty: set = set()               # crd streams whose fibers are never empty
        self.formats: dict[int, tuple[str, ...]] = {}  # operand -> storage level formats

    def run(self) -> None:
        root_ref = self.b.root()
        for u in self.k.uses:
            self.ref[u.uid] = root_ref
            self.next_level[u.uid] = 0
        for root in self.k.roots:
            scope = _Scope(root.expr, [v for v in self.order if v in root.out_vars], root_ref)
            self._visit_all(scope)
            vals = self._evaluate(root.expr)
            self._write(root, vals, scope.crd)

    # Scopes ----------------------------------------------------------------------------
    def _visit_all(self, scope: _Scope) -> None:
        """Visits a scope's variables; a root scope (writers) or a reduction's scope."""
        r = scope.reduce
        for var in scope.vars:
            self._activate_ready(scope, var)
            space, beta = self._plan(scope.body, var)
            if space is None:
                space = UNIVERSE
            elif r is None and beta is not None and beta != 0.0:
                space, _ = self._plan(scope.body, var, full=True)   # writers store all non-zeros
            elif r is not None and var in r.vars and _needs_full_body(r.kind, beta):
                space, _ = self._plan(scope.body, var, full=True)   # the reduction reads them
            self._visit(scope, var, space)
        self._activate_ready(scope, None)

    def _visit(self, scope: _Scope, var: str, space) -> None:
        space, aliases = self._merge_same_levels(space, var)
        covers_all = self._covers_all(space, var)
        crd, streams = self._build(space, scope, var)
        # An empty fiber further out reaches this level as a bare stop, an empty fiber here:
        # only a level under never-empty levels that covers every coordinate is never empty.
        outer = self._enclosing_crd(scope, var)
        if covers_all and (outer is None or outer in self.never_empty):
            self.never_empty.add(crd)
        for uid, rep in aliases.items():
            streams[("u", uid)] = streams[("u", rep)]
            self.next_level[uid] = self.next_level[rep]
        scope.crd[var] = crd
        for key in self._participants(scope.body):
            if key in streams:
                self._set_stream(key, streams[key])
            else:
                self._repeat(key, crd, var)
        for r in self._transparent(scope.body):
            if var in r.free:
                self.shared.setdefault(r.rid, set()).add(var)
        scope.visited.append(var)

    def _iteration_ref(self, scope: _Scope):
        """A reference with one token per iteration of everything the scope has visited."""
        ref = scope.entry
        for var in scope.visited:
            ref = self.b.repeat(ref, scope.crd[var])
        return ref

    def _transparent(self, expr) -> list[Reduce]:
        """Reductions not yet activated reachable from ``expr`` through such reductions."""
        found = []
        if isinstance(expr, Reduce) and expr.rid not in self.virtual:
            found.append(expr)
            found += self._transparent(expr.body)
        elif isinstance(expr, Op):
            for a in expr.args:
                found += self._transparent(a)
        return found

    def _participants(self, expr) -> list:
        """Stream keys of the uses and virtual tensors taking part in a scope's iteration."""
        if isinstance(expr, Use):
            return [("u", expr.uid)]
        if isinstance(expr, Reduce):
            if expr.rid in self.virtual:
                return [("v", expr.rid)]
            return self._participants(expr.body)
        if isinstance(expr, Op):
            keys = []
            for a in expr.args:
                keys += [k for k in self._participants(a) if k not in keys]
            return keys
        return []

    def _activate_ready(self, scope: _Scope, var: str | None) -> None:
        """Activates the reductions that must run before ``scope`` visits ``var``."""
        while True:
            ready = [r for r in self._outermost_transparent(scope.body) if self._is_ready(r, var)]
            if not ready:
                return
            ready.sort(key=lambda r: min(self.pos[v] for v in r.vars))
            self._activate(ready[0], scope)

    def _outermost_transparent(self, expr) -> list[Reduce]:
        if isinstance(expr, Reduce):
            return [] if expr.rid in self.virtual else [expr]
        if isinstance(expr, Op):
            return [r for a in expr.args for r in self._outermost_transparent(a)]
        return []

    def _is_ready(self, r: Reduce, var: str | None) -> bool:
        """A reduction starts before a variable placed after its first bound variable, unless
        it produces coordinates and ``var`` is not one of them (it could not be repeated over
        ``var``; it is then re-evaluated per coordinate of ``var`` and starts later)."""
        if var is None:
            return True
        if min(self.pos[v] for v in r.vars) > self.pos[var]:
            return False
        produced = [v for v in r.free if v not in self.shared.get(r.rid, set())]
        return var in r.free or not produced

    def _activate(self, r: Reduce, parent: _Scope) -> None:
        done = self.shared.get(r.rid, set())
        vars_ = [v for v in self.order if (v in r.free or v in r.vars) and v not in done]
        context = parent.context + [(v, parent.crd[v]) for v in parent.visited]
        scope = _Scope(r.body, vars_, self._iteration_ref(parent), reduce=r, context=context)
        self._visit_all(scope)
        vals = self._evaluate(r.body)
        vals, crds = self._reduce(r, scope, vals)
        levels = [v for v in scope.vars if v in r.free]
        self.virtual[r.rid] = _Virtual(levels, crds, vals, reduce_beta(r))

    # Iteration spaces -------------------------------------------------------------------
    def _plan(self, expr, var: str, full: bool = False):
        """(space over ``var`` or None if ``expr`` does not depend on it, background)."""
        if isinstance(expr, Use):
            if var not in expr.vars:
                return None, None
            return (_full(Leaf(expr)) if full else Leaf(expr)), 0.0
        if isinstance(expr, Const):
            return None, expr.value
        if isinstance(expr, Reduce):
            return self._plan_reduce(expr, var, full)
        return self._plan_op(expr, var, full)

    def _plan_reduce(self, r: Reduce, var: str, full: bool):
        virt = self.virtual.get(r.rid)
        if virt is not None:
            if var not in virt.remaining():
                return None, None
            if full and virt.beta != 0.0:
                raise LoweringError(self.k.loc, f"the fused intermediate {r} has background "
                                                f"{virt.beta} and cannot be densified over {var}")
            return (_full(VLeaf(r.rid)) if full else VLeaf(r.rid)), virt.beta
        if var not in r.free:
            return None, None
        beta = reduce_beta(r)
        body_beta = static_beta(r.body)
        space, _ = self._plan(r.body, var, full=(full or beta is None)
                              and _needs_full_body(r.kind, body_beta))
        if space is None:
            return None, beta
        if full or beta is None:
            return _full(space), beta
        return space, beta

    def _plan_op(self, op: Op, var: str, full: bool):
        kids = [self._plan(a, var) for a in op.args]
        present = [i for i, (sp, _) in enumerate(kids) if sp is not None]
        if not present:
            return None, None
        choices = []
        for i, (sp, beta) in enumerate(kids):
            if sp is not None:
                choices.append([beta] if beta is not None and not _is_full(sp) else list(PROBES))
            elif isinstance(op.args[i], Const):
                choices.append([op.args[i].value])
            else:
                choices.append(list(PROBES))
        beta = _constant_over(op, choices)   # full operands are probed: no absent points

        def readable(i):
            """Child ``i`` planned so that its absent points can be read (as 0)."""
            sp, b = kids[i]
            if _is_full(sp) or b == 0.0:
                return sp
            return self._plan(op.args[i], var, full=True)[0]

        if full or beta is None:
            return _merge("union", [UNIVERSE] + [readable(i) for i in present]), None
        annihilating = []
        for i in present:
            if _is_full(kids[i][0]) or kids[i][1] is None:
                continue
            alone = list(choices)
            alone[i] = [kids[i][1]]
            others = [j for j in present if j != i]
            for j in others:
                alone[j] = list(PROBES)
            if _constant_over(op, alone) == beta:
                annihilating.append(i)
        if annihilating:
            parts = [kids[i][0] for i in annihilating]
            parts += [_full(readable(i)) for i in present if i not in annihilating]
            return _merge("intersect", parts), beta
        if len(present) == 1:
            return kids[present[0]][0], beta
        return _merge("union", [readable(i) for i in present]), beta

    def _build(self, space, scope: _Scope, var: str):
        """(crd, {stream key: stream}) for a planned space; keys ('u', uid) or ('v', rid)."""
        if isinstance(space, Leaf):
            u = space.use
            level_index = self.next_level[u.uid]
            if level_index >= len(u.vars) or u.vars[level_index] != var:
                raise LoweringError(self.k.loc, f"{u} takes part in several branches of the "
                                                f"iteration space over {var}; not supported yet")
            crd, ref = self.b.scan(self.ref[u.uid], u.operand, u.levels[level_index])
            self.next_level[u.uid] = level_index + 1
            return crd, {("u", u.uid): ref}
        if isinstance(space, VLeaf):
            virt = self.virtual[space.rid]
            crd = virt.crds[var]
            virt.next += 1
            return crd, {("v", space.rid): virt.val if not virt.remaining() else None}
        if isinstance(space, Universe):
            crd, _ = self.b.range_scan(self._iteration_ref(scope), self.k.sizes[var])
            return crd, {}
        located, drivers = self._split_located(space, var)
        if located:
            crd, streams = self._build(_merge(space.kind, drivers), scope, var)
            for leaf in located:
                u = leaf.use
                level_index = self.next_level[u.uid]
                streams[("u", u.uid)] = self.b.locate(self.ref[u.uid], crd, u.operand,
                                                      u.levels[level_index])
                self.next_level[u.uid] = level_index + 1
            return crd, streams
        parts = self._distinct([self._build(child, scope, var) for child in space.children])
        if len(parts) == 1:
            return parts[0]
        groups, keys = [], []
        for crd, streams in parts:
            if any(s is None for s in streams.values()):
                raise LoweringError(self.k.loc, f"a fused intermediate is merged over {var} "
                                                "before its innermost level; choose another "
                                                "order or fusion")
            refs = list(dict.fromkeys(s for k, s in streams.items() if k[0] == "u"))
            vals = list(dict.fromkeys(s for k, s in streams.items() if k[0] == "v"))
            groups.append((crd, refs, vals))
            keys.append(streams)
        crd, out_refs, out_vals = self.b.joiner(space.kind, groups)
        result = {}
        for (_, refs, vals), streams, outs in zip(groups, keys, _split(out_refs, out_vals, groups)):
            renamed = dict(zip(refs + vals, outs))
            result.update({k: renamed[s] for k, s in streams.items()})
        return crd, result

    def _merge_same_levels(self, space, var: str):
        """The space with sibling uses that read the same level of one tensor from the same
        reference (several uses of one input) replaced by one of them, and {uid:
        representative uid}: such uses have the same coordinates, so joining them with each
        other is the identity. (Across branches they differ after the joins.)"""
        aliases: dict[int, int] = {}

        def canonical(node):
            if not isinstance(node, Merge):
                return node
            reps: dict = {}
            children = []
            for child in node.children:
                child = canonical(child)
                if isinstance(child, Leaf):
                    u = child.use
                    index = self.next_level[u.uid]
                    if index < len(u.vars) and u.vars[index] == var:
                        rep = reps.setdefault((u.operand, u.levels[index], self.ref[u.uid]), child)
                        if rep is not child:
                            aliases[u.uid] = rep.use.uid
                            continue
                children.append(child)
            return _merge(node.kind, children)

        space = canonical(space)
        for uid, rep in aliases.items():
            while rep in aliases:           # a representative merged again further out
                rep = aliases[rep]
            aliases[uid] = rep
        return space, aliases

    def _locatable(self, node, var: str) -> bool:
        """Whether ``node`` is a use whose next level (over ``var``) is dense, as are all the
        levels above it: its reference there is never absent and a coordinate gives its
        position directly, so it is reached by ``sam.locate`` instead of a scan and a join."""
        if not isinstance(node, Leaf):
            return False
        u = node.use
        index = self.next_level[u.uid]
        if index >= len(u.vars) or u.vars[index] != var:
            return False
        formats = self._level_formats(u.operand)
        return all(f == "dense" for f in formats[:u.levels[index] + 1])

    def _level_formats(self, operand: int) -> tuple[str, ...]:
        if operand not in self.formats:
            _, levels = storage_levels(self.b.tensors[operand].type)
            self.formats[operand] = tuple(lv.format for lv in levels)
        return self.formats[operand]

    def _split_located(self, space: Merge, var: str):
        """(dense leaves to locate, the children that drive the join) of a merged space.

        In an intersection a dense leaf, or a full union of dense leaves, contains every
        coordinate of the others: the others are joined and the dense leaves located at their
        coordinates (if all children are dense, the first is scanned). In a union a dense leaf
        holds every coordinate: the universe, or else the first dense leaf, drives the union
        and the other dense leaves are located."""
        located, drivers = [], []
        if space.kind == "intersect":
            for child in space.children:
                group = [child] if self._locatable(child, var) else None
                if _is_full(child) and isinstance(child, Merge):
                    rest = [c for c in child.children if not isinstance(c, Universe)]
                    if all(self._locatable(c, var) for c in rest):
                        group = rest
                if group is None:
                    drivers.append(child)
                else:
                    located += [leaf for leaf in group if leaf not in located]
            if not drivers and located:
                drivers.append(located.pop(0))
        else:
            located = [c for c in space.children if self._locatable(c, var)]
            drivers = [c for c in space.children if c not in located]
            if located and UNIVERSE not in drivers:
                drivers.insert(0, located.pop(0))
        return located, drivers

    @staticmethod
    def _distinct(parts: list) -> list:
        """Merges joiner inputs that are the same streams (two uses of one tensor scanned from
        the same reference): joining a stream with itself would split its consumers."""
        merged: list = []
        for crd, streams in parts:
            mine = set(streams.values())
            for other_crd, other in merged:
                theirs = set(other.values())
                if other_crd == crd and len(mine) == 1 and mine == theirs and None not in mine:
                    other.update(streams)
                    break
            else:
                merged.append((crd, dict(streams)))
        return merged

    def _set_stream(self, key, stream) -> None:
        if key[0] == "u":
            self.ref[key[1]] = stream
        elif stream is not None:
            self.virtual[key[1]].val = stream

    def _repeat(self, key, crd, var: str) -> None:
        if key[0] == "u":
            self.ref[key[1]] = self.b.repeat(self.ref[key[1]], crd)
            return
        virt = self.virtual[key[1]]
        if virt.remaining():
            raise LoweringError(self.k.loc, f"the order visits {var} between the levels "
                                            f"({', '.join(virt.levels)}) of a fused "
                                            "intermediate; choose another order or fusion")
        virt.val = self.b.repeat(virt.val, crd)

    # Values -----------------------------------------------------------------------------
    def _evaluate(self, expr):
        b = self.b
        if isinstance(expr, Use):
            return b.array(self.ref[expr.uid], expr.operand)
        if isinstance(expr, Reduce):
            return self.virtual[expr.rid].val
        if isinstance(expr, Const) or all(isinstance(a, Const) for a in expr.args):
            raise LoweringError(self.k.loc, "a kernel whose value does not depend on any tensor "
                                            "is not supported")
        if expr.kind == "mask_fill":
            mask, x = expr.args
            if isinstance(mask, Const) or isinstance(x, Const):
                raise LoweringError(self.k.loc, "a masked fill of a constant is not supported")
            return b.alu("mask_fill", self._evaluate(mask), self._evaluate(x), scalar=expr.fill)
        if len(expr.args) == 1:
            return b.alu(expr.kind, self._evaluate(expr.args[0]))
        lhs, rhs = expr.args
        if isinstance(rhs, Const):
            return _scalar_op(b, expr.kind, self._evaluate(lhs), rhs.value, reverse=False)
        if isinstance(lhs, Const):
            return _scalar_op(b, expr.kind, self._evaluate(rhs), lhs.value, reverse=True)
        return b.alu(expr.kind, self._evaluate(lhs), self._evaluate(rhs))

    # Reductions and writers ------------------------------------------------------------
    def _reduce(self, r: Reduce, scope: _Scope, vals):
        live = list(scope.vars)
        crds = dict(scope.crd)
        for var in reversed(scope.vars):
            if var not in r.vars:
                continue
            below = live[live.index(var) + 1:]
            if not below:
                vals = self.b.reduce(r.kind, vals, self._outer_if_sparse(scope, live, var, crds))
            else:
                if r.kind != "sum":
                    raise LoweringError(self.k.loc, "a max reduction over a non-innermost index "
                                                    "variable is not supported")
                new_crds, vals = self.b.spacc([crds[v] for v in below], vals)
                crds.update(zip(below, new_crds))
            live.remove(var)
        if r.init is not None:
            vals = self.b.alu("scalar_add" if r.kind == "sum" else "scalar_max", vals,
                              scalar=r.init)
        return vals, crds

    def _outer_if_sparse(self, scope: _Scope, live: list[str], var: str, crds: dict):
        """The coordinates of the level above ``var`` if its fibers can be empty: a reducer
        needs them to tell an empty fiber of ``var`` from an empty outer fiber."""
        index = live.index(var)
        if index > 0:
            outer = crds[live[index - 1]]
        elif scope.context:
            outer = scope.context[-1][1]
        else:
            return None                     # the root's single fiber
        return None if outer in self.never_empty else outer

    @staticmethod
    def _enclosing_crd(scope: _Scope, var: str):
        """The coordinate stream of the level iterated just outside ``var`` (None: the root)."""
        index = scope.vars.index(var)
        if index > 0:
            return scope.crd[scope.vars[index - 1]]
        return scope.context[-1][1] if scope.context else None

    def _covers_all(self, space, var: str) -> bool:
        """Whether ``space`` holds every coordinate of ``var`` (its fibers are never empty)."""
        if self.k.sizes.get(var) == 0:
            return False
        if isinstance(space, Universe) or _is_full(space):
            return True
        if isinstance(space, Leaf):
            return self._locatable(space, var)
        if isinstance(space, Merge):
            test = any if space.kind == "union" else all
            return test(self._covers_all(c, var) for c in space.children)
        return False

    def _write(self, root: Root, vals, crds) -> None:
        _, levels = storage_levels(root.result_type)
        streams = [crds[v] for v in root.out_vars]
        for lvl in range(len(streams) - 2, -1, -1):
            if levels[lvl].format != "dense":
                streams[lvl + 1], streams[lvl] = self.b.crddrop(streams[lvl + 1], streams[lvl])
        for lvl, crd in enumerate(streams):
            self.b.level_write(crd, root.index, lvl)
        self.b.value_write(vals, root.index)


def _split(out_refs: list, out_vals: list, groups: list) -> list[list]:
    """A joiner's output streams per input group (its references, then its values)."""
    per_group, r, v = [], 0, 0
    for _, refs, vals in groups:
        per_group.append(out_refs[r:r + len(refs)] + out_vals[v:v + len(vals)])
        r, v = r + len(refs), v + len(vals)
    return per_group


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

"""Scopes: which expression iterates which variables, and when a reduction starts.

Each output is written by a *root scope* iterating the output's variables; each
:class:`Reduce` node runs in its own scope iterating its bound variables and the free
variables it must produce itself. Variables are visited in the global order. While a scope
visits a variable that is free in a nested reduction not yet started, the reduction's uses
take part *transparently* (they are scanned or repeated like the scope's own), so work that
does not depend on the reduction's bound variables is shared. A reduction is *activated*
just before its scope visits a variable placed after the reduction's first bound variable
(that variable must be one the reduction produces, unless the reduction produces none) or
at the end of the scope: its scope then visits its remaining variables, evaluates its body
and reduces (a reducer when nothing free lies below the bound variable, a sparse accumulator
otherwise). Its result then acts as a *virtual tensor* (:class:`Virtual`) in the enclosing
scope: coordinate streams for the free variables it produced and a value stream that travels
through joiners and repeaters like a reference stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fuseflow.passes.lowering.background import needs_full_body, reduce_beta
from fuseflow.passes.lowering.einsum import Op, Reduce, Use
from fuseflow.passes.lowering.spaces import UNIVERSE

if TYPE_CHECKING:
    from fuseflow.passes.lowering.lower import KernelLowering


@dataclass
class Virtual:
    """An activated reduction's result, consumed by its enclosing scope like a tensor."""

    levels: list[str]
    crds: dict
    val: object
    beta: float | None
    origin: object = None               # location of the reducing linalg op
    next: int = 0

    def remaining(self) -> list[str]:
        return self.levels[self.next:]


@dataclass
class Scope:
    """One root or reduction scope: the variables it visits and their coordinate streams."""

    body: object
    vars: list[str]
    entry: object                         # iteration reference when the scope starts
    reduce: Reduce | None = None
    crd: dict = field(default_factory=dict)
    visited: list[str] = field(default_factory=list)
    context: list = field(default_factory=list)     # (var, crd) iterated outside the scope

    def iteration_ref(self, builder):
        """A reference with one token per iteration of everything the scope has visited."""
        ref = self.entry
        for var in self.visited:
            ref = builder.repeat(ref, self.crd[var])
        return ref

    def enclosing_crd(self, var: str):
        """The coordinate stream of the level iterated just outside ``var`` (None: the root)."""
        index = self.vars.index(var)
        if index > 0:
            return self.crd[self.vars[index - 1]]
        return self.context[-1][1] if self.context else None


class Scopes:
    """Walks the scopes of one kernel's lowering and activates its reductions."""

    def __init__(self, lowering: KernelLowering):
        self.lw = lowering

    def visit_all(self, scope: Scope) -> None:
        """Visits a scope's variables; a root scope (writers) or a reduction's scope."""
        r = scope.reduce
        spaces = self.lw.spaces
        inside_reduced = False
        for var in scope.vars:
            self._activate_ready(scope, var)
            space, beta = spaces.plan(scope.body, var)
            # A reduction reads its body at every point of its reduced variables and of the
            # variables visited inside them (an accumulator's keys): absent points there hold
            # the body's background, which it must see unless it is the reduction's identity.
            reads_every_point = r is not None and (var in r.vars or inside_reduced)
            if space is None:
                space = UNIVERSE
            elif r is None and beta is not None and beta != 0.0:
                space, _ = spaces.plan(scope.body, var, True)   # writers store all non-zeros
            elif reads_every_point and needs_full_body(r.kind, beta):
                space, _ = spaces.plan(scope.body, var, True)   # the reduction reads them
            inside_reduced = inside_reduced or (r is not None and var in r.vars)
            self._visit(scope, var, space)
        self._activate_ready(scope, None)

    def _visit(self, scope: Scope, var: str, space) -> None:
        lw = self.lw
        space, aliases = lw.spaces.merge_same_levels(space, var)
        covers_all = lw.spaces.covers_all(space, var)
        crd, streams = lw.streams.build(space, scope, var)
        # An empty fiber further out reaches this level as a bare stop, an empty fiber here:
        # only a level under never-empty levels that covers every coordinate is never empty.
        outer = scope.enclosing_crd(var)
        if covers_all and (outer is None or outer in lw.never_empty):
            lw.never_empty.add(crd)
        for uid, rep in aliases.items():
            streams[("u", uid)] = streams[("u", rep)]
            lw.next_level[uid] = lw.next_level[rep]
        scope.crd[var] = crd
        for key in self.participants(scope.body):
            if key in streams:
                lw.streams.set_stream(key, streams[key])
            else:
                lw.streams.repeat(key, crd, var)
        for r in self._transparent(scope.body):
            if var in r.free:
                lw.shared.setdefault(r.rid, set()).add(var)
        scope.visited.append(var)

    def _transparent(self, expr) -> list[Reduce]:
        """Reductions not yet activated reachable from ``expr`` through such reductions."""
        found = []
        if isinstance(expr, Reduce) and expr.rid not in self.lw.virtual:
            found.append(expr)
            found += self._transparent(expr.body)
        elif isinstance(expr, Op):
            for a in expr.args:
                found += self._transparent(a)
        return found

    def participants(self, expr) -> list:
        """Stream keys of the uses and virtual tensors taking part in a scope's iteration."""
        if isinstance(expr, Use):
            return [("u", expr.uid)]
        if isinstance(expr, Reduce):
            if expr.rid in self.lw.virtual:
                return [("v", expr.rid)]
            return self.participants(expr.body)
        if isinstance(expr, Op):
            keys = []
            for a in expr.args:
                keys += [k for k in self.participants(a) if k not in keys]
            return keys
        return []

    def _activate_ready(self, scope: Scope, var: str | None) -> None:
        """Activates the reductions that must run before ``scope`` visits ``var``."""
        while True:
            ready = [r for r in self._outermost_transparent(scope.body) if self._is_ready(r, var)]
            if not ready:
                return
            ready.sort(key=lambda r: min(self.lw.pos[v] for v in r.vars))
            self._activate(ready[0], scope)

    def _outermost_transparent(self, expr) -> list[Reduce]:
        if isinstance(expr, Reduce):
            return [] if expr.rid in self.lw.virtual else [expr]
        if isinstance(expr, Op):
            return [r for a in expr.args for r in self._outermost_transparent(a)]
        return []

    def _is_ready(self, r: Reduce, var: str | None) -> bool:
        """A reduction starts before a variable placed after its first bound variable, unless
        it produces coordinates and ``var`` is not one of them (it could not be repeated over
        ``var``; it is then re-evaluated per coordinate of ``var`` and starts later)."""
        if var is None:
            return True
        pos = self.lw.pos
        if min(pos[v] for v in r.vars) > pos[var]:
            return False
        produced = [v for v in r.free if v not in self.lw.shared.get(r.rid, set())]
        return var in r.free or not produced

    def _activate(self, r: Reduce, parent: Scope) -> None:
        lw = self.lw
        with lw.b.at(r.loc):
            done = lw.shared.get(r.rid, set())
            vars_ = [v for v in lw.order if (v in r.free or v in r.vars) and v not in done]
            context = parent.context + [(v, parent.crd[v]) for v in parent.visited]
            scope = Scope(r.body, vars_, parent.iteration_ref(lw.b), reduce=r, context=context)
            self.visit_all(scope)
            vals = lw.streams.evaluate(r.body)
            vals, crds = lw.streams.reduce(r, scope, vals)
        levels = [v for v in scope.vars if v in r.free]
        lw.virtual[r.rid] = Virtual(levels, crds, vals, reduce_beta(r), r.loc)

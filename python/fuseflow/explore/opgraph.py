"""The op graph a fusion search partitions: units (fusable ops) and their data dependences.

A *unit* is what a fusion group names: a stage of the application's plan (``layer1.bias``)
or, without a plan, an FX node of the model (``matmul_2``). The graph is read from the
imported linalg module (``fuseflow.node`` on every op): a unit depends on another when one
of its compute ops reads, through views, casts and boolean predicates (which join the kernel
of their user), a value a compute op of the other computes. So a rewrite of the linalg graph
(reassociation, :mod:`fuseflow.explore.reassociate`) changes the op graph with it.

A *group* (a candidate kernel) is a set of units; a partition into groups is legal when the
graph of kernels is acyclic, i.e. its groups can run in some order where every kernel's
inputs come from kernels before it (each group is then *convex*: no path leaves and
re-enters it). :meth:`OpGraph.groups` enumerates the convex groups (contiguous or not in
program order) of at most ``max_units`` units spanning at most ``max_span`` positions of the
program order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.frontend import NODE_ATTR
from fuseflow.passes.ir_utils import defining_op, op_of
from fuseflow.passes.partition import is_compute, is_predicate


@dataclass
class OpGraph:
    """Units in program order and, per unit, the units it reads from."""

    units: list[str]
    preds: dict[str, frozenset[str]]
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Unit -> the FX nodes of its compute ops."""

    def __post_init__(self):
        self.position = {u: i for i, u in enumerate(self.units)}
        succs: dict[str, set[str]] = {u: set() for u in self.units}
        for u, ps in self.preds.items():
            for p in ps:
                succs[p].add(u)
        self.succs = {u: frozenset(s) for u, s in succs.items()}
        self._down = {}
        for u in self.units:                     # program order is topological
            below = set(self.preds[u])
            for p in self.preds[u]:
                below |= self._down[p]
            self._down[u] = frozenset(below)
        self._up = {}
        for u in reversed(self.units):
            above = set(self.succs[u])
            for s in self.succs[u]:
                above |= self._up[s]
            self._up[u] = frozenset(above)

    def __len__(self) -> int:
        return len(self.units)

    def ancestors(self, unit: str) -> frozenset[str]:
        """Every unit ``unit`` depends on, directly or not."""
        return self._down[unit]

    def is_convex(self, group) -> bool:
        """Whether no path leaves ``group`` and re-enters it."""
        group = frozenset(group)
        outside_below = set()
        for u in group:
            outside_below |= {a for a in self._down[u] if a not in group}
        # A path g1 -> x -> g2 with x outside: x is an ancestor of g2 and a descendant of g1.
        return not any(self._down[x] & group for x in outside_below)

    def is_acyclic(self, partition) -> bool:
        """Whether the kernels of ``partition`` (disjoint groups covering some units; units
        not covered are kernels of their own) depend on each other acyclically."""
        owner = {}
        for i, g in enumerate(partition):
            for u in g:
                owner[u] = ("g", i)
        key = {u: owner.get(u, ("u", u)) for u in self.units}
        deps: dict = {}
        for u in self.units:
            for p in self.preds[u]:
                if key[p] != key[u]:
                    deps.setdefault(key[u], set()).add(key[p])
        state: dict = {}

        def visit(k) -> bool:
            if state.get(k) == 2:
                return True
            if state.get(k) == 1:
                return False
            state[k] = 1
            if not all(visit(d) for d in deps.get(k, ())):
                return False
            state[k] = 2
            return True

        return all(visit(k) for k in set(key.values()))

    def descendants(self, unit: str) -> frozenset[str]:
        """Every unit that depends on ``unit``, directly or not."""
        return self._up[unit]

    def hull(self, group) -> frozenset[str]:
        """The smallest convex group containing ``group``: it and every unit on a path
        between two of its units."""
        group = frozenset(group)
        below = set().union(*(self._down[u] for u in group))
        above = set().union(*(self._up[u] for u in group))
        return group | frozenset(below & above)

    def groups(self, max_units: int | None = None, max_span: int | None = None,
               connected: bool = True) -> list[frozenset[str]]:
        """Every convex group of at most ``max_units`` units whose program positions lie
        within ``max_span`` (None: no bound), weakly connected when ``connected``; each
        listed once, ordered by first position then size. Groups grow one unit at a time
        and are closed under :meth:`hull`, so only convex groups are ever visited."""
        n = len(self.units)
        max_units = n if max_units is None else max_units
        max_span = n if max_span is None else max_span
        found: set[frozenset[str]] = set()
        for start in range(n):
            frontier = [frozenset([self.units[start]])]
            found.add(frontier[0])
            while frontier:
                nxt = []
                for g in frontier:
                    if len(g) >= max_units:
                        continue
                    for u in self._grow(g, start, max_span, connected):
                        grown = self.hull(g | {u})
                        if (grown in found or len(grown) > max_units
                                or max(self.position[v] for v in grown) >= start + max_span
                                or min(self.position[v] for v in grown) < start):
                            continue
                        found.add(grown)
                        nxt.append(grown)
                frontier = nxt
        return sorted(found, key=lambda g: (min(self.position[u] for u in g), len(g),
                                            sorted(self.position[u] for u in g)))
    def _grow(self, group, start: int, max_span: int, connected: bool):
        """Units that may join ``group`` (its first unit at ``start``): later in program
        order, within the span, adjacent to it when ``connected``."""
        limit = min(len(self.units), start + max_span)
        if connected:
            near = set()
            for u in group:
                near |= self.preds[u] | self.succs[u]
            return [u for u in near if start < self.position[u] < limit and u not in group]
        return [self.units[i] for i in range(start + 1, limit) if self.units[i] not in group]


def linalg_graph(module, unit_of: dict[str, str]) -> OpGraph:
    """The op graph of an imported module's ``@main``. ``unit_of`` maps each compute FX node
    to its unit (a stage, or the node itself); ops of other nodes (data movement the
    compiler keeps between kernels) are looked through like views."""
    fn = next(op.operation for op in module.body.operations
              if op.operation.name == "func.func")
    body = fn.regions[0].blocks[0]
    units: list[str] = []
    nodes: dict[str, list[str]] = {}
    owner: dict = {}
    for op in body.operations:
        op = op_of(op)
        if not is_compute(op) or is_predicate(op) or NODE_ATTR not in op.attributes:
            continue
        node = mlir.StringAttr(op.attributes[NODE_ATTR]).value
        if node not in unit_of:
            continue
        unit = unit_of[node]
        if unit not in nodes:
            units.append(unit)
            nodes[unit] = []
        if node not in nodes[unit]:
            nodes[unit].append(node)
        owner[op] = unit
    preds: dict[str, set[str]] = {u: set() for u in units}
    for op, unit in owner.items():
        for value in op.operands:
            for src in _compute_sources(value, owner):
                if owner[src] != unit:
                    preds[unit].add(owner[src])
    # Program order of units must be topological: a unit first seen before its producer
    # (decomposed ops interleaved) is moved after it.
    order = _topological(units, preds)
    return OpGraph(order, {u: frozenset(preds[u]) for u in order},
                   {u: tuple(nodes[u]) for u in order})


def _compute_sources(value, owner: dict) -> list:
    """The compute ops (keys of ``owner``) ``value`` is computed from, looking through views,
    casts, fills and predicates."""
    out, pending, seen = [], [value], set()
    while pending:
        v = pending.pop()
        op = defining_op(v)
        if op is None or op in seen:
            continue
        seen.add(op)
        if op in owner:
            out.append(op)
            continue
        pending.extend(op.operands)
    return out


def _topological(units: list[str], preds: dict[str, set[str]]) -> list[str]:
    placed: list[str] = []
    done: set[str] = set()

    def place(u, stack=()):
        if u in done:
            return
        if u in stack:
            raise ValueError(f"units depend on each other cyclically: {' -> '.join(stack)}")
        for p in sorted(preds[u], key=units.index):
            place(p, stack + (u,))
        done.add(u)
        placed.append(u)

    for u in units:
        place(u)
    return placed


def program_graph(program, module=None) -> OpGraph:
    """The op graph of a :class:`fuseflow.Program` (of ``module``, a rewrite of its import,
    when given): units are the stages of its plan, or its compute FX nodes without one."""
    from fuseflow.grouping import traced_ops

    traced = traced_ops(program.exported)
    if program.plan is not None:
        unit_of = program.plan.assign(traced)
    else:
        unit_of = {t.node: t.node for t in traced}
    return linalg_graph(program.module if module is None else module, unit_of)

"""Optimal fusion search with FFM's structure: evaluate each candidate kernel once, keep only
non-dominated partial solutions at each cut, join left to right.

A partial solution is a sequence of kernels (groups with an order) that can run in that
order: the units it covers form a *cut* of the op graph, a down-set (every unit's producers
are covered). Two partial solutions at the same cut are compatible with exactly the same
continuations: the tensors crossing the cut are the same, in the same formats (a kernel's
result format is fixed by its result type, so the format of a crossing tensor does not
depend on which kernel wrote it; a format axis would add it to the cut's key). So at each
cut only the Pareto front of (cycles, on-chip buffer bytes, bytes materialized off chip)
is kept: cycles and materialized bytes add, the buffer is the largest of any kernel, all
monotone, so a dominated partial solution can never complete to a non-dominated one.

Cuts are visited by size; a cut's solutions are extended by every candidate group whose
producers the cut covers. Every acyclic partition is reached (its kernels in a topological
order of the kernel graph), so the front at the full cut is exact for the candidate groups
and orders evaluated. :func:`exhaustive` enumerates every acyclic partition instead (for
checking, at tiny sizes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from fuseflow.explore.evaluate import ZERO, Cost, Option, pareto
from fuseflow.explore.opgraph import OpGraph


@dataclass(frozen=True)
class Solution:
    """A complete (or partial) partition: its kernels in execution order and its cost."""

    kernels: tuple[Option, ...]
    cost: Cost

    @property
    def groups(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(sorted(o.group)) for o in self.kernels)

    def fusion(self, units: list[str]) -> tuple[tuple[str, ...], ...]:
        """The groups as ``Schedule.fusion`` (units in program order, kernels in order)."""
        pos = {u: i for i, u in enumerate(units)}
        return tuple(tuple(sorted(o.group, key=pos.__getitem__)) for o in self.kernels)

    def key(self) -> frozenset:
        """The partition and each kernel's choice (order, lanes, tiles), independent of the
        kernels' execution order."""
        return frozenset((o.group, o.order, o.parallel, o.block) for o in self.kernels)


@dataclass
class SearchResult:
    """The Pareto front of complete partitions (fastest first) and how the search went."""

    front: list[Solution]
    candidates: int
    """Candidate kernels (group x order) evaluated."""
    groups: int
    """Candidate groups."""
    space: int
    """Complete solutions in the space searched (partitions x order choices)."""
    states: int
    """Cuts visited."""
    labels: int
    """Partial solutions kept over all cuts."""
    seconds: float = 0.0
    evaluate_seconds: float = 0.0
    cpu_seconds: float = 0.0
    """Processor time of the search (wall time on a loaded machine grows with the load)."""
    extra: dict = field(default_factory=dict)

    @property
    def best(self) -> Solution:
        """The fastest solution (fewest predicted cycles)."""
        return self.front[0]


def join(graph: OpGraph, options: dict[frozenset, list[Option]]) -> tuple[list[Solution], dict]:
    """The FFM join: Pareto fronts of partial solutions cut by cut (see the module doc).
    ``options``: group -> its evaluated (order, cost) options. Returns the front at the
    full cut and counters (``states``, ``labels``)."""
    by_source: dict[str, list[tuple[frozenset, frozenset, list[Option]]]] = {}
    for group, opts in options.items():
        kept = pareto(opts)
        if not kept:
            continue
        external = frozenset(p for u in group for p in graph.preds[u] if p not in group)
        for u in group:
            if not (graph.preds[u] & group):
                by_source.setdefault(u, []).append((group, external, kept))
    full = frozenset(graph.units)
    labels: dict[frozenset, list[Solution]] = {frozenset(): [Solution((), ZERO)]}
    visited = kept_labels = 0
    pending = {0: [frozenset()]}
    for size in range(len(graph.units) + 1):
        for cut in pending.pop(size, []):
            front = pareto(labels[cut])
            labels[cut] = front
            visited += 1
            kept_labels += len(front)
            if cut == full:
                continue
            ready = [u for u in graph.units if u not in cut and graph.preds[u] <= cut]
            seen: set[frozenset] = set()
            for u in ready:
                for group, external, opts in by_source.get(u, ()):
                    if group in seen or not external <= cut or not cut.isdisjoint(group):
                        continue
                    seen.add(group)
                    extend(labels, pending, cut | group, front, opts)
    return labels.get(full, []), {"states": visited, "labels": kept_labels}


def extend(labels: dict, pending: dict, nxt: frozenset, front: list[Solution],
           opts: list[Option]) -> bool:
    """Adds every partial solution of ``front`` followed by each option of ``opts`` to the
    partial solutions at cut ``nxt`` (a cut seen for the first time is queued by size:
    returns True), pruning them to their front when they outgrow it."""
    bucket = labels.get(nxt)
    new = bucket is None
    if new:
        bucket = labels[nxt] = []
        pending.setdefault(len(nxt), []).append(nxt)
    for sol in front:
        for opt in opts:
            bucket.append(Solution(sol.kernels + (opt,), sol.cost + opt.cost))
    if len(bucket) > 4 * (len(front) * len(opts) + 16):
        labels[nxt] = pareto(bucket)
    return new


def count_space(graph: OpGraph, options: dict[frozenset, list[Option]]) -> int:
    """The size of the space searched: partitions into candidate groups whose kernels run in
    the program order of their first units, times each kernel's evaluated orders. Each
    partition is counted once (the next kernel is the one holding the first unit not yet
    covered); when units form a chain (each depends on the one before it) this is every
    acyclic partition, otherwise a lower bound."""
    by_first: dict[str, list[tuple[frozenset, frozenset, int]]] = {}
    for group, opts in options.items():
        if opts:
            external = frozenset(p for u in group for p in graph.preds[u] if p not in group)
            first = min(group, key=graph.position.__getitem__)
            by_first.setdefault(first, []).append((group, external, len(opts)))
    full = frozenset(graph.units)
    counts: dict[frozenset, int] = {frozenset(): 1}
    for size in range(len(graph.units)):
        for cut in [c for c in counts if len(c) == size]:
            n = counts[cut]
            first = next(u for u in graph.units if u not in cut)
            for group, external, k in by_first.get(first, ()):
                if cut.isdisjoint(group) and external <= cut:
                    nxt = cut | group
                    counts[nxt] = counts.get(nxt, 0) + n * k
    return counts.get(full, 0)


def exhaustive(graph: OpGraph, options: dict[frozenset, list[Option]]) -> list[Solution]:
    """Every acyclic partition of the units into candidate groups (assigning units in program
    order to a group so far or a new one, rejecting cycles at once), each with the Pareto
    front of its order choices; returns the Pareto front of all. For checking the search."""
    valid = {g for g, opts in options.items() if opts}
    fronts: list[Solution] = []
    units = graph.units
    # Units are assigned in program order, so a group being formed is a program-order
    # prefix of the candidate it becomes.
    prefixes = set()
    for g in valid:
        ordered = sorted(g, key=graph.position.__getitem__)
        prefixes.update(frozenset(ordered[:k]) for k in range(1, len(ordered) + 1))

    def assign(i: int, groups: list[set]):
        if i == len(units):
            parts = [frozenset(g) for g in groups]
            if any(p not in valid for p in parts) or not graph.is_acyclic(parts):
                return
            combos = [Solution((), ZERO)]
            for p in parts:
                combos = pareto([Solution(s.kernels + (o,), s.cost + o.cost)
                                 for s in combos for o in options[p]])
            fronts.extend(combos)
            return
        u = units[i]
        for g in groups:
            g.add(u)
            if frozenset(g) in prefixes and graph.is_acyclic([frozenset(x) for x in groups]):
                assign(i + 1, groups)
            g.discard(u)
        groups.append({u})
        if frozenset([u]) in prefixes and graph.is_acyclic([frozenset(x) for x in groups]):
            assign(i + 1, groups)
        groups.pop()

    assign(0, [])
    return pareto(fronts)


def search(graph: OpGraph, evaluator, max_units: int | None = None,
           max_span: int | None = None) -> SearchResult:
    """Enumerates the candidate groups, evaluates each (every legal order up to the
    evaluator's bound) once, and joins them (:func:`join`)."""
    start, cpu = time.perf_counter(), time.process_time()
    groups = graph.groups(max_units=max_units, max_span=max_span)
    evaluator.graph = graph
    evaluator.baseline(graph.units)
    evaluator.evaluate(groups, graph.units)
    evaluated = time.perf_counter()
    options = {g: evaluator.options(g) for g in groups}
    front, counters = join(graph, options)
    front = _dedupe(front)
    return SearchResult(front, sum(len(o) for o in options.values()), len(groups),
                        count_space(graph, options), counters["states"], counters["labels"],
                        time.perf_counter() - start, evaluated - start,
                        time.process_time() - cpu)


def _dedupe(front: list[Solution]) -> list[Solution]:
    seen, out = set(), []
    for sol in front:
        if sol.key() not in seen:
            seen.add(sol.key())
            out.append(sol)
    return out


__all__ = ["SearchResult", "Solution", "count_space", "exhaustive", "extend", "join",
           "search"]

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

import numpy as np

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
    full cut and counters (``states``, ``labels``).

    Partial solutions are rows of arrays (:class:`_Labels`): a cut's front is its rows'
    costs and label numbers; extending it by a group's options is one broadcast sum (max
    for the buffer and the lanes), and a cut's front one sort and a blocked dominance test
    (:func:`front_rows`). Only the front at the full cut is rebuilt as :class:`Solution`
    objects, from each label's parent and last kernel."""
    store = _Labels()
    by_source: dict[str, list[tuple[frozenset, frozenset, np.ndarray, np.ndarray]]] = {}
    for group, opts in options.items():
        kept = pareto(opts)
        if not kept:
            continue
        external = frozenset(p for u in group for p in graph.preds[u] if p not in group)
        entry = (group, external, store.add_options(kept),
                 np.array([o.cost.as_tuple() for o in kept], dtype=float))
        for u in group:
            if not (graph.preds[u] & group):
                by_source.setdefault(u, []).append(entry)
    full = frozenset(graph.units)
    empty = frozenset()
    buckets: dict[frozenset, _Bucket] = {empty: _Bucket()}
    buckets[empty].add(np.array([ZERO.as_tuple()]), np.array([-1]), np.array([-1]))
    visited = kept_labels = 0
    pending = {0: [empty]}
    final = (np.empty(0, dtype=np.int64), np.empty((0, 4)))
    for size in range(len(graph.units) + 1):
        for cut in pending.pop(size, []):
            ids, costs = buckets.pop(cut).front(store)
            visited += 1
            kept_labels += len(ids)
            if cut == full:
                final = (ids, costs)
                continue
            ready = [u for u in graph.units if u not in cut and graph.preds[u] <= cut]
            seen: set[frozenset] = set()
            for u in ready:
                for group, external, opt_ids, opt_costs in by_source.get(u, ()):
                    if group in seen or not external <= cut or not cut.isdisjoint(group):
                        continue
                    seen.add(group)
                    nxt = cut | group
                    bucket = buckets.get(nxt)
                    if bucket is None:
                        bucket = buckets[nxt] = _Bucket()
                        pending.setdefault(len(nxt), []).append(nxt)
                    bucket.add(*extended(costs, opt_costs, ids, opt_ids))
    solutions = [Solution(store.kernels(i), Cost(*(float(x) for x in row)))
                 for i, row in zip(final[0].tolist(), final[1])]
    return solutions, {"states": visited, "labels": kept_labels}


def extended(costs: np.ndarray, opt_costs: np.ndarray, ids: np.ndarray,
             opt_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every partial solution (rows ``costs``, labels ``ids``) followed by every option
    (rows ``opt_costs``, numbers ``opt_ids``): their costs (:meth:`Cost.__add__`: cycles
    and materialized bytes add, buffer and lanes take the max), parents and options."""
    m, k = len(costs), len(opt_costs)
    out = np.empty((m, k, 4))
    np.add(costs[:, None, 0], opt_costs[None, :, 0], out=out[:, :, 0])
    np.maximum(costs[:, None, 1], opt_costs[None, :, 1], out=out[:, :, 1])
    np.add(costs[:, None, 2], opt_costs[None, :, 2], out=out[:, :, 2])
    np.maximum(costs[:, None, 3], opt_costs[None, :, 3], out=out[:, :, 3])
    return out.reshape(m * k, 4), np.repeat(ids, k), np.tile(opt_ids, m)


def front_rows(costs: np.ndarray, block: int = 512) -> np.ndarray:
    """The rows of ``costs`` (one cost vector per row, all objectives minimized) that no
    other row dominates, one per distinct vector (the first), in the order of their tuples:
    :func:`~fuseflow.explore.evaluate.pareto` on arrays.

    Sorted by their tuples, a row can only be dominated by (or equal to) a row before it,
    and a row dominated by an earlier dropped row is dominated by the kept row that dropped
    it: so a row is kept unless a kept row of an earlier block, or an earlier row of its own
    block, is no worse in every objective (blocks of ``block`` rows, each tested at once
    against the kept rows and against itself). An earlier row is no worse in the first
    objective (the sort's first key), so only the others are compared."""
    n = len(costs)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    width = costs.shape[1]
    ranked = np.lexsort([np.arange(n)] + [costs[:, j] for j in range(width - 1, -1, -1)])
    # One contiguous array per objective compared (all but the first).
    columns = [np.ascontiguousarray(costs[ranked, j]) for j in range(1, width)]
    kept: list[np.ndarray] = []
    kept_cols = [np.empty(0) for _ in columns]
    earlier = np.tri(block, k=-1, dtype=bool)
    for lo in range(0, n, block):
        part = [c[lo:lo + block] for c in columns]
        size = len(part[0])
        # beaten[i, j]: row j (earlier in the block) is no worse than row i.
        beaten = earlier[:size, :size].copy()
        for c in part:
            beaten &= c[None, :] <= c[:, None]
        dominated = beaten.any(axis=1)
        if len(kept_cols[0]):
            dominated |= _beaten_by(kept_cols, part)
        keep = np.flatnonzero(~dominated)
        kept.append(lo + keep)
        kept_cols = [np.concatenate([k, c[keep]]) for k, c in zip(kept_cols, part)]
    return ranked[np.concatenate(kept)]


def _beaten_by(front: list[np.ndarray], rows: list[np.ndarray],
               chunk: int = 1 << 21) -> np.ndarray:
    """Whether each row (``rows``: one array per objective) has a row of ``front`` no worse
    in every objective."""
    n, m = len(rows[0]), len(front[0])
    out = np.zeros(n, dtype=bool)
    step = max(1, chunk // max(1, m))
    for lo in range(0, n, step):
        cols = [c[lo:lo + step] for c in rows]
        beaten = front[0][None, :] <= cols[0][:, None]
        for f, c in zip(front[1:], cols[1:]):
            beaten &= f[None, :] <= c[:, None]
        out[lo:lo + step] = beaten.any(axis=1)
    return out


class _Labels:
    """Every partial solution kept by the join: its parent label and last option (label
    numbers index these lists; -1: the empty solution)."""

    def __init__(self):
        self.parent: list[int] = []
        self.option: list[int] = []
        self.options: list[Option] = []

    def add_options(self, opts: list[Option]) -> np.ndarray:
        start = len(self.options)
        self.options += opts
        return np.arange(start, len(self.options))

    def add(self, parents: np.ndarray, options: np.ndarray) -> np.ndarray:
        start = len(self.parent)
        self.parent += parents.tolist()
        self.option += options.tolist()
        return np.arange(start, len(self.parent))

    def kernels(self, label: int) -> tuple[Option, ...]:
        out = []
        while label >= 0:
            out.append(self.options[self.option[label]])
            label = self.parent[label]
        return tuple(reversed(out))


class _Bucket:
    """The partial solutions reaching one cut, not yet filtered to their front: chunks of
    (costs, parent labels, options), compacted to their front when they outgrow it."""

    def __init__(self):
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.rows = 0
        self.limit = _COMPACT

    def add(self, costs: np.ndarray, parents: np.ndarray, options: np.ndarray) -> None:
        self.chunks.append((costs, parents, options))
        self.rows += len(costs)
        if self.rows > self.limit:
            costs, parents, options = self._filtered()
            self.chunks = [(costs, parents, options)]
            self.rows = len(costs)
            self.limit = max(_COMPACT, 4 * self.rows)

    def _filtered(self):
        costs = np.concatenate([c[0] for c in self.chunks])
        parents = np.concatenate([c[1] for c in self.chunks])
        options = np.concatenate([c[2] for c in self.chunks])
        keep = front_rows(costs)
        return costs[keep], parents[keep], options[keep]

    def front(self, store: _Labels) -> tuple[np.ndarray, np.ndarray]:
        """The front's label numbers (new labels in ``store``) and costs, by cost."""
        costs, parents, options = self._filtered()
        if len(parents) == 1 and parents[0] == -1 and options[0] == -1:
            return np.array([-1]), costs                  # the empty solution
        return store.add(parents, options), costs


_COMPACT = 8192
"""Rows a cut's bucket holds before it is filtered to its front on the way (the front is
what is kept; filtering often keeps the arrays small, filtering rarely saves sorts)."""


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


__all__ = ["SearchResult", "Solution", "count_space", "exhaustive", "extend", "extended",
           "front_rows", "join", "search"]

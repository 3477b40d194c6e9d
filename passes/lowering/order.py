"""Dataflow (loop) orders of a kernel: every order consistent with each tensor's level order.

A tensor use scans its levels outermost first, and writers build the output level by level,
so the order of index variables must contain each sparse use's (and each sparse output's)
variable sequence as a subsequence. Dense inputs and outputs constrain nothing: a row-major
dense tensor is read (written) through any permutation of its dimensions (the lowering binds
it through a host-side ``linalg.transpose`` before (after) the graph; see
:func:`dense_permutations`). ``legal_orders`` enumerates all such orders lazily (topological
sorts of the precedence constraints, no cap). ``ranked_orders`` ranks them by a documented
rule, minimizing in turn:

1. **recomputation**: for each reduction ``R``, the variables of its enclosing scopes that
   are placed before ``R``'s first bound variable without being free in ``R`` (``R`` is
   re-evaluated for each of their coordinates), plus the variables foreign to ``R`` (neither
   its own, bound or free, nor bound inside it) placed between its first bound variable and
   its last own variable (the part of ``R`` below them is repeated for each of their
   coordinates);
2. the number of dense inputs read out of storage order (each is bound through a host-side
   transpose; :func:`ranked_orders` keeps storage order unless transposing lowers rule 1);
3. the number of sparse accumulators (a bound variable with free variables of its reduction
   below it), then their total order;
4. the variables' numbers, lexicographically.

Kernels with at most :data:`EXHAUSTIVE_LIMIT` variables rank every legal order. Larger fused
kernels search best-first: states are the sets of variables placed so far (the increments of
rule 1 depend only on that set), expanded cheapest first, deepest first among equals,
candidates in (recomputation, transpose, accumulator, number) increment order, so complete
orders come out least recomputation first. Expansion stops after :data:`SEARCH_BUDGET`
candidates; the greedy order (the smallest increment at each step) competes with the first
searched order for the top rank.

:func:`ranked_orders` lists orders best first; the lowering takes the first one it can lower
(some orders need primitives it lacks, e.g. a max over a non-innermost variable), so the
default is the best *lowerable* order.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import replace
from typing import Iterator

from fuseflow.passes.lowering.einsum import KernelExpr, Op, Reduce, _var_rank

EXHAUSTIVE_LIMIT = 7
SEARCH_BUDGET = 20000


def constraints(kernel: KernelExpr) -> list[tuple[str, tuple[str, ...]]]:
    """Named variable sequences an order must respect (tensor uses and the outputs)."""
    seqs = [(str(u), u.vars) for u in kernel.uses if len(u.vars) > 1 and not u.dense]
    for root in kernel.roots:
        if len(root.out_vars) > 1 and not root.dense:
            name = "the output" if len(kernel.roots) == 1 else f"output #{root.index}"
            seqs.append((name, root.out_vars))
    return seqs


def dense_permutations(kernel: KernelExpr, order: tuple[str, ...],
                       ranks: list[int]) -> dict[int, tuple[int, ...]]:
    """For each dense use (by uid) that ``order`` visits out of storage order, the
    ``linalg.transpose`` permutation (result dim ``i`` = source dim ``perm[i]``) that makes the
    order visit it in storage order; its scanned dimensions are permuted among themselves.
    ``ranks`` gives the rank of each kernel input."""
    pos = {v: i for i, v in enumerate(order)}
    perms: dict[int, tuple[int, ...]] = {}
    for u in kernel.uses:
        if not u.dense or all(pos[a] < pos[b] for a, b in zip(u.vars, u.vars[1:])):
            continue
        perm = list(range(ranks[u.operand]))
        for slot, var in zip(u.levels, sorted(u.vars, key=pos.__getitem__)):
            perm[slot] = u.levels[u.vars.index(var)]
        perms[u.uid] = tuple(perm)
    return perms


def _predecessors(kernel: KernelExpr) -> dict[str, set[str]]:
    preds: dict[str, set[str]] = {v: set() for v in kernel.all_vars()}
    for _, seq in constraints(kernel):
        for a, b in zip(seq, seq[1:]):
            preds[b].add(a)
    return preds


def legal_orders(kernel: KernelExpr) -> Iterator[tuple[str, ...]]:
    """All orders of the kernel's index variables consistent with every level order."""
    preds = _predecessors(kernel)

    def extend(prefix: list[str], remaining: list[str]):
        if not remaining:
            yield tuple(prefix)
            return
        placed = set(prefix)
        for v in remaining:
            if preds[v] <= placed:
                yield from extend(prefix + [v], [r for r in remaining if r != v])

    yield from extend([], list(kernel.all_vars()))


class _Scopes:
    """Which reductions enclose which variables (for the recomputation measure), and the
    per-variable facts the order search asks about at every step, precomputed.

    Sets of variables are bit masks (``bit[v]``; :meth:`mask` of several): the search
    asks these questions of every state it expands (the placed set a mask too), and an
    integer ``&`` answers a subset or intersection test without building a set."""

    def __init__(self, kernel: KernelExpr):
        self.reduces = reduces = kernel.reduces()
        self.dense_sequences = _dense_sequences(kernel)
        self.rank = {v: _var_rank(v) for v in kernel.all_vars()}
        self.bit: dict[str, int] = {}
        for v in kernel.all_vars():
            self.bit[v] = 1 << len(self.bit)
        self.enclosing: dict[int, set[str]] = {}   # rid -> variables of enclosing scopes
        self.own: dict[int, set[str]] = {r.rid: set(r.vars) | set(r.free) for r in reduces}
        self.inner: dict[int, set[str]] = {}       # rid -> own and nested bound variables
        for root in kernel.roots:
            self._walk(root.expr, set(root.out_vars))
        mask = self.mask
        # Per reduction: its bound variables, its own, the variables whose placement
        # repeats it before it starts (enclosing, not own) and its own and nested bound.
        self.reductions = [(mask(r.vars), mask(self.own[r.rid]),
                            mask(self.enclosing[r.rid] - self.own[r.rid]),
                            mask(self.inner[r.rid])) for r in reduces]
        self.frees_bound_by: dict[str, list[int]] = {}   # v -> free sets of its reductions
        for r in reduces:
            for v in set(r.vars):
                self.frees_bound_by.setdefault(v, []).append(mask(r.free))
        self.dense_prefixes: dict[str, list[int]] = {}   # v -> vars before it in dense uses
        for seq in self.dense_sequences:
            for v in dict.fromkeys(seq):
                self.dense_prefixes.setdefault(v, []).append(mask(seq[:seq.index(v)]))
        self.var_of = {b: v for v, b in self.bit.items()}

    def mask(self, variables) -> int:
        """The bit mask of ``variables`` (a variable seen first gets the next bit)."""
        m = 0
        for v in variables:
            b = self.bit.get(v)
            if b is None:
                b = self.bit[v] = 1 << len(self.bit)
            m |= b
        return m

    def _walk(self, expr, outer: set[str]) -> set[str]:
        """Records scopes below ``expr``; returns the variables bound inside it."""
        if isinstance(expr, Reduce):
            self.enclosing[expr.rid] = set(outer)
            nested = self._walk(expr.body, outer | set(expr.vars))
            self.inner[expr.rid] = nested | self.own[expr.rid]
            return nested | set(expr.vars)
        if isinstance(expr, Op):
            return set().union(*(self._walk(a, outer) for a in expr.args))
        return set()

    def recompute_increments(self, ready, placed: int) -> dict[str, int]:
        """:meth:`recompute_increment` of every variable of ``ready`` (one pass over the
        reductions); ``placed`` a mask."""
        counts = dict.fromkeys(ready, 0)
        bit, var_of = self.bit, self.var_of
        ready_mask = 0
        for v in ready:
            ready_mask |= bit[v]
        for bound, own, outside, inner in self.reductions:
            if not placed & bound:
                hits = outside & ready_mask
            elif own & ~placed:
                hits = ready_mask & ~inner
            else:
                continue
            while hits:
                low = hits & -hits
                counts[var_of[low]] += 1
                hits ^= low
        return counts

    def recompute_increment(self, v: str, placed: int) -> int:
        """Reductions that placing ``v`` (after the mask ``placed``) would repeat: not yet
        started ones enclosed by ``v``, and started, unfinished ones ``v`` is foreign to
        (:meth:`recompute_increments` of ``v`` alone)."""
        b = self.bit[v]
        n = 0
        for bound, own, outside, inner in self.reductions:
            if not placed & bound:
                if outside & b:
                    n += 1
            elif own & ~placed and not inner & b:
                n += 1
        return n

    def step_keys(self, ready, placed: int) -> list[tuple]:
        """The search's sort key of placing each variable of ``ready`` after the mask
        ``placed``: the reductions it repeats (:meth:`recompute_increments`), the dense
        uses and results it visits out of storage order (a variable before it not placed),
        and the free variables, not placed, of the reductions it binds."""
        recompute = self.recompute_increments(ready, placed)
        dense, frees, rank = self.dense_prefixes, self.frees_bound_by, self.rank
        keys = []
        for v in ready:
            transpose = accumulator = 0
            for before in dense.get(v, ()):
                if before & ~placed:
                    transpose += 1
            for free in frees.get(v, ()):
                accumulator += (free & ~placed).bit_count()
            keys.append((recompute[v], transpose, accumulator, rank[v], v))
        return keys


def accumulator_orders(kernel: KernelExpr, order: tuple[str, ...],
                       scopes: _Scopes | None = None) -> list[int]:
    """For each bound variable with free variables of its reduction below it: how many
    (``scopes``: the kernel's, their reductions instead of collecting them again)."""
    pos = {v: i for i, v in enumerate(order)}
    result = []
    for r in (scopes.reduces if scopes is not None else kernel.reduces()):
        for b in r.vars:
            below = sum(1 for f in r.free if pos[f] > pos[b])
            if below:
                result.append(below)
    return result


def recomputation(kernel: KernelExpr, order: tuple[str, ...],
                  scopes: _Scopes | None = None) -> int:
    """The recomputation measure of ``order`` (rule 1 of the module docstring); ``scopes``:
    the kernel's, when the caller has them (ranking many orders of one kernel)."""
    if scopes is None:
        scopes = _Scopes(kernel)
    placed = 0
    total = 0
    for v in order:
        total += scopes.recompute_increment(v, placed)
        placed |= scopes.bit[v]
    return total


def _dense_sequences(kernel: KernelExpr) -> list[tuple[str, ...]]:
    """The variable sequences of the dense uses and dense results (each read or written
    transposed when an order visits it out of storage order)."""
    return [u.vars for u in kernel.uses if u.dense] + \
        [r.out_vars for r in kernel.roots if r.dense]


def transposed_uses(kernel: KernelExpr, order: tuple[str, ...],
                    scopes: _Scopes | None = None) -> int:
    """How many dense uses and results ``order`` visits out of storage order (rule 2;
    ``scopes``: the kernel's, their dense sequences)."""
    pos = {v: i for i, v in enumerate(order)}
    sequences = scopes.dense_sequences if scopes is not None else _dense_sequences(kernel)
    return sum(1 for seq in sequences
               if any(pos[a] > pos[b] for a, b in zip(seq, seq[1:])))


def order_cost(kernel: KernelExpr, order: tuple[str, ...], scopes: _Scopes | None = None):
    """The sort key of the default rule (smaller is better); ``scopes`` as
    :func:`recomputation`'s."""
    if scopes is None:
        scopes = _Scopes(kernel)
    accs = accumulator_orders(kernel, order, scopes)
    return (recomputation(kernel, order, scopes), transposed_uses(kernel, order, scopes),
            len(accs), sum(accs), tuple(scopes.rank[v] for v in order))


def _greedy_order(kernel: KernelExpr, scopes: _Scopes) -> tuple[str, ...] | None:
    preds = {v: scopes.mask(p) for v, p in _predecessors(kernel).items()}
    placed: list[str] = []
    done = 0
    remaining = list(kernel.all_vars())
    while remaining:
        ready = [v for v in remaining if not preds[v] & ~done]
        if not ready:
            return None
        best = min(scopes.step_keys(ready, done), key=lambda k: k[:4])[4]
        placed.append(best)
        done |= scopes.bit[best]
        remaining.remove(best)
    return tuple(placed)


def _searched_orders(kernel: KernelExpr, scopes: _Scopes) -> Iterator[tuple[str, ...]]:
    """Complete orders in best-first order, least recomputation first (see the module doc)."""
    bit = scopes.bit
    preds = {v: scopes.mask(p) for v, p in _predecessors(kernel).items()}
    all_vars = kernel.all_vars()
    pushed = 0
    heap = [(0, 0, 0, (), 0)]                   # ..., the prefix and its mask
    seen: set[int] = set()
    while heap:
        cost, _, _, prefix, placed = heapq.heappop(heap)
        if len(prefix) == len(all_vars):
            yield prefix
            continue
        if placed in seen or pushed >= SEARCH_BUDGET:
            continue
        seen.add(placed)
        ready = [v for v in all_vars if not placed & bit[v] and not preds[v] & ~placed]
        keyed = sorted(scopes.step_keys(ready, placed))
        for step, _, _, _, v in keyed:       # preferred candidates pop first among equals
            pushed += 1
            heapq.heappush(heap, (cost + step, -len(prefix) - 1, pushed, prefix + (v,),
                                  placed | bit[v]))


def ranked_orders(kernel: KernelExpr, first: int = 16) -> Iterator[tuple[str, ...]]:
    """Legal orders, the default rule's choice first, then the next best ones.

    Orders that keep every dense input in storage order come first unless an order reading
    some dense input transposed has strictly less recomputation (the measure counts repeated
    reductions, not their sizes, so a transposition must pay for itself by that count); then
    the ``first`` best of the other kind, then the rest."""
    seen: set[tuple[str, ...]] = set()
    free = _ranked(kernel)
    strict = _ranked(_strict(kernel))
    best_free, best_strict = next(free, None), next(strict, None)
    free = itertools.chain([best_free] if best_free else [], free)
    strict = itertools.chain([best_strict] if best_strict else [], strict)
    if best_strict is None or (best_free is not None and recomputation(kernel, best_free)
                               < recomputation(kernel, best_strict)):
        sources = (itertools.islice(free, first), strict, free)
    else:
        sources = (itertools.islice(strict, first), free, strict)
    for source in sources:
        for order in source:
            if order not in seen:
                seen.add(order)
                yield order


def _strict(kernel: KernelExpr) -> KernelExpr:
    """``kernel`` with its dense uses and results constrained to their storage order."""
    strict = kernel.with_uses({u.uid: replace(u, dense=False) for u in kernel.uses if u.dense})
    strict.roots = [replace(r, dense=False) for r in strict.roots]
    return strict


def _ranked(kernel: KernelExpr) -> Iterator[tuple[str, ...]]:
    """:func:`ranked_orders` under ``kernel``'s own constraints (for kernels above
    :data:`EXHAUSTIVE_LIMIT` variables: the search's orders, then the greedy order)."""
    scopes = _Scopes(kernel)
    if len(kernel.all_vars()) <= EXHAUSTIVE_LIMIT:
        yield from sorted(legal_orders(kernel), key=lambda o: order_cost(kernel, o, scopes))
        return
    searched = _searched_orders(kernel, scopes)
    first = next(searched, None)
    greedy = _greedy_order(kernel, scopes)
    ranked = sorted({o for o in (first, greedy) if o},
                    key=lambda o: order_cost(kernel, o, scopes))
    yield from ranked
    yield from (o for o in searched if o not in ranked)


def violation(kernel: KernelExpr, order: tuple[str, ...]) -> str | None:
    """Why ``order`` is illegal (naming the tensor whose level order it breaks), or None."""
    if sorted(order) != sorted(kernel.all_vars()):
        return (f"order ({', '.join(order)}) must be a permutation of the kernel's index "
                f"variables ({', '.join(kernel.all_vars())})")
    pos = {v: i for i, v in enumerate(order)}
    for name, seq in constraints(kernel):
        if any(pos[a] > pos[b] for a, b in zip(seq, seq[1:])):
            return f"order ({', '.join(order)}) visits the levels of {name} out of storage order"
    return None

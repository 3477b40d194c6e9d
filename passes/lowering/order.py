"""Dataflow (loop) orders of a kernel: every order consistent with each tensor's level order.

A tensor use scans its levels outermost first, and writers build the output level by level,
so the order of index variables must contain each use's (and each output's) variable
sequence as a subsequence. ``legal_orders`` enumerates all such orders lazily (topological
sorts of the precedence constraints, no cap). ``default_order`` picks one by a documented
rule, minimizing in turn:

1. **recomputation**: for each reduction ``R``, the variables of its enclosing scopes that
   are placed before ``R``'s first bound variable without being free in ``R`` (``R`` is
   re-evaluated for each of their coordinates);
2. the number of sparse accumulators (a bound variable with free variables of its reduction
   below it), then their total order;
3. the variables' numbers, lexicographically.

Kernels with at most :data:`EXHAUSTIVE_LIMIT` variables take the minimum over every legal
order; larger fused kernels build the order greedily, placing at each step the available
variable with the smallest (recomputation, accumulator, number) increment.
"""

from __future__ import annotations

from typing import Iterator

from fuseflow.passes.lowering.einsum import KernelExpr, Op, Reduce, _var_rank

EXHAUSTIVE_LIMIT = 7


def constraints(kernel: KernelExpr) -> list[tuple[str, tuple[str, ...]]]:
    """Named variable sequences an order must respect (tensor uses and the outputs)."""
    seqs = [(str(u), u.vars) for u in kernel.uses if len(u.vars) > 1]
    for root in kernel.roots:
        if len(root.out_vars) > 1:
            name = "the output" if len(kernel.roots) == 1 else f"output #{root.index}"
            seqs.append((name, root.out_vars))
    return seqs


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
    """Which reductions enclose which variables (for the recomputation measure)."""

    def __init__(self, kernel: KernelExpr):
        self.reduces = kernel.reduces()
        self.enclosing: dict[int, set[str]] = {}   # rid -> variables of enclosing scopes
        for root in kernel.roots:
            self._walk(root.expr, set(root.out_vars))

    def _walk(self, expr, outer: set[str]) -> None:
        if isinstance(expr, Reduce):
            self.enclosing[expr.rid] = set(outer)
            self._walk(expr.body, outer | set(expr.vars))
        elif isinstance(expr, Op):
            for a in expr.args:
                self._walk(a, outer)

    def recompute_increment(self, v: str, placed: set[str]) -> int:
        """Reductions not yet started that placing ``v`` would repeat."""
        return sum(1 for r in self.reduces
                   if not placed & set(r.vars) and v in self.enclosing[r.rid]
                   and v not in r.free and v not in r.vars)

    def accumulator_increment(self, v: str, placed: set[str]) -> int:
        return sum(len([f for f in r.free if f not in placed]) for r in self.reduces
                   if v in r.vars)


def accumulator_orders(kernel: KernelExpr, order: tuple[str, ...]) -> list[int]:
    """For each bound variable with free variables of its reduction below it: how many."""
    pos = {v: i for i, v in enumerate(order)}
    result = []
    for r in kernel.reduces():
        for b in r.vars:
            below = sum(1 for f in r.free if pos[f] > pos[b])
            if below:
                result.append(below)
    return result


def recomputation(kernel: KernelExpr, order: tuple[str, ...]) -> int:
    """The recomputation measure of ``order`` (rule 1 of the module docstring)."""
    scopes = _Scopes(kernel)
    placed: set[str] = set()
    total = 0
    for v in order:
        total += scopes.recompute_increment(v, placed)
        placed.add(v)
    return total


def order_cost(kernel: KernelExpr, order: tuple[str, ...]):
    """The sort key of the default rule (smaller is better)."""
    accs = accumulator_orders(kernel, order)
    return (recomputation(kernel, order), len(accs), sum(accs),
            tuple(_var_rank(v) for v in order))


def _greedy_order(kernel: KernelExpr) -> tuple[str, ...] | None:
    preds = _predecessors(kernel)
    scopes = _Scopes(kernel)
    placed: list[str] = []
    remaining = list(kernel.all_vars())
    while remaining:
        done = set(placed)
        ready = [v for v in remaining if preds[v] <= done]
        if not ready:
            return None
        best = min(ready, key=lambda v: (scopes.recompute_increment(v, done),
                                         scopes.accumulator_increment(v, done), _var_rank(v)))
        placed.append(best)
        remaining.remove(best)
    return tuple(placed)


def default_order(kernel: KernelExpr) -> tuple[str, ...] | None:
    """The default dataflow order, or None when no legal order exists."""
    if len(kernel.all_vars()) > EXHAUSTIVE_LIMIT:
        return _greedy_order(kernel)
    best, best_cost = None, None
    for order in legal_orders(kernel):
        cost = order_cost(kernel, order)
        if best is None or cost < best_cost:
            best, best_cost = order, cost
    return best


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

"""Dataflow (loop) orders of a kernel: every order consistent with each tensor's level order.

A tensor use scans its levels outermost first, and writers build the output level by level,
so the order of index variables must contain each use's (and the output's) variable sequence
as a subsequence. ``legal_orders`` enumerates all such orders (topological sorts of the
precedence constraints, no cap). ``default_order`` picks one by a documented rule:

1. fewest sparse accumulators (a reduction variable with non-reduced variables below it);
2. then the lowest total accumulator order;
3. then the lexicographically smallest order by the variables' loop numbers.
"""

from __future__ import annotations

from typing import Iterator

from fuseflow.passes.lowering.einsum import Einsum


def constraints(einsum: Einsum) -> list[tuple[str, tuple[str, ...]]]:
    """Named variable sequences an order must respect (tensor uses and the output)."""
    seqs = [(str(u), u.vars) for u in einsum.uses if len(u.vars) > 1]
    if len(einsum.out_vars) > 1:
        seqs.append(("the output", einsum.out_vars))
    return seqs


def legal_orders(einsum: Einsum) -> Iterator[tuple[str, ...]]:
    """All orders of the kernel's index variables consistent with every level order."""
    variables = list(einsum.all_vars())
    preds: dict[str, set[str]] = {v: set() for v in variables}
    for _, seq in constraints(einsum):
        for a, b in zip(seq, seq[1:]):
            preds[b].add(a)

    def extend(prefix: list[str], remaining: list[str]):
        if not remaining:
            yield tuple(prefix)
            return
        placed = set(prefix)
        for v in remaining:
            if preds[v] <= placed:
                yield from extend(prefix + [v], [r for r in remaining if r != v])

    yield from extend([], variables)


def accumulator_orders(einsum: Einsum, order: tuple[str, ...]) -> list[int]:
    """For each reduction variable (inner to outer), how many kept variables lie below it."""
    result = []
    for pos in reversed(range(len(order))):
        if order[pos] in einsum.reduce_vars:
            result.append(sum(1 for v in order[pos + 1:] if v not in einsum.reduce_vars))
    return result


def order_cost(einsum: Einsum, order: tuple[str, ...]):
    """The sort key of the default rule (smaller is better)."""
    accs = [k for k in accumulator_orders(einsum, order) if k > 0]
    rank = {v: i for i, v in enumerate(einsum.all_vars())}
    return (len(accs), sum(accs), tuple(rank[v] for v in order))


def default_order(einsum: Einsum) -> tuple[str, ...] | None:
    """The default dataflow order, or None when no legal order exists."""
    best = None
    for order in legal_orders(einsum):
        if best is None or order_cost(einsum, order) < order_cost(einsum, best):
            best = order
    return best


def violation(einsum: Einsum, order: tuple[str, ...]) -> str | None:
    """Why ``order`` is illegal (naming the tensor whose level order it breaks), or None."""
    if sorted(order) != sorted(einsum.all_vars()):
        return (f"order ({', '.join(order)}) must be a permutation of the kernel's index "
                f"variables ({', '.join(einsum.all_vars())})")
    pos = {v: i for i, v in enumerate(order)}
    for name, seq in constraints(einsum):
        if any(pos[a] > pos[b] for a, b in zip(seq, seq[1:])):
            return f"order ({', '.join(order)}) visits the levels of {name} out of storage order"
    return None

"""Copies of one intermediate in a kernel's fused index notation share their bound variables.

The extraction inlines an intermediate once per use and gives every copy fresh variables, so a
value read by several consumers (a layernorm's input, read by its mean, its variance and the
normalization; a residual stream, written and normalized by the next decoder) becomes several
structurally identical reductions over different variables. :func:`unify_copies` renames the
variables bound inside each copy to those of the first copy with the same structure (the same
ops, operands, levels, constants and extents, with variables matched by position, whatever
their names). Each copy keeps its own nodes (its reduction ids and uses), so the lowering
still treats them one by one; but the order now places their loops together, and the
hash-consed graph builder turns copies evaluated in the same iteration into one set of
streams, broadcast to every consumer, instead of recomputing the intermediate per use.
"""

from __future__ import annotations

from dataclasses import replace

from fuseflow.passes.lowering.einsum import (
    Const,
    KernelExpr,
    Op,
    Reduce,
    Use,
    _collect,
    _var_rank,
)


def _shape(expr, sizes: dict, names: dict) -> tuple:
    """A key equal for subtrees that differ only in variable names (numbered by first use)."""

    def var(v):
        return names.setdefault(v, (len(names), sizes.get(v)))

    if isinstance(expr, Use):
        return ("use", expr.operand, expr.levels, tuple(var(v) for v in expr.vars), expr.dense,
                getattr(expr, "blocks", None))
    if isinstance(expr, Const):
        return ("const", expr.value)
    if isinstance(expr, Op):
        return ("op", expr.kind, expr.fill, tuple(_shape(a, sizes, names) for a in expr.args))
    if isinstance(expr, Reduce):
        bound = tuple(var(v) for v in expr.vars)
        return ("reduce", expr.kind, expr.init, bound, _shape(expr.body, sizes, names))
    raise TypeError(f"unexpected node {expr!r}")


def _bound(expr, found: list) -> list:
    """Variables bound by the reductions of ``expr``, in traversal order."""
    if isinstance(expr, Reduce):
        found.extend(expr.vars)
        _bound(expr.body, found)
    elif isinstance(expr, Op):
        for a in expr.args:
            _bound(a, found)
    return found


def _rename(expr, mapping: dict):
    if isinstance(expr, Use):
        return replace(expr, vars=tuple(mapping.get(v, v) for v in expr.vars))
    if isinstance(expr, Op):
        return replace(expr, args=tuple(_rename(a, mapping) for a in expr.args))
    if isinstance(expr, Reduce):
        free = tuple(sorted({mapping.get(v, v) for v in expr.free}, key=_var_rank))
        return replace(expr, vars=tuple(mapping.get(v, v) for v in expr.vars),
                       body=_rename(expr.body, mapping), free=free)
    return expr


def unify_copies(kernel: KernelExpr) -> KernelExpr:
    """``kernel`` with the bound variables of every copy of a reduction renamed to those of
    its first copy; variables no longer used are dropped from ``sizes``."""
    first: dict[tuple, Reduce] = {}

    def visit(expr):
        if isinstance(expr, Op):
            return replace(expr, args=tuple(visit(a) for a in expr.args))
        if isinstance(expr, Reduce):
            key = (expr.free, _shape(expr, kernel.sizes, {v: (v,) for v in expr.free}))
            canon = first.get(key)
            if canon is not None:
                return _rename(expr, dict(zip(_bound(expr, []), _bound(canon, []))))
            new = replace(expr, body=visit(expr.body))
            first[key] = new
            return new
        return expr

    roots = [replace(r, expr=visit(r.expr)) for r in kernel.roots]
    uses: list[Use] = []
    for root in roots:
        _collect(root.expr, Use, uses)
    renamed = {u.uid: u for u in uses}
    used = {v for u in uses for v in u.vars} | {v for r in roots for v in r.out_vars}
    sizes = {v: n for v, n in kernel.sizes.items() if v in used}
    return KernelExpr(roots, [renamed.get(u.uid, u) for u in kernel.uses], sizes, kernel.loc)

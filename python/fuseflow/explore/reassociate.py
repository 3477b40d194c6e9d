"""Algebraic reassociation as an exploration axis: ``(A·X)·W`` or ``A·(X·W)``.

:func:`chains` finds, in an imported linalg module, products whose left operand is another
product used nowhere else (looking through a ``tensor.cast`` that only re-types it):
``op2 = matmul(op1(x, y), b)``. :func:`reassociate` rewrites chosen chains into
``matmul(x, matmul(y, b))`` on a copy of the module. The new inner product ``y·b`` takes the
FX node (and module) of the outer one (it multiplies by the same operand ``b``, e.g. a
layer's weight) and the new outer product ``x·(y·b)`` the node of the inner one (it
multiplies by ``x``, e.g. the adjacency), so the units of a fusion plan keep their meaning
and only their dependence flips. The op graph is read from the rewritten module
(:func:`fuseflow.explore.opgraph.program_graph`), so the search sees the new order.

Which association is better depends on shapes and sparsity: for a GCN layer, ``A·(X·W)``
multiplies the narrow ``X·W`` per edge, and ``(A·X)·W`` the wide ``A·X`` per weight; fused,
``A·(X·W)`` recomputes ``X·W`` per edge. The explorer scores both with the cost model.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow import mlir
from fuseflow.frontend import MODULE_ATTR, NODE_ATTR
from fuseflow.passes.ir_utils import defining_op, op_of

REASSOCIATED_ATTR = "fuseflow.reassociated"
"""On the products :func:`reassociate` creates: ``"inner:<chain>"`` on the new inner product
(``y·b``), ``"outer:<FX node>"`` on the new outer one (``x·(y·b)``, the value the chain's
original outer product, of that FX node, computed)."""


@dataclass(frozen=True)
class Chain:
    """``outer = matmul(inner(x, y), b)``: the FX nodes of the two products."""

    inner: str
    outer: str

    def __str__(self) -> str:
        return f"({self.inner})·{self.outer} -> {self.inner}·({self.outer})"


def _main_ops(module) -> list:
    fn = next(op.operation for op in module.body.operations
              if op.operation.name == "func.func")
    return [op_of(o) for o in fn.regions[0].blocks[0].operations]


def _node(op) -> str:
    return mlir.StringAttr(op.attributes[NODE_ATTR]).value if NODE_ATTR in op.attributes else ""


def _single_use(value) -> bool:
    return len(list(value.uses)) == 1


def _chain_ops(op2):
    """``(op1, cast)`` when ``op2`` is the outer product of a chain, else None."""
    if op2.name != "linalg.matmul":
        return None
    lhs = op2.operands[0]
    producer = defining_op(lhs)
    cast = None
    if producer is not None and producer.name == "tensor.cast" and _single_use(lhs):
        cast, lhs = producer, producer.operands[0]
        producer = defining_op(lhs)
    if producer is None or producer.name != "linalg.matmul" or not _single_use(lhs):
        return None
    return producer, cast


def chains(module) -> list[Chain]:
    """The reassociable product chains of ``module``'s ``@main``, in program order."""
    found = []
    for op in _main_ops(module):
        got = _chain_ops(op)
        if got is not None and _node(got[0]) and _node(op):
            found.append(Chain(_node(got[0]), _node(op)))
    return found


def reassociate(module, chosen) -> "mlir.Module":
    """A copy of ``module`` with the chains ``chosen`` (from :func:`chains`) rewritten to
    ``x·(y·b)``."""
    from fuseflow.compiler import clone_module

    chosen = set(chosen)
    copy = clone_module(module)
    with copy.context:
        for op2 in _main_ops(copy):
            got = _chain_ops(op2)
            if got is None or Chain(_node(got[0]), _node(op2)) not in chosen:
                continue
            _rewrite(op2, *got, Chain(_node(got[0]), _node(op2)))
    return copy


def _rewrite(op2, op1, cast, chain: Chain) -> None:
    x, y = op1.operands[0], op1.operands[1]
    b, init = op2.operands[1], op2.operands[2]
    y_type, b_type = mlir.RankedTensorType(y.type), mlir.RankedTensorType(b.type)
    element = mlir.RankedTensorType(op2.results[0].type).element_type
    inner_attrs = {k: op2.attributes[k] for k in (NODE_ATTR, MODULE_ATTR)
                   if k in op2.attributes}
    outer_attrs = {k: op1.attributes[k] for k in (NODE_ATTR, MODULE_ATTR)
                   if k in op1.attributes}
    with mlir.InsertionPoint(op2), op2.location:
        zero = mlir.arith.ConstantOp(element, 0.0).result
        empty = mlir.tensor.EmptyOp([y_type.shape[0], b_type.shape[1]], element).result
        fill = mlir.linalg.fill(zero, outs=[empty])
        inner = mlir.linalg.matmul(y, b, outs=[fill])
        outer = mlir.linalg.matmul(x, inner, outs=[init])
    for value, attrs in ((fill, inner_attrs), (inner, inner_attrs), (outer, outer_attrs)):
        owner = value.owner
        for key, attr in attrs.items():
            owner.attributes[key] = attr
    inner.owner.attributes[REASSOCIATED_ATTR] = mlir.StringAttr.get(f"inner:{chain}")
    outer.owner.attributes[REASSOCIATED_ATTR] = mlir.StringAttr.get(f"outer:{chain.outer}")
    op2.results[0].replace_all_uses_with(outer)
    op2.erase()
    if cast is not None:
        cast.erase()
    op1.erase()

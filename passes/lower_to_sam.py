"""``fuseflow-lower-to-sam``: replaces each ``fuse.kernel`` by a ``sam.graph``.

Before::

    %k = "fuse.kernel"(%A, %x) ({
    ^bb0(%a: tensor<4x5xf32, #CSR>, %v: tensor<5xf32>):
      %r = linalg.generic {..., iterator_types = ["parallel", "reduction"]}
             ins(%a, %v : ...) outs(%fill : tensor<4xf32>) { mulf; addf }
      gpu.yield %r : tensor<4xf32>
    }) : (...) -> tensor<4xf32>

After (SpMV, order d0,d1)::

    %g = "sam.graph"(%A, %x) ({
    ^bb0(%a: ..., %v: ...):
      %root = "sam.root"() : () -> !sam.ref
      %i, %ri = "sam.scan"(%root, %a) {level = 0} ...
      ... scanners, repeaters, sam.intersect, sam.array, sam.alu {op = "mul"}, sam.reduce ...
      "sam.level_write"(%i) {result = 0, level = 0} : (!sam.crd) -> ()
      "sam.value_write"(%y) {result = 0} : (!sam.val<f32, array<i64>>) -> ()
      gpu.yield
    }) {fuseflow.einsum = "...", fuseflow.order = ["d0", "d1"]} : (...) -> tensor<4xf32>

Option ``order`` picks the dataflow order (comma-separated loop names ``d0,d1,...``);
by default the rule in :mod:`fuseflow.passes.lowering.order` chooses.

Kernels with blocked (BSR) levels first have their blocked dimensions split into block and
offset variables (:mod:`fuseflow.passes.lowering.blocking`): other operands are then read
through host-side ``tensor.expand_shape`` views placed before the graph, and results written
expanded are turned back into the kernel's result types after it (``linalg.transpose``,
``tensor.collapse_shape``), e.g. for BSR SpMM::

    %bx = tensor.expand_shape %B [[0, 1], [2]] ... : tensor<6x3xf32> into tensor<3x2x3xf32>
    %g = "sam.graph"(%A, %bx) ({ ... four scans of %A's levels ... })
        {fuseflow.order = ["d0", "d2", "d3", "d4", "d1"]} : (...) -> tensor<2x2x3xf32>
    %c = tensor.collapse_shape %g [[0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, create_container
from fuseflow.passes.base import Pass, PassFailure, emit_error
from fuseflow.passes.ir_utils import build_transpose, funcs, is_trivial_producer, op_of
from fuseflow.passes.lowering.blocking import Blocking, split_blocked
from fuseflow.passes.lowering.builder import GraphBuilder
from fuseflow.passes.lowering.copies import unify_copies
from fuseflow.passes.lowering.einsum import LoweringError, extract_kernel
from fuseflow.passes.lowering.lower import KernelLowering
from fuseflow.passes.lowering.order import (dense_permutations, legal_orders, ranked_orders,
                                            violation)


@dataclass(frozen=True)
class LowerToSamPass(Pass):
    """Lowers fuse.kernel regions of linalg.generic ops to sam.graph dataflow graphs."""

    ARGUMENT = "fuseflow-lower-to-sam"
    order: tuple[str, ...] = ()

    def run(self, module) -> None:
        failed = False
        for fn in funcs(module):
            for op in list(fn.regions[0].blocks[0].operations):
                if op_of(op).name == "fuse.kernel":
                    try:
                        lower_kernel(op_of(op), self.order)
                    except LoweringError as err:
                        emit_error(err.loc, str(err))
                        failed = True
        if failed:
            raise PassFailure("fuseflow-lower-to-sam: see the located errors")


def _first_compute_location(kernel):
    """Where a kernel's errors are reported: its last compute op (the one yielding a result)."""
    ops = [op_of(o) for o in kernel.regions[0].blocks[0].operations]
    compute = [o for o in ops[:-1] if not is_trivial_producer(o) and o.name != "tensor.cast"]
    return compute[-1].location if compute else kernel.location


def _bind_host_views(expr, inputs, kernel, plans):
    """Re-binds uses to values that host-side ops compute before ``kernel``.

    ``plans`` maps a use's uid to ``(key, build, use)``: ``build(source)`` creates the op that
    reads the use's input and returns it (uses with equal keys share one op), ``use`` is the
    re-bound use (its ``operand`` still names the source). Returns the expression over the
    graph's operands, the operands (the inputs that are still read, then the new values) and
    the ops created."""
    inputs = list(inputs)
    made: dict = {}
    created, replacement = [], {}
    for uid, (key, build, use) in plans.items():
        if key not in made:
            with mlir.InsertionPoint(kernel), kernel.location:
                created.append(build(inputs[use.operand]))
            inputs.append(created[-1].results[0])
            made[key] = len(inputs) - 1
        replacement[uid] = replace(use, operand=made[key])
    if not replacement:
        return expr, inputs, created
    sources = {expr.uses[uid].operand for uid in replacement}
    expr = expr.with_uses(replacement)
    # An input now read only through host ops is no graph operand.
    dropped = sources - {u.operand for u in expr.uses}
    index = {old: new for new, old in enumerate(i for i in range(len(inputs)) if i not in dropped)}
    expr = expr.with_uses({u.uid: replace(u, operand=index[u.operand]) for u in expr.uses})
    return expr, [v for i, v in enumerate(inputs) if i not in dropped], created


def _erase_host_ops(ops) -> None:
    """Erases host ops made for a failed attempt, last first, with their ``tensor.empty`` inits."""
    for op in reversed(ops):
        inits = [op_of(v.owner) for v in op.operands
                 if not isinstance(v.owner, mlir.Block) and op_of(v.owner).name == "tensor.empty"]
        op.erase()
        for init in inits:
            init.erase()


def _transpose(source, perm):
    shape = mlir.RankedTensorType(source.type).shape
    result_type = mlir.RankedTensorType.get(
        [shape[d] for d in perm], mlir.RankedTensorType(source.type).element_type)
    return build_transpose(source, result_type, list(perm))


def _bind_dense_permutations(expr, order, inputs, kernel):
    """Dense uses visited out of storage order read a host-side ``linalg.transpose`` of their
    input instead (see :func:`_bind_host_views` for the results)."""
    ranks = [mlir.RankedTensorType(v.type).rank for v in inputs]
    pos = {v: i for i, v in enumerate(order)}
    plans = {}
    for uid, perm in dense_permutations(expr, order, ranks).items():
        use = expr.uses[uid]
        plans[uid] = ((use.operand, perm), lambda source, perm=perm: _transpose(source, perm),
                      replace(use, vars=tuple(sorted(use.vars, key=pos.__getitem__))))
    return _bind_host_views(expr, inputs, kernel, plans)


def _bind_blocked_views(expr, blocking: Blocking, kernel):
    """Uses that read a dense level over a split (blocked) dimension read a host-side
    ``tensor.expand_shape`` of their input (see :mod:`fuseflow.passes.lowering.blocking`)."""
    plans = {uid: (view.key, lambda source, view=view: _expand(source, view), expr.uses[uid])
             for uid, view in blocking.views.items()}
    return _bind_host_views(expr, list(kernel.operands), kernel, plans)


def _expand(source, view):
    shape = list(mlir.RankedTensorType(view.result_type).shape)
    return op_of(mlir.tensor.ExpandShapeOp(view.result_type, source,
                                           [list(g) for g in view.reassociation], [], shape))


def _kernel_results(kernel, graph, blocking: Blocking) -> list:
    """The values that replace ``kernel``'s results: the graph's, with results written over
    split dimensions transposed and collapsed back to the kernel's types on the host."""
    values = list(graph.results)
    for index, view in blocking.results.items():
        with mlir.InsertionPoint(kernel), kernel.location:
            value = values[index]
            if view.permutation is not None:
                value = build_transpose(value, view.expanded_type,
                                        list(view.permutation)).results[0]
            values[index] = mlir.tensor.CollapseShapeOp(
                kernel.results[index].type, value, [list(g) for g in view.reassociation]).result
    return values


ORDER_ATTEMPTS = 64
"""Default orders tried, best first, before a kernel is reported as not lowerable."""


def _lower_with(kernel, expr, order, loc, blocking: Blocking):
    """The ``sam.graph`` of ``kernel`` in ``order``, placed before it (nothing is left behind
    when the lowering fails)."""
    expr, inputs, views = _bind_blocked_views(expr, blocking, kernel)
    expr, inputs, transposes = _bind_dense_permutations(expr, order, inputs, kernel)
    result_types = [blocking.results[i].graph_type if i in blocking.results else r.type
                    for i, r in enumerate(kernel.results)]
    with mlir.InsertionPoint(kernel):
        graph, gblock = create_container(
            "sam.graph", inputs, result_types,
            {"name": kernel.attributes["name"] if "name" in kernel.attributes else mlir.StringAttr.get("graph"),
             "fuseflow.einsum": mlir.StringAttr.get(str(expr)),
             "fuseflow.order": mlir.ir.ArrayAttr.get([mlir.StringAttr.get(v) for v in order])},
            loc=kernel.location)
    try:
        with mlir.InsertionPoint(gblock):
            builder = GraphBuilder(gblock, loc, list(gblock.arguments))
            KernelLowering(expr, order, builder).run()
            mlir.Operation.create(TERMINATOR, operands=[], loc=kernel.location)
    except LoweringError:
        graph.erase()
        _erase_host_ops(views + transposes)       # the host views made for this order
        raise
    return graph


def lower_kernel(kernel, order_option: tuple[str, ...] = ()):
    """Replaces one ``fuse.kernel`` by its ``sam.graph``."""
    body = kernel.regions[0].blocks[0]
    terminator = op_of(list(body.operations)[-1])
    arg_index = {arg: i for i, arg in enumerate(body.arguments)}
    expr = unify_copies(extract_kernel(list(terminator.operands), arg_index, kernel.location))
    loc = _first_compute_location(kernel)
    blocking = split_blocked(expr, [v.type for v in kernel.operands], loc, tuple(order_option))
    expr = blocking.expr
    if order_option:
        order = tuple(order_option)
        why = violation(expr, order)
        if why:
            legal = "; ".join(",".join(o) for o in itertools.islice(legal_orders(expr), 50))
            raise LoweringError(loc, f"{why}; legal orders: {legal}")
        graph = _lower_with(kernel, expr, order, loc, blocking)
    else:
        graph, first_error = None, None
        for order in itertools.islice(ranked_orders(expr), ORDER_ATTEMPTS):
            try:
                graph = _lower_with(kernel, expr, order, loc, blocking)
                break
            except LoweringError as err:       # this order is not lowerable: try the next
                first_error = first_error or err
        if graph is None:
            if first_error is not None:
                raise first_error
            raise LoweringError(loc, "no dataflow order visits every tensor's levels in storage "
                                     f"order for {expr}")
    for old, new in zip(kernel.results, _kernel_results(kernel, graph, blocking)):
        old.replace_all_uses_with(new)
    kernel.erase()
    return graph


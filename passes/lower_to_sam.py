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
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, create_container
from fuseflow.passes.base import Pass, PassFailure, emit_error
from fuseflow.passes.ir_utils import build_transpose, funcs, is_trivial_producer, op_of
from fuseflow.passes.lowering.builder import GraphBuilder
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


def _bind_dense_permutations(expr, order, kernel):
    """Dense uses visited out of storage order read a host-side ``linalg.transpose`` of their
    input instead. Returns the expression over the graph's operands, the operands (kernel
    inputs that are still read, then the transposes) and the transpose ops created."""
    inputs = list(kernel.operands)
    ranks = [mlir.RankedTensorType(v.type).rank for v in inputs]
    transposed: dict[tuple[int, tuple[int, ...]], int] = {}
    created, replacement = [], {}
    pos = {v: i for i, v in enumerate(order)}
    for uid, perm in dense_permutations(expr, order, ranks).items():
        use = expr.uses[uid]
        key = (use.operand, perm)
        if key not in transposed:
            source = inputs[use.operand]
            shape = mlir.RankedTensorType(source.type).shape
            with mlir.InsertionPoint(kernel), kernel.location:
                result_type = mlir.RankedTensorType.get(
                    [shape[d] for d in perm], mlir.RankedTensorType(source.type).element_type)
                created.append(build_transpose(source, result_type, list(perm)))
            inputs.append(created[-1].results[0])
            transposed[key] = len(inputs) - 1
        replacement[uid] = replace(use, operand=transposed[key],
                                   vars=tuple(sorted(use.vars, key=pos.__getitem__)))
    if not replacement:
        return expr, inputs, created
    expr = expr.with_uses(replacement)
    # A kernel input now read only through its transposes is no graph operand.
    dropped = {o for o, _ in transposed} - {u.operand for u in expr.uses}
    index = {old: new for new, old in enumerate(i for i in range(len(inputs)) if i not in dropped)}
    expr = expr.with_uses({u.uid: replace(u, operand=index[u.operand]) for u in expr.uses})
    return expr, [v for i, v in enumerate(inputs) if i not in dropped], created


ORDER_ATTEMPTS = 64
"""Default orders tried, best first, before a kernel is reported as not lowerable."""


def _lower_with(kernel, expr, order, loc):
    """The ``sam.graph`` of ``kernel`` in ``order``, placed before it (nothing is left behind
    when the lowering fails)."""
    expr, inputs, transposes = _bind_dense_permutations(expr, order, kernel)
    with mlir.InsertionPoint(kernel):
        graph, gblock = create_container(
            "sam.graph", inputs, [r.type for r in kernel.results],
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
        for transpose in transposes:              # the host transposes made for this order
            init = op_of(list(transpose.operands)[1].owner)
            transpose.erase()
            init.erase()
        raise
    return graph


def lower_kernel(kernel, order_option: tuple[str, ...] = ()):
    """Replaces one ``fuse.kernel`` by its ``sam.graph``."""
    body = kernel.regions[0].blocks[0]
    terminator = op_of(list(body.operations)[-1])
    arg_index = {arg: i for i, arg in enumerate(body.arguments)}
    expr = extract_kernel(list(terminator.operands), arg_index, kernel.location)
    loc = _first_compute_location(kernel)
    if order_option:
        order = tuple(order_option)
        why = violation(expr, order)
        if why:
            legal = "; ".join(",".join(o) for o in itertools.islice(legal_orders(expr), 50))
            raise LoweringError(loc, f"{why}; legal orders: {legal}")
        graph = _lower_with(kernel, expr, order, loc)
    else:
        graph, first_error = None, None
        for order in itertools.islice(ranked_orders(expr), ORDER_ATTEMPTS):
            try:
                graph = _lower_with(kernel, expr, order, loc)
                break
            except LoweringError as err:       # this order is not lowerable: try the next
                first_error = first_error or err
        if graph is None:
            if first_error is not None:
                raise first_error
            raise LoweringError(loc, "no dataflow order visits every tensor's levels in storage "
                                     f"order for {expr}")
    for old, new in zip(kernel.results, graph.results):
        old.replace_all_uses_with(new)
    kernel.erase()
    return graph


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

from dataclasses import dataclass

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, create_container
from fuseflow.passes.base import Pass, PassFailure, emit_error
from fuseflow.passes.ir_utils import defining_op, funcs, is_trivial_producer, op_of
from fuseflow.passes.lowering.builder import GraphBuilder
from fuseflow.passes.lowering.einsum import LoweringError, extract_einsum
from fuseflow.passes.lowering.lower import KernelLowering
from fuseflow.passes.lowering.order import default_order, legal_orders, violation


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


def _kernel_compute(kernel):
    body = kernel.regions[0].blocks[0]
    ops = [op_of(o) for o in body.operations]
    terminator = ops[-1]
    compute = [o for o in ops[:-1] if not is_trivial_producer(o) and o.name != "tensor.cast"]
    return compute, terminator


def lower_kernel(kernel, order_option: tuple[str, ...] = ()):
    """Replaces one ``fuse.kernel`` by its ``sam.graph``."""
    compute, terminator = _kernel_compute(kernel)
    if len(compute) != 1:
        raise LoweringError(kernel.location, f"kernel holds {len(compute)} linalg ops; fusing "
                                             "several ops into one graph is not supported yet")
    yielded = list(terminator.operands)
    if len(yielded) != 1:
        raise LoweringError(kernel.location, "kernels with several results are not supported yet")
    value = yielded[0]
    result_type = value.type
    producer = defining_op(value)
    if producer is not None and producer.name == "tensor.cast":
        value = list(producer.operands)[0]
        producer = defining_op(value)
    if producer is None or producer != compute[0]:
        raise LoweringError(kernel.location, "kernel result is not computed by its linalg op")
    block = kernel.regions[0].blocks[0]
    arg_index = {arg: i for i, arg in enumerate(block.arguments)}
    einsum = extract_einsum(producer, arg_index, result_type)
    if order_option:
        order = tuple(order_option)
        why = violation(einsum, order)
        if why:
            legal = "; ".join(",".join(o) for o in legal_orders(einsum))
            raise LoweringError(producer.location, f"{why}; legal orders: {legal}")
    else:
        order = default_order(einsum)
        if order is None:
            raise LoweringError(producer.location,
                                "no dataflow order visits every tensor's levels in storage order "
                                f"for {einsum}")
    inputs = list(kernel.operands)
    with mlir.InsertionPoint(kernel):
        graph, gblock = create_container(
            "sam.graph", inputs, [r.type for r in kernel.results],
            {"name": kernel.attributes["name"] if "name" in kernel.attributes else mlir.StringAttr.get("graph"),
             "fuseflow.einsum": mlir.StringAttr.get(str(einsum)),
             "fuseflow.order": mlir.ir.ArrayAttr.get([mlir.StringAttr.get(v) for v in order])},
            loc=kernel.location)
    with mlir.InsertionPoint(gblock):
        builder = GraphBuilder(gblock, producer.location, list(gblock.arguments))
        KernelLowering(einsum, order, builder).run(result=0)
        mlir.Operation.create(TERMINATOR, operands=[], loc=kernel.location)
    for old, new in zip(kernel.results, graph.results):
        old.replace_all_uses_with(new)
    kernel.erase()
    return graph


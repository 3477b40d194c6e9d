"""``fuseflow-partition``: groups the linalg ops of each function into ``fuse.kernel`` regions.

Before (``mode=unfused``)::

    %1 = linalg.generic {...} ins(%A, %B : ...) outs(%init : ...) -> tensor<4x3xf32>
    %2 = linalg.generic {...} ins(%1 : ...) outs(%e : ...) -> tensor<4x3xf32>

After::

    %k1 = "fuse.kernel"(%A, %B) ({
    ^bb0(%a: ..., %b: ...):
      %init = linalg.generic {...} ins(%cst : f32) ...   // fills and constants are cloned in
      %1 = linalg.generic {...} ins(%a, %b : ...) outs(%init : ...)
      gpu.yield %1 : tensor<4x3xf32>
    }) : (...) -> tensor<4x3xf32>
    %k2 = "fuse.kernel"(%k1) ({ ... })

``mode=full`` puts every compute op of a function into one kernel. A ``tensor.cast`` that
gives a kernel result its declared (sparse) type moves into the kernel with its producer.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, CapacityError, create_container
from fuseflow.passes.base import ChoiceEnum, Pass, emit_error
from fuseflow.passes.ir_utils import defining_op, funcs, is_trivial_producer, op_of, walk_nested


class PartitionMode(ChoiceEnum):
    """How linalg ops are grouped into kernels."""

    UNFUSED = "unfused"
    FULL = "full"


COMPUTE_DIALECTS = ("linalg.",)


def is_compute(op) -> bool:
    """A linalg op that becomes part of a kernel (fills are initializations, not compute)."""
    op = op_of(op)
    return op.name.startswith(COMPUTE_DIALECTS) and not is_trivial_producer(op)


@dataclass(frozen=True)
class PartitionPass(Pass):
    """Groups linalg ops into fuse.kernel regions (unfused: one per op; full: one per function)."""

    ARGUMENT = "fuseflow-partition"
    mode: PartitionMode = PartitionMode.UNFUSED

    def run(self, module) -> None:
        for fn in funcs(module):
            body = fn.regions[0].blocks[0]
            compute = [op_of(o) for o in body.operations if is_compute(o)]
            if not compute:
                continue
            groups = [[op] for op in compute] if self.mode is PartitionMode.UNFUSED else [compute]
            for index, group in enumerate(groups):
                outline(group, f"k{index}")
            _erase_dead_trivial(body)


def _absorb_casts(group: list) -> list:
    """Adds the tensor.cast ops that only re-type a group result to the group."""
    extra = []
    for op in group:
        for result in op.results:
            for use in list(result.uses):
                user = op_of(use.owner)
                if user.name == "tensor.cast" and user not in extra:
                    extra.append(user)
    return group + extra


def outline(group: list, name: str):
    """Moves ``group`` (ops of one block, in block order) into a new ``fuse.kernel``."""
    group = _absorb_casts(group)
    members = set()
    for op in group:
        members.add(op)
        members.update(walk_nested(op))

    def inside(op) -> bool:
        return op in members

    # Values flowing in: operands defined outside the group (trivial producers are cloned).
    inputs, clones = [], []
    for op in [o for g in group for o in [g] + walk_nested(g)]:
        for value in op.operands:
            producer = defining_op(value)
            if producer is not None and inside(producer):
                continue
            if isinstance(value.owner, mlir.Block) and any(
                    value.owner == b for o in members for r in o.regions for b in r.blocks):
                continue
            if producer is not None and is_trivial_producer(producer):
                if producer not in clones:
                    clones.append(producer)
            elif value not in inputs:
                inputs.append(value)
    # Trivial producers may themselves read constants defined outside (fill of a constant).
    for producer in list(clones):
        for value in producer.operands:
            dep = defining_op(value)
            if dep is not None and is_trivial_producer(dep) and dep not in clones:
                clones.insert(0, dep)

    outputs = []
    for op in group:
        for result in op.results:
            if any(not inside(op_of(u.owner)) for u in result.uses) and result not in outputs:
                outputs.append(result)
    if not outputs:
        raise emit_error(group[-1], "kernel computes nothing that is used outside it")
    last = group[-1]
    for result in outputs:
        for use in result.uses:
            user = op_of(use.owner)
            if not inside(user) and not last.is_before_in_block(user):
                raise emit_error(user, f"op uses a result of kernel '{name}' before the kernel ends")

    with mlir.InsertionPoint(last), last.location:
        try:
            kernel, block = create_container("fuse.kernel", inputs, [v.type for v in outputs],
                                             {"name": mlir.StringAttr.get(name)})
        except CapacityError as err:
            raise emit_error(last, str(err)) from None
    last.move_before(kernel)
    for index, result in enumerate(outputs):
        for use in list(result.uses):
            user = op_of(use.owner)
            if not inside(user):
                user.operands[use.operand_number] = kernel.results[index]
    with mlir.InsertionPoint(block), kernel.location:
        terminator = mlir.Operation.create(TERMINATOR, operands=outputs)
    mapping = {v: block.arguments[i] for i, v in enumerate(inputs)}
    with mlir.InsertionPoint(op_of(terminator)):
        for producer in clones:
            copy = producer.clone()
            for i, res in enumerate(producer.results):
                mapping[res] = copy.results[i]
    for op in group:
        op.move_before(op_of(terminator))
    for op in [op_of(c) for c in block.operations] + [n for g in group for n in walk_nested(g)]:
        for i, value in enumerate(op.operands):
            if value in mapping:
                op.operands[i] = mapping[value]
    return kernel


def _erase_dead_trivial(block) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.operations)):
            op = op_of(op)
            if is_trivial_producer(op) and all(len(list(r.uses)) == 0 for r in op.results):
                op.erase()
                changed = True

"""Small helpers over the MLIR Python bindings shared by the passes."""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.dialects.ir import op_of, walk

LAYOUT_OPS = ("tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape",
              "linalg.transpose", "tensor.cast")
"""Host ops: data movement between kernels that the runtime executes on the host
(:mod:`fuseflow.layout`). They stay outside kernels and dataflow graphs."""


def is_kernel_op(op) -> bool:
    """A linalg op that belongs in a kernel (every linalg op but the host ops)."""
    return op.name.startswith("linalg.") and op.name not in LAYOUT_OPS


def walk_nested(op) -> list:
    """All operations nested in ``op``'s regions, pre-order (excluding ``op``)."""
    return list(walk(op))


def funcs(module_op) -> list:
    """The ``func.func`` ops of a module."""
    return [op_of(o) for o in module_op.regions[0].blocks[0].operations if op_of(o).name == "func.func"]


def defining_op(value):
    """The op defining ``value``, or None for a block argument."""
    owner = value.owner
    if isinstance(owner, mlir.Block):
        return None
    return op_of(owner)


def is_fill(op) -> bool:
    """A ``linalg.fill`` or a generalized fill: a generic with no tensor inputs yielding its scalar."""
    op = op_of(op)
    if op.name == "linalg.fill":
        return True
    if op.name != "linalg.generic":
        return False
    ins = list(op.operands)[: _num_inputs(op)]
    if any(isinstance(v.type, mlir.RankedTensorType) for v in ins):
        return False
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    return len(ops) == 1 and ops[0].name == "linalg.yield"


def _num_inputs(op) -> int:
    segs = op.attributes["operandSegmentSizes"]
    return mlir.DenseI32ArrayAttr(segs)[0]


def generic_inputs(op) -> list:
    """The ``ins`` operands of a linalg structured op."""
    return list(op_of(op).operands)[: _num_inputs(op)]


def generic_outputs(op) -> list:
    """The ``outs`` operands of a linalg structured op."""
    return list(op_of(op).operands)[_num_inputs(op):]


def is_trivial_producer(op) -> bool:
    """Ops cloned into every kernel that uses them instead of becoming kernel inputs."""
    op = op_of(op)
    return op.name in ("arith.constant", "tensor.empty", "bufferization.alloc_tensor") or is_fill(op)


def build_transpose(source, result_type, permutation: list[int]):
    """``linalg.transpose`` of ``source`` into a fresh ``tensor.empty`` of ``result_type``
    (result dim ``i`` is source dim ``permutation[i]``), at the current insertion point."""
    result_type = mlir.RankedTensorType(result_type)
    init = mlir.tensor.EmptyOp(list(result_type.shape), result_type.element_type)
    return op_of(mlir.linalg.transpose(source, outs=[init.result], permutation=permutation))

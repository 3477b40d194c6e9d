"""Builders for the container ops ``fuse.kernel`` and ``sam.graph``.

Both declare their operands and results as fixed optional slots (see the IRDL files), so
every instance carries ``operandSegmentSizes``/``resultSegmentSizes``; these helpers compute
them and read the used slots back.
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.errors import FuseFlowError

# IRDL cannot declare terminators; container bodies end in this upstream parent-agnostic one.
TERMINATOR = "gpu.yield"
MAX_INPUTS = 32
MAX_RESULTS = 8


class CapacityError(FuseFlowError, ValueError):
    """A kernel with more inputs or results than the container ops have slots."""


def segment_attrs(num_inputs: int, num_results: int, what: str) -> dict:
    """The segment-size attributes of a container with the given operand/result counts."""
    if num_inputs > MAX_INPUTS:
        raise CapacityError(f"{what} has {num_inputs} inputs; at most {MAX_INPUTS} are supported")
    if num_results > MAX_RESULTS:
        raise CapacityError(f"{what} has {num_results} results; at most {MAX_RESULTS} are supported")
    ins = [1] * num_inputs + [0] * (MAX_INPUTS - num_inputs)
    outs = [1] * num_results + [0] * (MAX_RESULTS - num_results)
    return {
        "operandSegmentSizes": mlir.DenseI32ArrayAttr.get(ins),
        "resultSegmentSizes": mlir.DenseI32ArrayAttr.get(outs),
    }


def create_container(name: str, inputs, result_types, attributes: dict | None = None, loc=None):
    """Creates a ``fuse.kernel`` or ``sam.graph`` (``name``) with one empty body block.

    Must be called with an insertion point set. Returns ``(op, block)``; the block's arguments
    mirror ``inputs``. The caller appends the body and its :data:`TERMINATOR`.
    """
    attrs = dict(attributes or {})
    attrs.update(segment_attrs(len(inputs), len(result_types), name))
    op = mlir.Operation.create(name, results=list(result_types), operands=list(inputs),
                               attributes=attrs, regions=1, loc=loc)
    block = op.regions[0].blocks.append(*[v.type for v in inputs],
                                        arg_locs=[op.location] * len(inputs))
    return op, block

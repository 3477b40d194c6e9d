"""Builders for the container ops ``fuse.kernel`` and ``sam.graph``.

Both take any number of inputs and results of any types, declared as slots that each hold a run
of equal consecutive types (:mod:`fuseflow.dialects.containers`); every instance carries
``operandSegmentSizes``/``resultSegmentSizes`` with the run lengths, which these helpers
compute from the types.
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.dialects.containers import (
    TERMINATOR,
    CapacityError,
    input_segments,
    result_segments,
)

__all__ = ["TERMINATOR", "CapacityError", "create_container", "segment_attrs"]


def segment_attrs(input_types, result_types, what: str) -> dict:
    """The segment-size attributes of a container with the given input and result types.

    Raises :class:`CapacityError` when the inputs or results form more runs of equal
    consecutive types than the container has slots."""
    return {
        "operandSegmentSizes": mlir.DenseI32ArrayAttr.get(input_segments(list(input_types), what)),
        "resultSegmentSizes": mlir.DenseI32ArrayAttr.get(result_segments(list(result_types),
                                                                         what)),
    }


def create_container(name: str, inputs, result_types, attributes: dict | None = None, loc=None):
    """Creates a ``fuse.kernel`` or ``sam.graph`` (``name``) with one empty body block.

    Must be called with an insertion point set. Returns ``(op, block)``; the block's arguments
    mirror ``inputs``. The caller appends the body and its :data:`TERMINATOR`.
    """
    attrs = dict(attributes or {})
    attrs.update(segment_attrs([v.type for v in inputs], result_types, name))
    op = mlir.Operation.create(name, results=list(result_types), operands=list(inputs),
                               attributes=attrs, regions=1, loc=loc)
    block = op.regions[0].blocks.append(*[v.type for v in inputs],
                                        arg_locs=[op.location] * len(inputs))
    return op, block

"""Host-side layout ops: how the runtime executes the data movement left between kernels.

A dense tensor in memory can be read through any affine address map, so slicing, reshaping
and transposing it costs the dataflow hardware nothing: the compiler hoists such views out of
kernels (``fuseflow-hoist-views``) and, when a dataflow order visits a dense operand's
dimensions out of storage order, binds the operand through a ``linalg.transpose``
(``fuseflow-lower-to-sam``). The runtime executes these ops on the host, between kernels,
at zero cycles:

* ``tensor.extract_slice`` with static offsets, sizes and strides;
* ``tensor.expand_shape`` / ``tensor.collapse_shape`` (row-major reshapes);
* ``linalg.transpose`` (its ``permutation``: result dim ``i`` is source dim ``permutation[i]``);
* ``tensor.cast`` (a format change: :meth:`FiberTree.convert`).

The list is :data:`fuseflow.passes.ir_utils.LAYOUT_OPS`, which the compiler keeps outside kernels.

Every op produces its result in the format of its result type.
"""

from __future__ import annotations

import numpy as np

from fuseflow import mlir
from fuseflow.errors import FuseFlowError
from fuseflow.passes.ir_utils import LAYOUT_OPS
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.loader import tensor_format


class LayoutError(FuseFlowError, RuntimeError):
    """A host layout op the runtime cannot execute (e.g. dynamic offsets); names the op."""


def convert(tree: FiberTree, fmt) -> FiberTree:
    """``tree`` stored in ``fmt``: :meth:`FiberTree.convert` (explicit zeros of a sparse
    source stay stored)."""
    return tree.convert(fmt)


def _static(op, name: str) -> list[int]:
    values = list(mlir.DenseI64ArrayAttr(op.attributes[name]))
    if any(v < -(2**62) for v in values):       # ShapedType::kDynamic
        raise LayoutError(f"'{op.name}' with dynamic {name} cannot be executed on the host",
                          op.location)
    return values


def _slice(op, array: np.ndarray) -> np.ndarray:
    offsets, sizes, strides = (_static(op, n) for n in ("static_offsets", "static_sizes",
                                                        "static_strides"))
    index = tuple(slice(o, o + s * st, st) for o, s, st in zip(offsets, sizes, strides))
    result_shape = mlir.RankedTensorType(op.results[0].type).shape
    return array[index].reshape(result_shape)      # rank-reducing slices drop unit dims


def apply(op, tree: FiberTree) -> FiberTree:
    """Executes the layout op ``op`` (one of :data:`LAYOUT_OPS`) on its source ``tree``."""
    result_type = op.results[0].type
    fmt = tensor_format(result_type)
    if op.name == "tensor.cast":
        return convert(tree, fmt)
    array = tree.to_dense()
    if op.name == "tensor.extract_slice":
        array = _slice(op, array)
    elif op.name in ("tensor.expand_shape", "tensor.collapse_shape"):
        array = array.reshape(mlir.RankedTensorType(result_type).shape)
    elif op.name == "linalg.transpose":
        array = np.transpose(array, list(mlir.DenseI64ArrayAttr(op.attributes["permutation"])))
    else:
        raise LayoutError(f"'{op.name}' is not a host layout op; valid: " + ", ".join(LAYOUT_OPS),
                          op.location)
    return FiberTree.from_dense(np.ascontiguousarray(array), fmt)

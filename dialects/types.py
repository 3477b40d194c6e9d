"""Reading tensor types: shapes and the storage levels of ``#sparse_tensor.encoding``.

Returns the shape and :class:`~fuseflow.dialects.levels.LevelSpec` levels, the one
storage-level model of the lowering and the simulator.
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.dialects.levels import LevelSpec
from fuseflow.errors import FuseFlowError


class UnsupportedTypeError(FuseFlowError, ValueError):
    """A tensor type whose storage the lowering cannot scan; the message names it."""


def tensor_type(t) -> "mlir.RankedTensorType":
    """``t`` as a ranked tensor type, or UnsupportedTypeError."""
    if not isinstance(t, mlir.RankedTensorType):
        raise UnsupportedTypeError(f"expected a ranked tensor type, got '{t}'")
    return t


def storage_levels(t) -> tuple[tuple[int, ...], tuple[LevelSpec, ...]]:
    """The static shape and the storage levels of tensor type ``t`` (identity levels if dense)."""
    rt = tensor_type(t)
    shape = tuple(rt.shape)
    if any(d < 0 for d in shape):
        raise UnsupportedTypeError(f"dynamic shapes are not supported: '{t}'")
    if rt.encoding is None:
        return shape, tuple(LevelSpec("dense", d) for d in range(len(shape)))
    enc = mlir.sparse_tensor.EncodingAttr(rt.encoding)
    st = mlir.sparse_tensor
    formats = {st.LevelFormat.dense.value: "dense", st.LevelFormat.compressed.value: "compressed",
               st.LevelFormat.singleton.value: "singleton"}
    nonunique = st.LevelProperty.non_unique.value
    levels = []
    exprs = enc.dim_to_lvl.results if enc.dim_to_lvl is not None else [
        mlir.ir.AffineDimExpr.get(d) for d in range(len(shape))]
    for lvl, (ltype, lformat) in enumerate(zip(enc.lvl_types, enc.lvl_formats_enum)):
        name = formats.get(lformat)
        if name is None:
            raise UnsupportedTypeError(f"level {lvl} of '{t}' has a format the simulator cannot scan")
        if name == "compressed" and (ltype - lformat) & nonunique:
            name = "compressed_nonunique"
        levels.append(_level(name, exprs[lvl], t))
    return shape, tuple(levels)


def _level(fmt: str, expr, t) -> LevelSpec:
    text = str(expr).replace(" ", "")
    if text.startswith("d") and text[1:].isdigit():
        return LevelSpec(fmt, int(text[1:]))
    for kind, token in (("div", "floordiv"), ("mod", "mod")):
        if token in text:
            dim, _, block = text.partition(token)
            if dim.startswith("d") and dim[1:].isdigit() and block.isdigit():
                return LevelSpec(fmt, int(dim[1:]), kind, int(block))
    raise UnsupportedTypeError(f"level expression '{expr}' of '{t}' is not supported")


def element_type(t):
    """The element type of a tensor type."""
    return tensor_type(t).element_type

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


_NAMED_FORMATS = {
    (("dense", 0), ("compressed", 1)): "csr",
    (("dense", 1), ("compressed", 0)): "csc",
    (("compressed", 0), ("compressed", 1)): "dcsr",
    (("compressed_nonunique", 0), ("singleton", 1)): "coo",
    (("compressed", 0),): "sparse_vector",
}
"""Storage levels (format, dim) of the named sparse formats (the frontend's format names)."""


def format_name(t) -> str:
    """The format name of tensor type ``t``: ``dense`` (row-major), ``csr``, ``csc``,
    ``dcsr``, ``coo``, ``sparse_vector``, ``bsr:<rows>x<cols>``; any other encoding is named
    by its MLIR text."""
    rt = tensor_type(t)
    if rt.encoding is None:
        return "dense"
    _, levels = storage_levels(t)
    if all(lv.kind == "id" for lv in levels):
        name = _NAMED_FORMATS.get(tuple((lv.format, lv.dim) for lv in levels))
        if name is not None:
            return name
    elif [(lv.format, lv.dim, lv.kind) for lv in levels] == [
            ("dense", 0, "div"), ("compressed", 1, "div"), ("dense", 0, "mod"),
            ("dense", 1, "mod")] and levels[0].block == levels[2].block \
            and levels[1].block == levels[3].block:
        return f"bsr:{levels[0].block}x{levels[1].block}"
    return str(rt.encoding)

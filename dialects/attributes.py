"""Primitive attributes between MLIR and plain values, typed by the primitive table.

:func:`build` makes the attribute dictionary of a new primitive op (the lowering's graph
builder), :func:`read` reads an op's declared attributes back (the simulator's loader); both
follow the types :data:`fuseflow.dialects.primitives.PRIMITIVES` declares.
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.dialects.primitives import Primitive, primitive
from fuseflow.errors import FuseFlowError

_READERS = {
    "int": lambda a: int(mlir.IntegerAttr(a).value),
    "float": lambda a: float(mlir.FloatAttr(a).value),
    "string": lambda a: mlir.StringAttr(a).value,
    "i64_array": lambda a: tuple(int(v) for v in mlir.DenseI64ArrayAttr(a)),
}
_BUILDERS = {
    "int": lambda v: mlir.IntegerAttr.get(mlir.IntegerType.get_signless(64), int(v)),
    "float": lambda v: mlir.FloatAttr.get(mlir.F32Type.get(), float(v),
                                          loc=mlir.Location.unknown()),
    "string": lambda v: mlir.StringAttr.get(str(v)),
    "i64_array": lambda v: mlir.DenseI64ArrayAttr.get([int(x) for x in v]),
}


class UndeclaredAttributeError(FuseFlowError, ValueError):
    """An attribute a primitive does not declare; the message lists the declared ones."""


def build(op_name: str, **values) -> dict:
    """The MLIR attributes ``values`` of primitive ``op_name`` (None values are left out).

    Must be called in an MLIR context.
    """
    prim = primitive(op_name)
    if prim is None:
        raise UndeclaredAttributeError(f"'{op_name}' is not a sam primitive")
    attrs = {}
    for name, value in values.items():
        decl = prim.attribute(name)
        if decl is None:
            declared = ", ".join(a.name for a in prim.attributes) or "none"
            raise UndeclaredAttributeError(f"'{op_name}' has no attribute '{name}'; "
                                           f"declared: {declared}")
        if value is not None:
            attrs[name] = _BUILDERS[decl.type](value)
    return attrs


def read(op, prim: Primitive) -> dict:
    """The attributes ``prim`` declares, read from ``op`` as plain values (absent optional
    ones take their default)."""
    return {a.name: _READERS[a.type](op.attributes[a.name]) if a.name in op.attributes
            else a.default for a in prim.attributes}

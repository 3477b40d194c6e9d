"""Tiles as values: the axes attribute of ALUs and reducers on tiles, and tile shapes of types.

A value stream of type ``!sam.val<f32, array<i64: h, w>>`` carries ``h x w`` tiles (sparsity
blocking, ``docs/timing.md``). An ALU or reducer whose operand and result tiles differ in
shape names their axes in its ``tile`` attribute, einsum-like: ``"ik,kj->ij"`` (a tile
product: ``k``, in both operands and not in the result, is summed), ``"ij,i->ij"`` (the
second operand broadcast over ``j``), ``"ij->i"`` (a reducer summing each tile's rows first).
Plain Python: the verifier, the loader, the lowering and the simulator all read it here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VAL_TILE = re.compile(r"!sam\.val<[^,>]+,\s*array<i64(?::\s*([0-9,\s]*))?>>")


class TileError(ValueError):
    """A malformed ``tile`` attribute or shapes that do not agree with it."""


@dataclass(frozen=True)
class TileSpec:
    """The parsed ``tile`` attribute: axes of each operand and of the result."""

    operands: tuple[str, ...]
    result: str

    @classmethod
    def parse(cls, text: str, arity: int) -> "TileSpec":
        """``text`` (``"ik,kj->ij"``) for an op of ``arity`` operands; TileError if malformed."""
        if not re.fullmatch(r"[a-z]*(,[a-z]*)*->[a-z]*", text or ""):
            raise TileError(f"'tile' must name axes like 'ik,kj->ij', got {text!r}")
        lhs, result = text.split("->")
        operands = tuple(lhs.split(","))
        if len(operands) != arity:
            raise TileError(f"'tile' {text!r} names {len(operands)} operands, the op has {arity}")
        for axes in operands + (result,):
            if len(set(axes)) != len(axes):
                raise TileError(f"'tile' {text!r} repeats an axis in '{axes}'")
        if set(result) - set("".join(operands)):
            raise TileError(f"'tile' {text!r}: result axes must come from the operands")
        return cls(operands, result)

    @property
    def contracted(self) -> str:
        """Axes of the operands the result lacks (summed), in first-seen order."""
        seen = dict.fromkeys("".join(self.operands))
        return "".join(a for a in seen if a not in self.result)

    def __str__(self):
        return f"{','.join(self.operands)}->{self.result}"

    def check(self, operand_shapes, result_shape) -> None:
        """TileError unless each shape has one size per axis and an axis one size throughout."""
        size: dict[str, int] = {}
        for axes, shape in zip(self.operands + (self.result,),
                               tuple(operand_shapes) + (result_shape,)):
            if len(axes) != len(shape):
                raise TileError(f"'tile' {self}: '{axes}' names {len(axes)} axes of a tile "
                                f"of shape {list(shape)}")
            for axis, n in zip(axes, shape):
                if size.setdefault(axis, n) != n:
                    raise TileError(f"'tile' {self}: axis '{axis}' has sizes {size[axis]} and {n}")


def val_tile(type_) -> tuple[int, ...] | None:
    """The tile shape of a ``!sam.val`` type (``()`` for scalars); None for other types."""
    m = _VAL_TILE.fullmatch(str(type_).strip())
    if m is None:
        return None
    return tuple(int(x) for x in (m.group(1) or "").replace(" ", "").split(",") if x)


def val_type_text(tile: tuple[int, ...] = ()) -> str:
    """The ``!sam.val`` type of f32 tiles of shape ``tile`` (scalars for ``()``)."""
    return f"!sam.val<f32, array<i64{': ' + ', '.join(map(str, tile)) if tile else ''}>>"

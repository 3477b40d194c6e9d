"""Arithmetic on tiles, shared by both engines: each function takes a batch of tiles (a leading
axis; the reference engine passes batches of one), so both engines compute every element the
same way, in the same float32 order.

Axes follow a block's ``tile`` attribute (:class:`fuseflow.dialects.tiles.TileSpec`): operands
are broadcast over the result's axes; axes summed by a tile product (or reduced by a reducer's
``ij->i``) are folded one index at a time, in increasing index order.
"""

from __future__ import annotations

import itertools

import numpy as np

from fuseflow.dialects.tiles import TileSpec

f32 = np.float32


def _aligned(x: np.ndarray, axes: str, target: str) -> np.ndarray:
    """Batch ``x`` (``(n, *sizes of axes)``) as a view over ``(n, *target)``: transposed to the
    target's axis order, size 1 where it lacks an axis."""
    order = [axes.index(a) for a in target if a in axes]
    x = np.transpose(x, [0] + [i + 1 for i in order])
    shape = [x.shape[0]]
    it = iter(x.shape[1:])
    for a in target:
        shape.append(next(it) if a in axes else 1)
    return x.reshape(shape)


def elementwise(fn):
    """``fn`` over float32 arrays; ops written for scalars only run element by element."""
    def apply(*args):
        with np.errstate(all="ignore"):
            try:
                out = np.asarray(fn(*args))
                if out.shape == np.broadcast_shapes(*(a.shape for a in args)):
                    return out.astype(f32, copy=False)
            except (TypeError, ValueError):
                pass
            return np.vectorize(lambda *xs: f32(fn(*map(f32, xs))), otypes=[f32])(*args)
    return apply


def combine(fn, spec: TileSpec | None, operands: list[np.ndarray], sizes: dict[str, int] | None = None
            ) -> np.ndarray:
    """``fn`` on batches of operand tiles (``(n, *tile)`` each): element by element over the
    result's axes, summing the contracted axes (a tile product) in index order."""
    apply = elementwise(fn)
    if spec is None:
        out = apply(*operands)
        return np.broadcast_to(out, operands[0].shape).astype(f32)
    contracted = spec.contracted
    target = spec.result + contracted
    views = [_aligned(x, axes, target) for x, axes in zip(operands, spec.operands)]
    size = _sizes(spec, operands)
    out_shape = (operands[0].shape[0],) + tuple(size[a] for a in spec.result)
    if not contracted:
        return np.broadcast_to(apply(*views), out_shape).astype(f32)
    acc = None
    tail = len(contracted)
    for idx in itertools.product(*(range(size[a]) for a in contracted)):
        term = apply(*(v[(Ellipsis,) + tuple(i if n > 1 else 0 for i, n in
                                             zip(idx, v.shape[-tail:]))] for v in views))
        acc = term if acc is None else (acc + term).astype(f32)
    return np.broadcast_to(acc, out_shape).astype(f32)


def reduce_axes(kind: str, spec: TileSpec, tiles: np.ndarray) -> np.ndarray:
    """Batch ``tiles`` reduced (sum or max) over the axes ``spec``'s result lacks, in index
    order."""
    contracted = spec.contracted
    if not contracted:
        return _aligned(tiles, spec.operands[0], spec.result).astype(f32)
    view = _aligned(tiles, spec.operands[0], spec.result + contracted)
    size = _sizes(spec, [tiles])
    acc = None
    for idx in itertools.product(*(range(size[a]) for a in contracted)):
        term = view[(Ellipsis,) + idx]
        acc = term.astype(f32) if acc is None else (
            np.maximum(acc, term) if kind == "max" else (acc + term).astype(f32))
    return acc


def _sizes(spec: TileSpec, operands) -> dict[str, int]:
    size: dict[str, int] = {}
    for x, axes in zip(operands, spec.operands):
        size.update(zip(axes, x.shape[1:]))
    return size


def product_ops(spec: TileSpec | None, operand_shapes, out_shape) -> int:
    """Arithmetic operations of one tile step: result elements times summed indices."""
    n = int(np.prod(out_shape, dtype=np.int64)) if out_shape else 1
    if spec is None or not spec.contracted:
        return n
    size: dict[str, int] = {}
    for axes, shape in zip(spec.operands, operand_shapes):
        size.update(zip(axes, shape))
    return n * int(np.prod([size[a] for a in spec.contracted], dtype=np.int64))

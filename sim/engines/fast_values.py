"""Vectorized one-step-per-token blocks: root, broadcast, fork, repsiggen, array, ALU, reducer
(the reducer in :mod:`fuseflow.sim.engines.fast_reduce`).

Each function takes the block's context (:class:`fuseflow.sim.engines.reference.BlockContext`,
used for its attributes, costs, bound tensors and statistics) and its whole input streams, and
returns its output streams, or ``None`` when the inputs are malformed; the engine then runs
the reference implementation, which reports the error where the reference engine would.
"""

from __future__ import annotations

import numpy as np

from fuseflow.dialects.tiles import TileSpec
from fuseflow.sim.blocks import tiles
from fuseflow.sim.blocks.alu import ABSENT_ANNIHILATES, ALU_OPS, BINARY, SCALAR, SCALAR_BINARY, UNARY
from fuseflow.sim.engines import fast_native
from fuseflow.sim.engines.fast_reduce import fold_by_key, reduce  # noqa: F401 (the block table's)
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE, DATA, DONE_CODE, EMPTY_CODE, REPEAT_CODE, TIME_DTYPE, Stream, copy_of, ends_with_done,
    count_code, finish, follow_stamps, has_repeat, joint_gap, step_stamps,
)

f32 = np.float32


def root(ctx, ins):
    """``0`` at latency, ``D`` one interval later: two steps."""
    stamps = step_stamps(ctx, np.zeros(2, dtype=TIME_DTYPE))
    out = Stream(np.array([DATA, DONE_CODE], CODE_DTYPE), np.zeros(2, np.int32), stamps)
    return finish(ctx, ins, [out], None, ctx.ii, stamps=stamps)


def _per_token(ctx, s: Stream):
    """Stamps of a single-input block that takes one step per token, ``(array, shift)``
    (:func:`follow_stamps`), or None if malformed."""
    if not ends_with_done(s):
        return None
    return follow_stamps(ctx, s)


def _gap(ctx, s: Stream) -> int:
    """Stamp gap of the outputs of a one-token-per-step block fed by ``s`` alone."""
    return max(ctx.ii, s.gap if s.monotone else 0)


def broadcast(ctx, ins):
    """Every token to every output, one step each."""
    s = ins[0]
    stamped = _per_token(ctx, s)
    if stamped is None:
        return None
    stamps, shift = stamped
    return finish(ctx, ins, [Stream(s.code, s.data, stamps, shift=shift) for _ in ctx.block.outputs], None,
                  _gap(ctx, s), stamps=stamps, shift=shift)


def fork(ctx, ins):
    """Data and ``N`` round-robin over the lanes (the counter runs across fibers); controls to all."""
    s = ins[0]
    stamped = _per_token(ctx, s)
    if stamped is None:
        return None
    stamps, shift = stamped
    lanes = len(ctx.block.outputs)
    dealt = (s.code == DATA) | (s.code == EMPTY_CODE)
    count = np.cumsum(dealt)
    lane = np.where(dealt, count - 1 + ctx.dealt, -1) % lanes
    ctx.dealt += int(count[-1]) if len(count) else 0
    outs = []
    for p in range(lanes):
        keep = ~dealt | (lane == p)
        outs.append(copy_of(s, keep, stamps[keep], shift))
    return finish(ctx, ins, outs, None, _gap(ctx, s), stamps=stamps, shift=shift)


def repsiggen(ctx, ins):
    """Data and ``N`` -> ``R``, stops -> ``S0``, ``D`` -> ``D``."""
    s = ins[0]
    if has_repeat(s.code):
        return None
    stamped = _per_token(ctx, s)
    if stamped is None:
        return None
    stamps, shift = stamped
    code = np.less(s.code, 0).view(CODE_DTYPE)  # data, N and the final D: 1; stops: 0 (S0)
    code *= REPEAT_CODE
    code[-1] = DONE_CODE
    # signals carry no payload: zeros from calloc take no memory until read
    out = Stream(code, np.zeros(len(s), np.int32), stamps, shift=shift)
    return finish(ctx, ins, [out], None, _gap(ctx, s), stamps=stamps, shift=shift)


def _row_values(vals: np.ndarray, refs: np.ndarray, n: int) -> np.ndarray | None:
    """The values under a dense scan's references (:attr:`Stream.rows`): row r of the level is
    ``vals[r*n : r*n + n]``, copied whole in one compiled pass (``fast_native.gather_rows``),
    0.0 at the closes and ``D``; None if a row is missing."""
    if not n or not len(refs) or refs.min() < 0 or (int(refs.max()) + 1) * n > len(vals):
        return None
    out = np.empty(len(refs) * (n + 1) + 1, dtype=vals.dtype)
    fast_native.gather_rows(vals, refs, n, out)
    return out


def array(ctx, ins):
    """``vals[ref]`` for data, 0.0 for ``N``; controls pass."""
    s = ins[0]
    stamped = _per_token(ctx, s)
    if stamped is None:
        return None
    stamps, shift = stamped
    vals = ctx.tensor().vals
    code = s.code
    if "tiles" in ctx.block.attrs:
        out, code = _tile_loads(ctx, s, vals)
        if out is None:
            return None
        return finish(ctx, ins, [Stream(code, out, stamps, shift=shift)], None, _gap(ctx, s), stamps=stamps,
                      shift=shift)
    out = _row_values(vals, *s.rows[:2]) if s.rows is not None else None
    if out is not None:  # no N among a dense scan's references
        ctx.stats.val_reads += len(s.rows[0]) * s.rows[1]
        return finish(ctx, ins, [Stream(code, out, stamps, shift=shift)], None, _gap(ctx, s), stamps=stamps,
                      shift=shift)
    if s.data.dtype.kind != "i":
        return None
    out = np.empty(len(s), dtype=vals.dtype)
    # controls hold valid refs too (usually 0): one compiled pass loads (a control's payload is
    # never read), zeroes N (it stays N, 0.0: it annihilates in the ALU) and counts the loads
    loads = int(fast_native.gather_values(code, s.data, vals, out)) if len(vals) else -1
    if loads < 0:
        loads = count_code(code, DATA)
        data = code == DATA
        if loads and (s.data.min(where=data, initial=0) < 0 or s.data.max(where=data, initial=0) >= len(vals)):
            return None
        out = vals[np.where(data, s.data, 0)] if len(vals) else np.zeros(len(s), dtype=f32)
        if count_code(code, EMPTY_CODE):
            out[code == EMPTY_CODE] = 0.0
    ctx.stats.val_reads += loads
    return finish(ctx, ins, [Stream(code, out, stamps, shift=shift)], None, _gap(ctx, s), stamps=stamps, shift=shift)


def _tile_loads(ctx, s: Stream, vals: np.ndarray):
    """Tiles under the references of ``s`` (``attrs['tiles']``: the tile shape), zeros for
    ``N`` and controls, and the output codes (``N`` becomes data); None if a reference is out
    of range."""
    tile = tuple(ctx.block.attrs["tiles"][1][0])
    size = int(np.prod(tile, dtype=np.int64))
    table = vals[:len(vals) // size * size].reshape((-1,) + tile)
    data = s.code == DATA
    refs = np.where(data, s.data, 0)
    loads = int(np.count_nonzero(data))
    if loads and (refs.min() < 0 or refs.max() >= len(table)):
        return None, None
    out = table[refs] if len(table) else np.zeros((len(s),) + tile, f32)
    out[~data] = 0.0
    ctx.stats.val_reads += loads * size
    code = s.code
    if np.count_nonzero(code == EMPTY_CODE):
        code = np.where(code == EMPTY_CODE, DATA, code).astype(CODE_DTYPE)
    return out, code


def _same_structure(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two code arrays hold controls at the same places (data and ``N`` alike)."""
    if a is b or np.array_equal(a, b):
        return True
    return np.array_equal(np.where((a == DATA) | (a == EMPTY_CODE), DATA, a),
                          np.where((b == DATA) | (b == EMPTY_CODE), DATA, b))


def _elementwise(fn, code: np.ndarray, *args) -> np.ndarray:
    """``fn`` over float32 arrays (results where ``code`` holds data or ``N``; others unused);
    element by element at those positions when ``fn`` only takes scalars."""
    with np.errstate(all="ignore"):
        try:
            out = np.asarray(fn(*args))
            if out.shape != code.shape:  # a scalar-only op whose Python branch saw one element
                raise ValueError(out.shape)
            return out.astype(f32, copy=False)
        except (TypeError, ValueError):
            value = (code == DATA) | (code == EMPTY_CODE)
            out = np.zeros(len(value), dtype=f32)
            out[value] = [f32(fn(*xs)) for xs in zip(*(a[value] for a in args))]
            return out


def _alu_function(op: str, scalar):
    """``(arity, fn)`` of an ALU op from the tables of :mod:`fuseflow.sim.blocks.alu`."""
    if op in SCALAR_BINARY:
        return 2, lambda a, b: SCALAR_BINARY[op](a, b, f32(scalar))
    if op in SCALAR:
        return 1, lambda x: SCALAR[op](x, f32(scalar))
    if op in BINARY:
        return 2, BINARY[op]
    return 1, UNARY[op]


def alu(ctx, ins):
    """The op of ``attrs['op']`` on data and ``N`` (0.0); ops without an array form run per element."""
    attrs = ctx.block.attrs
    op = attrs.get("op")
    if op not in ALU_OPS or (op in SCALAR or op in SCALAR_BINARY) and attrs.get("scalar") is None:
        return None
    arity, fn = _alu_function(op, attrs.get("scalar"))
    a = ins[0]
    if not ends_with_done(a) or len(ins) != arity:
        return None
    if arity == 2 and len(ins[1]) == len(a) and "tiles" not in attrs:
        fast = _compiled_binary(ctx, ins, op)
        if fast is not None:
            return fast
    if arity == 2 and (len(ins[1]) != len(a) or not _same_structure(a.code, ins[1].code)):
        return None
    empty = [count_code(s.code, EMPTY_CODE) for s in ins]
    if "tiles" in attrs:
        return _tile_alu(ctx, ins, fn, empty)
    # operands for every token: the payload of data, 0.0 for N (others: unused)
    operands = [s.data if s.data.dtype == f32 and not n else np.where(s.code == DATA, s.data, 0).astype(f32)
                for s, n in zip(ins, empty)]
    stamps, shift = follow_stamps(ctx, *ins)
    out = _elementwise(fn, a.code, *operands)
    absent = [ins[i].code == EMPTY_CODE for i in ABSENT_ANNIHILATES.get(op, ()) if empty[i]]
    if absent:
        out[np.logical_or.reduce(absent)] = 0.0
    ctx.stats.ops += count_code(a.code, DATA) + empty[0]
    code = np.where(a.code == EMPTY_CODE, DATA, a.code).astype(CODE_DTYPE) if empty[0] else a.code
    return _alu_result(ctx, ins, code, out, stamps, shift)


def _alu_result(ctx, ins, code, out, stamps, shift: int) -> list[Stream]:
    """An ALU's one output, recorded by :func:`finish`: a step per token, its stamps at least
    the interval (or the inputs' joint gap) apart."""
    return finish(ctx, ins, [Stream(code, out, stamps, shift=shift)], None,
                  max(ctx.ii, joint_gap(ins) or 0), stamps=stamps, shift=shift)


def _compiled_binary(ctx, ins, op: str):
    """A binary ALU of :data:`fast_native.ALU_BINARY` on two float32 streams with the same
    codes and no ``N``: the values, the codes' check and the count of operations in one
    compiled pass; None (the general path) otherwise."""
    a, b = ins
    code = fast_native.ALU_BINARY.get(op)
    if code is None or a.data.dtype != f32 or b.data.dtype != f32 or a.data.ndim != 1 \
            or b.data.ndim != 1:
        return None
    out = np.empty(len(a), dtype=f32)
    ops = int(fast_native.binary_values(code, a.code, b.code, a.data, b.data, out))
    if ops < 0:
        return None
    stamps, shift = follow_stamps(ctx, *ins)
    ctx.stats.ops += ops
    return _alu_result(ctx, ins, a.code, out, stamps, shift)


def _tile_alu(ctx, ins, fn, empty):
    """The ALU on tiles: :func:`fuseflow.sim.blocks.tiles.combine` over every token at once
    (the reference engine calls it one tile at a time: the same float32 operations)."""
    tin, tout = ctx.block.attrs["tiles"]
    spec = ctx.block.attrs.get("tile")
    spec = TileSpec.parse(spec, len(ins)) if spec else None
    a = ins[0]
    operands = []
    for s, t in zip(ins, tin):
        if s.data.shape[1:] != tuple(t):
            return None
        # N (and controls) as tiles of zeros
        operands.append(np.where((s.code == DATA).reshape((-1,) + (1,) * len(t)), s.data, f32(0.0)))
    stamps, shift = follow_stamps(ctx, *ins)
    out = tiles.combine(fn, spec, operands)
    control = ~((a.code == DATA) | (a.code == EMPTY_CODE))
    out[control] = 0.0
    steps = int(np.count_nonzero(a.code == DATA)) + empty[0]
    ctx.stats.ops += steps * tiles.product_ops(spec, tin, tout[0])
    code = np.where(a.code == EMPTY_CODE, DATA, a.code).astype(CODE_DTYPE) if empty[0] else a.code
    return _alu_result(ctx, ins, code, out, stamps, shift)

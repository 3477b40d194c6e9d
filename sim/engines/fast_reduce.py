"""The vectorized reducer, with or without the outer coordinates
(:mod:`fuseflow.sim.blocks.reduce`).

Values fold per innermost fiber in arrival order (:func:`fold_by_key`); one step per value
token (``N`` reads as 0.0), per stop and for ``D``.

With the outer coordinates, each stop ``S_k`` of the values reads one *unit* of the outer
stream, outer tokens costing no step: a coordinate (or ``N``), and when ``k > 0`` the outer
``S(k-1)`` that closes it (the fiber's result is sent between the two reads), or a bare outer
stop, an empty outer fiber (only ``S(k-1)`` is sent); ``D`` reads the outer ``D``. The step's
clock waits for every outer token it reads, so its arrival is the largest stamp among its value
token and its unit; a result sent before the unit's closing stop is read is stamped without
that stop's arrival. Outer streams that do not pair up this way with the values decline to the
reference coroutine, which reports them.
"""

from __future__ import annotations

import numpy as np

from fuseflow.dialects.tiles import TileSpec
from fuseflow.sim.blocks import tiles
from fuseflow.sim.blocks.reduce import REDUCE_KINDS
from fuseflow.sim.engines import fast_native
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE,
    DATA,
    DONE_CODE,
    EMPTY_CODE,
    TIME_DTYPE,
    Stream,
    absent_as_zero,
    count_code,
    ends_with_done,
    finish,
    has_repeat,
    step_stamps,
    stream_stamps,
)

f32 = np.float32


def fold_by_key(values: np.ndarray, keys: np.ndarray, nkeys: int, ufunc, init,
                acc: np.ndarray | None = None) -> np.ndarray:
    """``ufunc`` folded from ``init`` over the values of each key, in float32 and in order; into
    ``acc`` (folds so far, to go on with) if given.

    ``ufunc.at`` applies the operation element by element in index order, so every key's
    result is the reference accumulator's sequential one (no pairwise summation).
    """
    if acc is None:
        acc = np.full((nkeys,) + values.shape[1:], init, dtype=f32)
    with np.errstate(all="ignore"):
        ufunc.at(acc, keys, values.astype(f32, copy=False))
    return acc


def reduce(ctx, ins):
    """Sum or max per innermost fiber; one step per value (``N`` reads as 0.0), stop and ``D``;
    with a second input, the outer coordinates (module docstring)."""
    kind = ctx.block.attrs.get("kind", "sum")
    if len(ins) > 2:
        return None
    s = absent_as_zero(ins[0])
    if kind not in REDUCE_KINDS or not ends_with_done(s) or has_repeat(s.code):
        return None
    code = s.code
    sidx = np.flatnonzero(code >= 0)
    folded = _fiber_results(ctx, s, kind, sidx)
    if folded is None:
        return None
    results, seen, ops = folded
    if len(ins) == 1:
        stamps = stream_stamps(ctx, s)
        out = _emit(code, sidx, results, np.ones(len(sidx), bool), stamps, None)
    else:
        outer = _outer_units(ins[1], code[sidx], seen)
        if outer is None:
            return None
        fiber, heads, closes = outer
        otime = ins[1].time
        arrival = s.time
        early = sidx[closes]  # stops whose result is sent before the outer closing stop is read
        ready = np.maximum(arrival[early], otime[heads[closes]]).astype(np.int64)
        if arrival is s.base:
            arrival = arrival.copy()
        unit = otime[heads]
        unit[closes] = np.maximum(unit[closes], otime[heads[closes] + 1])
        np.maximum(arrival[sidx], unit, out=unit)
        arrival[sidx] = unit
        arrival[-1] = max(int(arrival[-1]), int(otime[-1]))
        stamps = step_stamps(ctx, arrival, owned=True)
        # such a result's step clock was max(previous clock + II, the value's and the
        # coordinate's arrivals)
        start = np.zeros(len(early), np.int64)
        later = early > 0
        start[later] = stamps[early[later] - 1].astype(np.int64) - ctx.latency + ctx.ii
        early_stamps = np.maximum(start, ready) + ctx.latency
        out = _emit(code, sidx, results, fiber, stamps, (closes, early_stamps))
    ctx.stats.ops += ops
    return finish(ctx, ins, [out], None, stamps=stamps)


def _fiber_results(ctx, s: Stream, kind: str, sidx: np.ndarray):
    """Per stop of ``s`` (positions ``sidx``), its fiber's result (0.0 for an empty fiber),
    whether the fiber held a value, and the operations; None if the tiles are malformed."""
    code = s.code
    tiled = "tiles" in ctx.block.attrs
    if kind == "sum" and not tiled:  # one compiled pass, no index or value copies
        return _fiber_sums(code, s.data, len(sidx))
    data_idx = np.flatnonzero(code == DATA)
    vals = s.data[data_idx].astype(f32)
    if tiled:  # tiles reduced over their own axes first, as the reference does one by one
        tin, tout = (tuple(ctx.block.attrs["tiles"][i][0]) for i in (0, 1))
        if vals.shape[1:] != tin:  # a payload without tiles: controls only, or N only
            if len(vals):
                return None
            vals = np.zeros((0,) + tin, f32)
        spec = ctx.block.attrs.get("tile")
        if spec:
            vals = tiles.reduce_axes(kind, TileSpec.parse(spec, 1), vals)
        if vals.shape[1:] != tout:
            return None
    nstops = len(sidx)
    size = int(np.prod(ctx.block.attrs["tiles"][0][0], dtype=np.int64)) if tiled else 1
    if kind == "sum":
        results, seen, _ = _fiber_sums(code, vals, nstops, compact=True)
        return results, seen, len(data_idx) * size
    # values of fiber g are the data tokens between stop g-1 and stop g; values after the last
    # stop fold into fiber nstops, which no stop emits
    fiber_of_data = np.cumsum(code >= 0)[data_idx]
    ufunc, init = (np.maximum, -np.inf) if kind == "max" else (np.add, 0.0)
    folded = fold_by_key(vals, fiber_of_data, nstops + 1, ufunc, init)[:nstops]
    seen = np.bincount(fiber_of_data, minlength=nstops + 1)[:nstops] > 0
    results = np.where(seen.reshape((-1,) + (1,) * (folded.ndim - 1)), folded, f32(0.0)).astype(f32)
    ops = len(data_idx) * size
    return results, seen, ops


def _fiber_sums(code: np.ndarray, vals: np.ndarray, nstops: int, compact: bool = False):
    """:func:`_fiber_results` of a sum (``fast_native.fiber_sums``): the float32 sums in arrival
    order (0.0 for an empty fiber, the fold's start), whether each fiber held a value, and the
    additions (one per data token). ``vals``: a value per token of ``code``, or, ``compact``,
    per data token only (tiles already reduced over their own axes)."""
    tile = vals.shape[1:]
    size = int(np.prod(tile, dtype=np.int64))
    out = np.zeros((nstops + 1, size), dtype=f32)
    seen = np.zeros(nstops + 1, dtype=np.uint8)
    fast_native.fiber_sums(code, vals.reshape(len(vals), size), compact, out, seen)
    ops = count_code(code, DATA)
    return out[:nstops].reshape((nstops,) + tile), seen[:nstops].view(bool), ops


def outer_units(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The units of an outer stream's codes (its final ``D`` excluded): the position of each
    unit's head, and whether the head is a coordinate (or ``N``) followed by a stop, which the
    unit holds too (a coordinate's unit reads its closing stop only under a stop ``S_k`` with
    ``k > 0``; see :func:`reduce`)."""
    heads = np.empty(len(code), np.int64)
    closes = np.empty(len(code), dtype=bool)
    units = int(fast_native.unit_heads_closes(code, heads, closes))  # one compiled pass
    return heads[:units], closes[:units]


def _outer_units(o: Stream, levels: np.ndarray, seen: np.ndarray):
    """How the outer stream ``o`` pairs with the value stops of levels ``levels``: per stop,
    whether it closes a fiber (a coordinate heads its unit), the unit heads, and whether each
    unit holds a closing stop; None unless every unit is what the reference reads there."""
    if not ends_with_done(o) or has_repeat(o.code):
        return None
    body = o.code[:-1]
    heads, closes = outer_units(body)
    if len(heads) != len(levels):
        return None
    head = body[heads]
    fiber = head < 0  # a coordinate or N (D and R are excluded above)
    # a coordinate alone under S0; a coordinate and its S(k-1) under S_k, k > 0; a bare outer
    # S(k-1) under an S_k that closes no value (an empty outer fiber)
    if not np.array_equal(closes, fiber & (levels > 0)):
        return None
    closing = np.where(closes, body[np.minimum(heads + 1, len(body) - 1)], head)
    want = levels.astype(np.int16) - 1
    if np.any(closing[~fiber | closes] != want[~fiber | closes]) or np.any(seen & ~fiber):
        return None
    return fiber, heads, closes


def _emit(code: np.ndarray, sidx: np.ndarray, results: np.ndarray, fiber: np.ndarray,
          stamps: np.ndarray, early) -> Stream:
    """The output stream: per stop ``S_k`` its fiber's result (where ``fiber``), then ``S(k-1)``
    when ``k > 0``; ``D`` for ``D``; each stamped like its step, except the results sent
    before their outer closing stop was read (``early``: a mask over the stops, their stamps)."""
    levels = code[sidx]
    per_stop = fiber.astype(np.int64) + (levels > 0)
    at = np.cumsum(per_stop) - per_stop  # each stop's first output (only stops and D emit)
    total = int(at[-1] + per_stop[-1]) + 1 if len(sidx) else 1
    out_code = np.empty(total, dtype=CODE_DTYPE)
    out_data = np.zeros((total,) + results.shape[1:], dtype=f32)
    out_time = np.empty(total, dtype=stamps.dtype)
    out_time[:-1] = np.repeat(stamps[sidx], per_stop)
    out_time[-1] = stamps[-1]  # D
    out_code[at[fiber]] = DATA
    out_data[at[fiber]] = results[fiber]
    higher = levels > 0
    out_code[at[higher] + fiber[higher]] = levels[higher] - 1
    out_code[-1] = DONE_CODE
    if early is not None:
        mask, when = early
        out_time[at[mask]] = when.astype(TIME_DTYPE)
    return Stream(out_code, out_data, out_time)

"""Reducer: sums (or maxes) each innermost fiber, removing one stop level."""

from __future__ import annotations

import numpy as np

from fuseflow.dialects.tiles import TileSpec
from fuseflow.sim.blocks import tiles
from fuseflow.sim.tokens import DONE, EMPTY, Stop, is_stop

REDUCE_KINDS = ("sum", "max")


def reduce(ctx):
    """val[, outer crd] -> val. ``attrs['kind']`` in ``REDUCE_KINDS`` (default 'sum').

    Values accumulate in float32 in arrival order (one step each); ``N`` (an absent entry)
    reads as 0.0.
    On ``S_k`` (one step) emits the fiber's result, then ``S(k-1)`` when ``k > 0``; an empty
    fiber yields 0.0 (for max too: max starts at -inf for every fiber). ``D`` passes (one step).

    A bare ``S_k`` (k > 0) is ambiguous in the stream grammar: an empty last fiber, or an
    empty *outer* fiber that holds no fiber at all. With the optional second input, the
    coordinates of the level above, the reducer reads one outer token per fiber: a coordinate
    (or ``N``) means a fiber, whose value is emitted; a stop means an empty outer fiber, and
    only ``S(k-1)`` is emitted. Outer tokens cost no step.

    On tiles (``attrs['tiles']``) each tile is first reduced over the axes ``attrs['tile']``
    drops (``ij->i``), then accumulated element by element; an empty fiber yields zeros.
    """
    outer = len(ctx.block.inputs) > 1
    kind = ctx.block.attrs.get("kind", "sum")
    if kind not in REDUCE_KINDS:
        ctx.error(f"unknown reduce kind {kind!r}; valid kinds: {', '.join(REDUCE_KINDS)}")
    is_max = kind == "max"
    init = np.float32(-np.inf if is_max else 0.0)
    empty = np.float32(0.0)
    reshape = None
    if "tiles" in ctx.block.attrs:  # tiles: reduced over their own axes first (attrs['tile'])
        (tin,), (tout,) = ctx.block.attrs["tiles"]
        spec = TileSpec.parse(ctx.block.attrs.get("tile") or "", 1) \
            if ctx.block.attrs.get("tile") else None
        init, empty = np.full(tout, init, np.float32), np.zeros(tout, np.float32)
        reshape = (lambda v: tiles.reduce_axes(kind, spec, np.asarray(v, np.float32)[None])[0]) \
            if spec else (lambda v: v)
    absent = np.zeros(ctx.block.attrs["tiles"][0][0], np.float32) if "tiles" in ctx.block.attrs \
        else np.float32(0.0)
    acc, seen = init, False
    while True:
        tok = yield from ctx.recv(0)
        if tok is EMPTY:  # an absent entry (an array's N) holds 0.0
            tok = absent
        if tok is DONE:
            if outer:
                last = yield from ctx.recv(1)
                if last is not DONE:
                    ctx.error(f"outer coordinates hold {last!r} where the values are done")
            yield from ctx.send(0, DONE)
            ctx.step()
            return
        if is_stop(tok):
            fiber = True
            if outer:
                o = yield from ctx.recv(1)
                if o is DONE or (is_stop(o) and (seen or o.level != tok.level - 1)):
                    ctx.error(f"outer coordinates hold {o!r} where the values close a fiber "
                              f"with {tok!r}")
                fiber = not is_stop(o)
            if fiber:
                yield from ctx.send(0, acc if seen else empty)
            if tok.level > 0:
                if outer and fiber:
                    o = yield from ctx.recv(1)
                    if not (is_stop(o) and o.level == tok.level - 1):
                        ctx.error(f"outer coordinates hold {o!r} where the values close "
                                  f"{tok!r}")
                yield from ctx.send(0, Stop(tok.level - 1))
            acc, seen = init, False
        elif reshape is not None:
            v = reshape(tok)
            acc = np.maximum(acc, v) if is_max else (acc + v).astype(np.float32)
            seen = True
            ctx.stats.ops += np.size(tok)
        else:
            v = np.float32(tok)
            acc = np.maximum(acc, v) if is_max else np.float32(acc + v)
            seen = True
            ctx.stats.ops += 1
        ctx.step()

"""Reducer: sums (or maxes) each innermost fiber, removing one stop level."""

from __future__ import annotations

import numpy as np

from fuseflow.sim.tokens import DONE, EMPTY, Stop, is_stop

REDUCE_KINDS = ("sum", "max")


def reduce(ctx):
    """val -> val. ``attrs['kind']`` in ``REDUCE_KINDS`` (default 'sum').

    Values accumulate in float32 in arrival order (one step each); ``N`` is skipped at no cost.
    On ``S_k`` (one step) emits the fiber's result, then ``S(k-1)`` when ``k > 0``; an empty
    fiber yields 0.0 (for max too: max starts at -inf for every fiber). ``D`` passes (one step).
    """
    kind = ctx.block.attrs.get("kind", "sum")
    if kind not in REDUCE_KINDS:
        ctx.error(f"unknown reduce kind {kind!r}; valid kinds: {', '.join(REDUCE_KINDS)}")
    is_max = kind == "max"
    init = np.float32(-np.inf if is_max else 0.0)
    acc, seen = init, False
    while True:
        tok = yield from ctx.recv(0)
        if tok is EMPTY:
            continue
        if tok is DONE:
            yield from ctx.send(0, DONE)
            ctx.step()
            return
        if is_stop(tok):
            yield from ctx.send(0, acc if seen else np.float32(0.0))
            if tok.level > 0:
                yield from ctx.send(0, Stop(tok.level - 1))
            acc, seen = init, False
        else:
            v = np.float32(tok)
            acc = np.maximum(acc, v) if is_max else np.float32(acc + v)
            seen = True
            ctx.stats.ops += 1
        ctx.step()

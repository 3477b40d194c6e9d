"""Sparse accumulator: a reduction over a non-innermost index variable.

A spacc of order n has inputs ``crds[0..n-1]`` (outer to inner; ``crds[j]`` is nested one
level below ``crds[j-1]`` and ``crds[n-1]`` is at the depth of the values) and ``val``, and
outputs of the same shape. It reduces over the index variable just above ``crds[0]``: values
accumulate (float32, arrival order) into a map keyed by ``(c_0, ..., c_{n-1})`` until the value
stream shows ``S_k`` with ``k >= n`` (the reduced variable's fiber closes); then the map is
flushed in sorted key order as a nested fibertree whose last fiber at output level ``j`` closes
with ``S(k-n+j)`` (the value stream with ``S(k-1)``); an empty flush emits just those stops.
Stops with ``k < n`` emit nothing. Entries whose key holds ``N`` are dropped. A value 0.0
paired with an inner *stop* is dropped (one step): it is a reducer's result for a fiber that
does not exist (a scanner turns a bare stop into a stop one level higher, which the reducer
below cannot tell from an empty fiber; e.g. a row sum of a BSR matrix with an empty block row).

On tiles (``attrs['tiles']``) the map holds tiles, summed element by element; a 0.0 paired
with an inner stop is a tile of zeros.

Cost: one step per (inner crd, value) pair, stops included, and one for ``D``; the whole
flush is stamped like any token of the flushing step (draining costs nothing).
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.tokens import DONE, EMPTY, Stop, is_data, is_stop


def flush_tokens(entries: dict, n: int, top: int) -> list[list]:
    """Output streams ``[crds_0, ..., crds_{n-1}, vals]`` of one flush closing at level ``top``.

    ``top`` is ``k - n`` for the input stop ``S_k``. Between consecutive keys sharing a prefix of
    length p, fibers at levels ``L > p`` close with ``S(L-p-1)``.
    """
    out: list[list] = [[] for _ in range(n + 1)]
    prev = None
    for key in sorted(entries):
        if prev is not None:
            p = next(j for j in range(n) if key[j] != prev[j])
            for lvl in range(p + 1, n):
                out[lvl].append(Stop(lvl - p - 1))
            if p + 1 < n:
                out[n].append(Stop(n - p - 2))
            first = p
        else:
            first = 0
        for lvl in range(first, n):
            out[lvl].append(key[lvl])
        out[n].append(entries[key])
        prev = key
    for lvl in range(n):
        out[lvl].append(Stop(top + lvl))
    out[n].append(Stop(top + n - 1))
    return out


def spacc(ctx):
    """crds[0..n-1], val -> crds[0..n-1], val; ``attrs['order']`` = n (default: inputs - 1)."""
    n = int(ctx.block.attrs.get("order", len(ctx.block.inputs) - 1))
    if len(ctx.block.inputs) != n + 1 or len(ctx.block.outputs) != n + 1:
        ctx.error(f"order {n} needs {n + 1} inputs and outputs")
    acc: dict = {}
    tiled = bool(ctx.block.attrs.get("tiles", ((), ((),)))[1][-1])
    zero = np.zeros(ctx.block.attrs["tiles"][1][-1], np.float32) if tiled else None
    coords = [None] * n
    entered = [True] + [False] * (n - 1)  # level m's fiber has its parent coordinate c_{m-1}
    while True:
        v = yield from ctx.recv(n)
        ic = yield from ctx.peek(n - 1)
        if is_stop(ic) and is_data(v) and not np.any(v != 0.0):
            ctx.step()                 # a reducer's 0.0 for a fiber that does not exist
            continue
        ic = yield from ctx.recv(n - 1)
        if (v is DONE) != (ic is DONE) or is_stop(v) != is_stop(ic) or (is_stop(v) and v != ic):
            ctx.error(f"value {v!r} does not match inner coordinate {ic!r}")
        if v is DONE:
            for j in range(n - 1):
                t = yield from ctx.recv(j)
                if t is not DONE:
                    ctx.error(f"crds[{j}] holds {t!r} at the end of the values")
            yield from ctx.send_all(DONE)
            ctx.step()
            return
        for m in range(1, n):
            if entered[m]:
                continue
            head = yield from ctx.peek(m - 1)
            if head is DONE:
                ctx.error(f"crds[{m - 1}] ended before the values")
            if is_stop(head):
                break  # the parent fiber is empty: no deeper fiber exists for this token
            coords[m - 1] = yield from ctx.recv(m - 1)
            entered[m] = True
        if not is_stop(v):
            key = (*coords[: n - 1], ic)
            if v is EMPTY:  # an absent entry (an array's N) accumulates as 0.0
                v = zero if tiled else np.float32(0.0)
            if all(is_data(c) for c in key):
                if tiled:  # tiles add element by element, from a tile of zeros
                    acc[key] = (acc.get(key, zero) + v).astype(np.float32)
                    ctx.stats.ops += v.size
                else:
                    acc[key] = np.float32(acc.get(key, np.float32(0.0)) + np.float32(v))
                    ctx.stats.ops += 1
            ctx.step()
            continue
        k = v.level
        for m in range(max(n - 1 - k, 1), n):
            entered[m] = False
        for m in range(max(n - 1 - k, 0), n - 1):
            s = yield from ctx.recv(m)
            if s != Stop(k - (n - 1 - m)):
                ctx.error(f"crds[{m}] holds {s!r} where the values' {v!r} implies S{k - (n - 1 - m)}")
        if k >= n:
            for port, toks in enumerate(flush_tokens(acc, n, k - n)):
                for t in toks:
                    yield from ctx.send(port, t)
            acc = {}
        ctx.step()

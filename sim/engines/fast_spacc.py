"""Sparse accumulators over whole streams: order 1 compiled (``fast_native``), higher orders by
a loop over the inner stops only.

One step per (inner crd, value) pair. Entries accumulate in arrival order per key until a
stop ``S_k`` with ``k >= n`` flushes them, sorted, as a tree (``flush_tokens``), all stamped
with the flushing step's clock.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.spacc import flush_tokens
from fuseflow.sim.engines import fast_native
from fuseflow.sim.engines.fast_scan import ranges
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE,
    DATA,
    DONE_CODE,
    REPEAT_CODE,
    TIME_DTYPE,
    Stream,
    absent_as_zero,
    arrival_max,
    check_stamps,
    coordinate_dtype,
    ends_with_done,
    finish,
    from_tokens,
    lockstep_precheck,
    step_stamps,
)
from fuseflow.sim.engines.fast_values import fold_by_key
from fuseflow.sim.tokens import DONE

TABLE_BYTES = 1 << 28
"""Largest accumulation table (a float32 sum per element of a value, a flag and an index per
coordinate) an order-1 accumulator allocates; wider coordinate ranges are renumbered first."""


def _tile_size(val: Stream) -> int:
    """Elements per value: 1 for scalars, a tile's element count for tiles."""
    return int(np.prod(val.data.shape[1:], dtype=np.int64))


def _paired(crd: Stream, val: Stream) -> bool:
    """Whether the inner coordinates and the values share their control structure."""
    if not (ends_with_done(crd) and ends_with_done(val)) or len(crd) != len(val) or crd.data.dtype.kind != "i":
        return False
    cc, vc = crd.code, val.code
    if cc.min() <= REPEAT_CODE or vc.min() <= REPEAT_CODE:
        return False  # R tokens (every other code is a stop, data, N or D)
    return cc is vc or fast_native.same_controls(cc, vc)


def spacc(ctx, ins):
    """crds[0..n-1], val -> crds[0..n-1], val; ``attrs['order']`` = n (default: inputs - 1).

    Order 1: one compiled pass (``fast_native.spacc_flush``) folds each flush's pairs into a
    table indexed by coordinate and lays out the sorted entries; the stamps are computed at
    the flushing steps and ``D`` only."""
    order = int(ctx.block.attrs.get("order", len(ctx.block.inputs) - 1))
    if len(ins) != order + 1 or len(ctx.block.outputs) != order + 1 or not _paired(ins[-2], ins[-1]):
        return None
    ins = [*ins[:-1], absent_as_zero(ins[-1])]  # an absent value (N) accumulates as 0.0
    if order > 1:
        return _spacc_outer(ctx, ins, order)
    crd, val = ins
    cc, vc, keys = crd.code, val.code, crd.data
    # the clocks run in the accumulator's pass (stamps are needed at flushes and D only)
    caught_up = lockstep_precheck(ctx, crd, val)
    low, high = int(keys.min()), int(keys.max())  # controls' payloads too (usually 0)
    entry = None
    if low < 0:
        entry = (cc == DATA) & (vc == DATA)
        low, high = int(keys.min(where=entry, initial=0)), int(keys.max(where=entry, initial=0))
        if low < 0:
            return None
    tile = _tile_size(val)
    names = None
    if (high + 1) * (4 * tile + 9) > TABLE_BYTES:  # renumbered: the table spans the keys present
        entry = (cc == DATA) & (vc == DATA) if entry is None else entry
        names = np.unique(keys[entry])
        keys = np.searchsorted(names, keys)  # out of range only where no pair reads it
        np.minimum(keys, max(len(names) - 1, 0), out=keys)
    del entry
    width = high + 1 if names is None else max(len(names), 1)
    # entries: at most the pairs (data tokens) and the keys per flush; the arrays' pages past
    # the entries are never touched
    nflush = int(fast_native.count_at_least(cc, 1))  # flushes
    bound = min(len(cc) - nflush - 1, nflush * width) + nflush + 1
    out_code = np.empty(bound, dtype=CODE_DTYPE)
    out_crd = np.empty(bound, dtype=coordinate_dtype(high + 1))
    out_val = np.empty((bound,) + val.data.shape[1:], dtype=np.float32)
    out_time = np.empty(bound, dtype=TIME_DTYPE)
    values = val.data.astype(np.float32, copy=False)  # as the reference adds
    track = nflush * width > 4 * len(cc)  # else every flush reads the table: fewer keys than pairs
    total, pairs, last = fast_native.spacc_flush(
        cc, vc, keys, values, width, crd.base, crd.shift, val.base, val.shift, ctx.ii,
        ctx.latency, caught_up, track, out_code, out_crd, out_val, out_time)
    check_stamps(int(last))
    ctx.stats.ops += int(pairs) * tile
    out_code, out_crd, out_val, out_time = (a[:total] for a in (out_code, out_crd, out_val, out_time))
    if names is not None:
        data = out_code == DATA
        out_crd[data] = names[out_crd[data]]
    outs = [Stream(out_code, out_crd, out_time), Stream(out_code, out_val, out_time)]
    return finish(ctx, ins, outs, None, steps=len(cc), last=int(last) - ctx.latency)


def _spacc_outer(ctx, ins, n: int):
    """Order n >= 2: walks the outer coordinate streams at the inner stops (as the reference
    block does), keys every inner data pair with the outer coordinates entered before it, and
    accumulates each flush's pairs in arrival order."""
    outer, inner, val = ins[:n - 1], ins[n - 1], ins[n]
    codes = [s.code.tolist() for s in outer]
    coords_of = [s.data.tolist() for s in outer]
    cur = [0] * (n - 1)  # head of each outer stream
    coords: list = [None] * (n - 1)
    entered = [True] + [False] * (n - 1)
    touched: list[tuple[int, int, int]] = []  # (step, outer stream, index) of every peek/receive
    runs: list[tuple[int, int, tuple]] = []  # inner data steps [start, end) and their outer coordinates
    flushes: list[tuple[int, int]] = []  # (step, stop level) of every flush
    icode = inner.code
    stops = np.flatnonzero(icode != DATA)
    stops = stops[(icode[stops] >= 0) | (icode[stops] == DONE_CODE)].tolist()
    if any(np.any((s.code < DATA) & (s.code != DONE_CODE)) for s in outer):
        return None  # N or R among the outer coordinates
    t = 0
    for p in stops:
        for m in range(1, n if p > t or icode[p] != DONE_CODE else 1):
            # entering, as every step but D's does; only the first step of a run can enter
            if entered[m]:
                continue
            if cur[m - 1] >= len(codes[m - 1]):
                return None
            touched.append((t, m - 1, cur[m - 1]))
            head = codes[m - 1][cur[m - 1]]
            if head == DONE_CODE:
                return None
            if head >= 0:
                if p > t:  # inner data under an empty parent fiber: leave it to the reference
                    return None
                break
            coords[m - 1] = coords_of[m - 1][cur[m - 1]]
            cur[m - 1] += 1
            entered[m] = True
        if p > t:
            runs.append((t, p, tuple(coords)))
        k = int(icode[p])
        if k == DONE_CODE:
            for m in range(n - 1):
                if cur[m] >= len(codes[m]) or codes[m][cur[m]] != DONE_CODE:
                    return None
                touched.append((p, m, cur[m]))
                cur[m] += 1
            break
        for m in range(max(n - 1 - k, 1), n):
            entered[m] = False
        for m in range(max(n - 1 - k, 0), n - 1):
            if cur[m] >= len(codes[m]) or codes[m][cur[m]] != k - (n - 1 - m):
                return None
            touched.append((p, m, cur[m]))
            cur[m] += 1
        if k >= n:
            flushes.append((p, k))
        t = p + 1
    if any(c != len(code) for c, code in zip(cur, codes)):
        return None
    arrival = arrival_max([inner, val])
    if touched:
        steps, streams, idx = (np.array(x, dtype=np.int64) for x in zip(*touched))
        for m in range(n - 1):
            sel = streams == m
            np.maximum.at(arrival, steps[sel], outer[m].runmax()[idx[sel]])
    stamps = step_stamps(ctx, arrival, owned=True)
    tokens = _flush_outputs(ctx, n, runs, flushes, inner, val, stamps)
    if tokens is None:
        return None
    outs = [from_tokens(toks, port_stamps) for toks, port_stamps in tokens]
    return finish(ctx, ins, outs, None, stamps=stamps)


def _flush_outputs(ctx, n, runs, flushes, inner, val, stamps):
    """Per output port ``(tokens, stamps)``: every flush's tree at its step, then ``D``."""
    starts = np.array([r[0] for r in runs], dtype=np.int64)
    ends = np.array([r[1] for r in runs], dtype=np.int64)
    steps = ranges(starts, ends)
    keep = (inner.code[steps] == DATA) & (val.code[steps] == DATA)
    run_of = np.repeat(np.arange(len(runs)), ends - starts)[keep]
    steps = steps[keep]
    flush_steps = np.array([f[0] for f in flushes], dtype=np.int64)
    flush_of = np.searchsorted(flush_steps, steps)  # the flush each pair is accumulated into
    ctx.stats.ops += len(steps) * _tile_size(val)
    ids: dict[tuple, int] = {}
    run_key = np.array([ids.setdefault(r[2], len(ids)) for r in runs], dtype=np.int64)
    outer_keys = list(ids)
    entries: list[dict] = [{} for _ in flushes]
    if len(steps):
        # pairs grouped by (flush, outer coordinates, crd); a stable sort keeps arrival order
        crds = inner.data[steps]
        outer_id = run_key[run_of]
        order = np.lexsort((crds, outer_id, flush_of))
        f, o, c = flush_of[order], outer_id[order], crds[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (f[1:] != f[:-1]) | (o[1:] != o[:-1]) | (c[1:] != c[:-1])
        group = np.cumsum(new) - 1
        sums = fold_by_key(val.data[steps[order]], group, int(group[-1]) + 1, np.add, 0.0)
        for g, i in enumerate(np.flatnonzero(new).tolist()):
            if f[i] < len(flushes):  # pairs after the last flush are never emitted
                entries[f[i]][(*outer_keys[o[i]], int(c[i]))] = sums[g]
    out: list = [([], []) for _ in range(n + 1)]
    for (p, k), table in zip(flushes, entries):
        stamp = int(stamps[p])
        for port, toks in enumerate(flush_tokens(table, n, k - n)):
            out[port][0].extend(toks)
            out[port][1].extend([stamp] * len(toks))
    for toks, port_stamps in out:
        toks.append(DONE)
        port_stamps.append(int(stamps[-1]))
    return out

"""Sparse accumulators over whole streams: order 1 vectorized, higher orders by a loop over
the inner stops only.

One step per (inner crd, value) pair. Entries accumulate in arrival order per key until a
stop ``S_k`` with ``k >= n`` flushes them, sorted, as a tree (``flush_tokens``), all stamped
with the flushing step's clock.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.spacc import flush_tokens
from fuseflow.sim.engines.fast_scan import ranges
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE, DATA, DONE_CODE, REPEAT_CODE, TIME_DTYPE, Stream, absent_as_zero, arrival_max, coordinate_dtype,
    ends_with_done, finish, follow_stamps_at, from_tokens, step_stamps,
)
from fuseflow.sim.engines.fast_values import fold_by_key
from fuseflow.sim.tokens import DONE


CHUNK = 1 << 20
"""Tokens per slice when keying an order-1 accumulator's pairs (small temporaries, reused)."""


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
    if cc is vc or np.array_equal(cc, vc):
        return True
    ctrl_c = (cc >= 0) | (cc == DONE_CODE)
    ctrl_v = (vc >= 0) | (vc == DONE_CODE)
    return np.array_equal(np.where(ctrl_c, cc, DATA), np.where(ctrl_v, vc, DATA))


def _pair_keys(crd: Stream, val: Stream, fidx: np.ndarray, skip: np.ndarray, width: int, first: int = 0,
               last: int | None = None):
    """``(keys, values)`` of the tokens of the flushes ``first .. last - 1`` (all by default), a
    slice of the streams at a time: ``(flush - first) * width + coordinate``, ``flush`` being the
    number of flushing stops (``fidx``) before the token; tokens at ``skip`` (no pair: stops,
    ``N``, ``D``) get ``(last - first) * width``, a slot past every key."""
    last = len(fidx) + 1 if last is None else last
    trash = (last - first) * width
    start = int(fidx[first - 1]) + 1 if first else 0
    stop = int(fidx[last - 1]) + 1 if last <= len(fidx) else len(crd)
    for lo in range(start, stop, CHUNK):
        hi = min(lo + CHUNK, stop)
        a, b = np.searchsorted(fidx, [lo, hi])
        cuts = fidx[a:b] - lo  # flushes in the slice: a run of one flush count ends at each
        runs = np.arange(a - first, b - first + 1, dtype=np.int64) * width  # intp: ufunc.at indexes fastest
        key = np.repeat(runs, np.diff(cuts, prepend=-1, append=hi - lo - 1))
        np.add(key, crd.data[lo:hi], out=key, casting="unsafe")
        key[skip[np.searchsorted(skip, lo):np.searchsorted(skip, hi)] - lo] = trash
        yield key, val.data[lo:hi]


TABLE = 1 << 20
"""Keys per dense accumulation table (a float32 sum and a presence flag each), reused."""


def _fold_pairs(crd: Stream, val: Stream, fidx: np.ndarray, skip: np.ndarray, width: int, nentries: int):
    """Every key ``flush * width + coordinate`` that holds pairs, in key order, with the float32
    sum of its values in arrival order.

    Flushes take consecutive tokens, so batches of flushes whose keys fit one dense table are
    folded one after the other into the same table (when the tables to scan stay within a few
    times the pairs); otherwise the keys are sorted.
    """
    nkeys = (len(fidx) + 1) * width
    per_batch = TABLE // width
    if not per_batch or nkeys > max(64 * nentries, TABLE):
        key = np.concatenate([k for k, _ in _pair_keys(crd, val, fidx, skip, width)])
        pairs = key < nkeys
        keys, inverse = np.unique(key[pairs], return_inverse=True)
        return keys, fold_by_key(val.data[pairs], inverse, len(keys), np.add, 0.0)
    sums = np.zeros((min(nkeys, per_batch * width) + 1,) + val.data.shape[1:], dtype=np.float32)
    present = np.zeros(len(sums), dtype=bool)
    found_keys, found_sums = [], []
    for first in range(0, len(fidx) + 1, per_batch):
        last = min(first + per_batch, len(fidx) + 1)
        for key, vals in _pair_keys(crd, val, fidx, skip, width, first, last):
            fold_by_key(vals, key, len(sums), np.add, 0.0, acc=sums)
            present[key] = True
        present[(last - first) * width] = False  # the slot of tokens without a pair
        local = np.flatnonzero(present)
        found_keys.append(local + first * width)
        found_sums.append(sums[local])
        sums[local] = 0.0
        present[local] = False
        sums[(last - first) * width] = 0.0
    return np.concatenate(found_keys), np.concatenate(found_sums)


def spacc(ctx, ins):
    """crds[0..n-1], val -> crds[0..n-1], val; ``attrs['order']`` = n (default: inputs - 1)."""
    order = int(ctx.block.attrs.get("order", len(ctx.block.inputs) - 1))
    if len(ins) != order + 1 or len(ctx.block.outputs) != order + 1 or not _paired(ins[-2], ins[-1]):
        return None
    ins = [*ins[:-1], absent_as_zero(ins[-1])]  # an absent value (N) accumulates as 0.0
    if order > 1:
        return _spacc_outer(ctx, ins, order)
    crd, val = ins
    cc = crd.code
    fidx = np.flatnonzero(cc >= 1)  # flushes
    nflush = len(fidx)
    # stamps of the flushing steps and of D's (the only steps that emit)
    stamps, shift = follow_stamps_at(ctx, [crd, val], np.append(fidx, len(cc) - 1))
    entry = (cc == DATA) & (val.code == DATA)  # the pairs that accumulate
    nentries = int(np.count_nonzero(entry))
    low, width = int(crd.data.min()), int(crd.data.max()) + 1  # controls' payloads too (usually 0)
    if low < 0:
        low, width = int(crd.data.min(where=entry, initial=0)), int(crd.data.max(where=entry, initial=0)) + 1
    if low < 0 or (nflush + 2) * width >= 2 ** 62:
        return None
    skip = np.flatnonzero(~entry)
    del entry
    keys, sums = _fold_pairs(crd, val, fidx, skip, width, nentries)
    kseg, kcrd = keys // width, keys % width
    ctx.stats.ops += nentries * _tile_size(val)
    # output: per flush step, its keys then S(k-1); D at the end
    per_flush = np.bincount(kseg, minlength=nflush)[:nflush] if len(kseg) else np.zeros(nflush, np.int64)
    keep = kseg < nflush  # entries after the last flush are never emitted
    kseg, kcrd, sums = kseg[keep], kcrd[keep], sums[keep]
    sizes = per_flush + 1
    total = int(sizes.sum()) + 1
    first = np.cumsum(sizes) - sizes
    out_code = np.full(total, DATA, dtype=CODE_DTYPE)
    out_time = np.empty(total, dtype=TIME_DTYPE)
    out_time[:-1] = np.repeat(stamps[:-1] + TIME_DTYPE(shift), sizes)
    out_time[-1] = stamps[-1] + shift
    pos = first[kseg] + (np.arange(len(kseg)) - (np.cumsum(per_flush) - per_flush)[kseg])
    out_crd = np.zeros(total, dtype=coordinate_dtype(width))
    out_val = np.zeros((total,) + val.data.shape[1:], dtype=np.float32)
    out_crd[pos] = kcrd
    out_val[pos] = sums
    out_code[first + per_flush] = cc[fidx] - 1
    out_code[-1] = DONE_CODE
    outs = [Stream(out_code, out_crd, out_time), Stream(out_code, out_val, out_time)]
    return finish(ctx, ins, outs, None, steps=len(cc), last=int(stamps[-1]) + shift - ctx.latency)


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

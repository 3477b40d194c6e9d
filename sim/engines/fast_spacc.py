"""Vectorized sparse accumulator of order 1 (higher orders run the reference implementation).

One step per (crd, value) pair. Entries accumulate in arrival order per coordinate until a
stop ``S_k`` with ``k >= 1`` flushes them, sorted, followed by ``S(k-1)``, all stamped with
the flushing step's clock.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE, DATA, DONE_CODE, EMPTY_CODE, Stream, ends_with_done, finish, joint_gap, step_clocks,
)
from fuseflow.sim.engines.fast_values import fold_by_key


def spacc(ctx, ins):
    """crd, val -> crd, val for ``attrs['order'] == 1``."""
    order = int(ctx.block.attrs.get("order", len(ctx.block.inputs) - 1))
    if order != 1 or len(ins) != 2 or len(ctx.block.outputs) != 2:
        return None
    crd, val = ins
    if not (ends_with_done(crd) and ends_with_done(val)) or len(crd) != len(val) or crd.data.dtype.kind != "i":
        return None
    cc, vc = crd.code, val.code
    ctrl_c = (cc >= 0) | (cc == DONE_CODE)
    ctrl_v = (vc >= 0) | (vc == DONE_CODE)
    if not np.array_equal(np.where(ctrl_c, cc, DATA), np.where(ctrl_v, vc, DATA)) or \
            np.any((cc < 0) & ~ctrl_c & (cc != DATA) & (cc != EMPTY_CODE)) or \
            np.any((vc < 0) & ~ctrl_v & (vc != DATA) & (vc != EMPTY_CODE)):
        return None
    clocks = step_clocks(np.maximum(crd.runmax(), val.runmax()), ctx.ii, joint_gap([crd, val]))
    flush = cc >= 1
    fidx = np.flatnonzero(flush)
    nflush = len(fidx)
    entry = np.flatnonzero((cc == DATA) & (vc == DATA))
    ecrd = crd.data[entry]
    width = int(ecrd.max()) + 1 if len(entry) else 1
    if (len(entry) and ecrd.min() < 0) or (nflush + 1) * width >= 2 ** 62:
        return None
    # key = (the flush a pair belongs to) * width + crd
    key = np.repeat(np.arange(nflush + 1, dtype=np.int64) * width, np.diff(fidx, prepend=-1, append=len(cc) - 1))[entry]
    key += ecrd
    if (nflush + 1) * width <= max(4 * len(entry), 1 << 20):  # a dense table, already in key order
        sums = fold_by_key(val.data[entry], key, (nflush + 1) * width, np.add, 0.0)
        present = np.zeros(len(sums), dtype=bool)
        present[key] = True
        keys = np.flatnonzero(present)
        sums = sums[keys]
    else:
        keys, inverse = np.unique(key, return_inverse=True)
        sums = fold_by_key(val.data[entry], inverse, len(keys), np.add, 0.0)
    kseg, kcrd = keys // width, keys % width
    ctx.stats.ops += len(entry)
    # output: per flush step, its keys then S(k-1); D at the end
    per_flush = np.bincount(kseg, minlength=nflush)[:nflush] if len(kseg) else np.zeros(nflush, np.int64)
    keep = kseg < nflush  # entries after the last flush are never emitted
    kseg, kcrd, sums = kseg[keep], kcrd[keep], sums[keep]
    sizes = per_flush + 1
    total = int(sizes.sum()) + 1
    first = np.cumsum(sizes) - sizes
    out_code = np.full(total, DATA, dtype=CODE_DTYPE)
    out_time = np.empty(total, dtype=np.int64)
    out_time[:-1] = np.repeat(clocks[fidx], sizes)
    out_time[-1] = clocks[-1]
    out_time += ctx.latency
    pos = first[kseg] + (np.arange(len(kseg)) - (np.cumsum(per_flush) - per_flush)[kseg])
    out_crd = np.zeros(total, dtype=np.int64)
    out_val = np.zeros(total, dtype=np.float32)
    out_crd[pos] = kcrd
    out_val[pos] = sums
    out_code[first + per_flush] = cc[fidx] - 1
    out_code[-1] = DONE_CODE
    return finish(ctx, ins, [Stream(out_code, out_crd, out_time), Stream(out_code, out_val, out_time)], clocks)

"""The vectorized join: lanes merged back in the order the fork dealt them.

The reference join (:func:`fuseflow.sim.blocks.fork.join`) reads its ``order`` input (the
forked level's coordinates) token by token: a data token names the next *unit* (lane
``t % P`` for the ``t``-th one, the fork's counter), a stop closes the merged fiber after the
bare stops of the lanes that had no unit in it, ``D`` ends. Over whole streams every unit and
every bare stop is one *item* of its lane (the tokens up to a stop of level >= depth - 1), so
the join is a gather: the items the order names, in its order, each step one lane token. The
clocks are the step recurrence over the lane tokens' running maxima raised to the order's
(received at the start of each unit or close); each fiber's merged closing stop is sent
after its last step, at ``max(c + II, order's stamp) + latency``.

Inputs the counts or stops do not fit (a malformed lane) return None: the engine then runs
the reference coroutine, which names the error.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE,
    DATA,
    DONE_CODE,
    EMPTY_CODE,
    TIME_DTYPE,
    Stream,
    concat,
    ends_with_done,
    finish,
    step_clocks,
)


def _count_below(x: np.ndarray, lane: int, lanes: int) -> np.ndarray:
    """How many counter values ``t < x`` the fork dealt to ``lane`` (``t % lanes == lane``)."""
    return np.maximum(0, (x - lane + lanes - 1) // lanes)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[e] .. starts[e] + lengths[e] - 1`` of every range, concatenated."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


def join(ctx, ins):
    """(order, lanes...) -> merged; see the module docstring."""
    depth = int(ctx.block.attrs.get("depth", 1))
    order, lanes = ins[0], ins[1:]
    P = len(lanes)
    if depth < 0 or P < 1 or not all(ends_with_done(s) for s in ins):
        return None
    gc = order.code.astype(np.int64)
    unit = (gc == DATA) | (gc == EMPTY_CODE)
    gstop = gc >= 0
    if np.any(~(unit | gstop)[:-1]):
        return None
    # fibers of the order: each closed by a stop; the units before fiber f and in it
    stop_idx = np.flatnonzero(gstop)
    F = len(stop_idx)
    units_before = np.cumsum(unit) - unit          # counter value of each token (units before it)
    c_f = units_before[stop_idx] - _units_in_fibers(unit, stop_idx)
    n_f = units_before[stop_idx] - c_f
    k_f = gc[stop_idx]
    total_units = int(unit.sum())
    if total_units != units_before[-1] or (F and c_f[0] != 0):
        return None
    # per lane and fiber: units, bare items (a lane without a unit shows a bare stop; at depth
    # 0 every lane closes every fiber), and the items before each fiber
    lane_ids = np.arange(P)[None, :]
    hi = _count_below((c_f + n_f)[:, None], lane_ids, P)
    lo = _count_below(c_f[:, None], lane_ids, P)
    n_pf = hi - lo
    bare = np.ones_like(n_pf, dtype=bool) if depth == 0 else n_pf == 0
    bare_before = np.cumsum(bare, axis=0) - bare
    # the lanes' items: tokens up to a stop of level >= depth - 1 (every token at depth 0)
    streams = list(lanes)
    merged = concat(streams)
    lane_len = np.array([len(s) for s in streams])
    lane_off = np.cumsum(lane_len) - lane_len
    code = merged.code.astype(np.int64)
    if depth == 0:
        close = np.ones(len(code), dtype=bool)
    else:
        close = (code >= depth - 1) | (code == DONE_CODE)
    close_idx = np.flatnonzero(close)
    lane_of_close = np.searchsorted(lane_off, close_idx, side="right") - 1
    items_per_lane = np.bincount(lane_of_close, minlength=P)
    expected = _count_below(np.array([total_units]), np.arange(P), P) + bare.sum(axis=0) + 1
    if not np.array_equal(items_per_lane, expected):
        return None
    item_base = np.cumsum(items_per_lane) - items_per_lane   # first item of each lane
    item_end = close_idx                                       # global index of each item's close
    item_start = np.empty_like(item_end)
    item_start[0:1] = 0
    item_start[1:] = item_end[:-1] + 1
    item_start[item_base] = lane_off                           # a lane's first item starts it

    # events in order: a unit per data token, the bare items of each close (lane order), D
    g_idx_unit = np.flatnonzero(unit)
    t = np.arange(total_units)
    lane_u = t % P
    fiber_u = np.searchsorted(stop_idx, g_idx_unit)            # fiber of each unit
    if np.any(fiber_u >= F):
        return None
    item_u = item_base[lane_u] + t // P + bare_before[fiber_u, lane_u]
    f_b, p_b = np.nonzero(bare)
    item_b = item_base[p_b] + hi[f_b, p_b] + bare_before[f_b, p_b]
    g_idx_b = stop_idx[f_b]
    item_d = item_base + items_per_lane - 1
    g_idx_d = np.full(P, len(gc) - 1)
    ev_item = np.concatenate([item_u, item_b, item_d])
    ev_g = np.concatenate([g_idx_unit, g_idx_b, g_idx_d])
    ev_lane = np.concatenate([lane_u, p_b, np.arange(P)])
    ev_kind = np.concatenate([np.zeros(len(item_u), np.int8), np.ones(len(item_b), np.int8),
                              np.full(P, 2, np.int8)])
    sort = np.lexsort((ev_lane, ev_g))
    ev_item, ev_g, ev_kind = ev_item[sort], ev_g[sort], ev_kind[sort]
    ev_start, ev_len = item_start[ev_item], item_end[ev_item] - item_start[ev_item] + 1

    # what each item must hold: units close with S(d-1), or S(d+k) for the lane's last unit in
    # the fiber; bare items are one S(d+k) (S_k at depth 0); D items one D
    if not _items_valid(code, depth, P, ev_kind, ev_start, ev_len, ev_g, units_before,
                        stop_idx, c_f, n_f, gc):
        return None

    # steps: every lane token, in event order
    steps = _ranges(ev_start, ev_len)
    ev_of_step = np.repeat(np.arange(len(ev_len)), ev_len)
    gmax = order.runmax().astype(np.int64)
    lmax = np.concatenate([s.runmax() for s in streams]).astype(np.int64)
    arrival = np.maximum(lmax[steps], gmax[ev_g[ev_of_step]])
    clocks = step_clocks(arrival, ctx.ii).astype(np.int64)

    # emissions: per step the held-back S(d-1) (first step of a unit that is not the first of
    # its fiber) and the token (unit tokens but the close; every unit token at depth 0); the
    # fiber closes after their last step; D with the last step
    first_step = np.cumsum(ev_len) - ev_len
    is_unit_step = ev_kind[ev_of_step] == 0
    forward = is_unit_step & ((steps != item_end[ev_item[ev_of_step]]) | (depth == 0))
    pend = np.zeros(len(steps), dtype=bool)
    if depth > 0:
        unit_ev = np.flatnonzero(ev_kind == 0)
        g = ev_g[unit_ev]
        prev_same_fiber = np.zeros(len(unit_ev), dtype=bool)
        fib = np.searchsorted(stop_idx, g)
        prev_same_fiber[1:] = fib[1:] == fib[:-1]
        pend[first_step[unit_ev[prev_same_fiber]]] = True
    emit = pend.astype(np.int64) + forward
    emit[-1] += 1                                              # D with the last step
    steps_before_close = np.searchsorted(ev_g, stop_idx, side="right")
    close_pos_steps = np.where(steps_before_close > 0,      # closes follow this many steps
                               np.cumsum(ev_len)[np.maximum(steps_before_close - 1, 0)], 0)
    emit_before = np.cumsum(emit) - emit
    closes_before_step = np.searchsorted(close_pos_steps, np.arange(len(steps)), side="right")
    pos_step = emit_before + closes_before_step
    emitted_before_close = np.concatenate([[0], np.cumsum(emit)])[close_pos_steps]
    pos_close = emitted_before_close + np.arange(F)
    total = int(emit.sum()) + F
    out_code = np.empty(total, dtype=CODE_DTYPE)
    out_data = np.zeros((total,) + merged.data.shape[1:], dtype=merged.data.dtype)
    out_time = np.empty(total, dtype=np.int64)
    lat = ctx.latency
    # held-back stops
    ps = np.flatnonzero(pend)
    out_code[pos_step[ps]] = depth - 1
    out_time[pos_step[ps]] = clocks[ps] + lat
    # forwarded tokens
    fs = np.flatnonzero(forward)
    fpos = pos_step[fs] + pend[fs]
    out_code[fpos] = merged.code[steps[fs]]
    out_data[fpos] = merged.data[steps[fs]]
    out_time[fpos] = clocks[fs] + lat
    # fiber closes
    last_step = clocks[np.maximum(close_pos_steps - 1, 0)] + ctx.ii
    prev_clock = np.where(close_pos_steps > 0, last_step, 0)
    out_code[pos_close] = k_f + depth
    out_time[pos_close] = np.maximum(prev_clock, gmax[stop_idx]) + lat
    # D
    out_code[-1] = DONE_CODE
    out_time[-1] = clocks[-1] + lat
    out = Stream(out_code, out_data, out_time.astype(TIME_DTYPE))
    return finish(ctx, ins, [out], clocks.astype(TIME_DTYPE), 0)


def _units_in_fibers(unit: np.ndarray, stop_idx: np.ndarray) -> np.ndarray:
    """Units in each fiber of the order (between consecutive stops)."""
    before = np.cumsum(unit)[stop_idx] if len(stop_idx) else np.zeros(0, dtype=np.int64)
    return np.diff(np.concatenate([[0], before]))


def _items_valid(code, depth, P, ev_kind, ev_start, ev_len, ev_g, units_before, stop_idx, c_f,
                 n_f, gc) -> bool:
    """Whether every item holds what its event expects (see :func:`join`)."""
    close_code = code[ev_start + ev_len - 1]
    fib = np.searchsorted(stop_idx, ev_g)
    fib_c = np.minimum(fib, len(stop_idx) - 1) if len(stop_idx) else fib
    units = ev_kind == 0
    bares = ev_kind == 1
    dones = ev_kind == 2
    if not np.all(close_code[dones] == DONE_CODE) or not np.all(ev_len[dones] == 1):
        return False
    if len(stop_idx):
        want_bare = gc[stop_idx][fib_c[bares]] + depth
        if not np.all(close_code[bares] == want_bare) or not np.all(ev_len[bares] == 1):
            return False
    if depth == 0:
        return bool(np.all(ev_len[units] == 1) and np.all(
            (close_code[units] == DATA) | (close_code[units] == EMPTY_CODE)))
    t = units_before[ev_g[units]]
    f = fib_c[units]
    last = t + P >= c_f[f] + n_f[f]
    want = np.where(last, gc[stop_idx][f] + depth, depth - 1)
    return bool(np.all(close_code[units] == want))

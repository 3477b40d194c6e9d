"""Vectorized intersecter and unioner: co-iteration as a sorted merge of keys.

A token of crd input i in fiber f (the number of stops before it) gets the key
``f*M + c`` for coordinate c, ``f*M + M-1`` for the stop closing the fiber and for ``D``
(with ``M`` above every coordinate). When every input's keys increase strictly (sorted fibers,
the same stops), the joiner's steps are exactly the distinct keys of all inputs in order: a
step pops the inputs whose head holds the step's key. Inputs with ``N`` coordinates or unsorted
fibers go to the reference implementation.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.joiner import ref_ports
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE, DATA, DONE_CODE, EMPTY_CODE, TIME_DTYPE, Stream, check_stamps, coordinate_dtype, ends_with_done, finish,
    step_clocks,
)


def _keys(crds: list[Stream]):
    """Per input keys (strictly increasing) and the key modulus, or None if not mergeable."""
    stops = None
    top = 0
    ends = []
    for s in crds:
        code = s.code
        if not ends_with_done(s) or s.data.dtype.kind != "i" or np.any((code < 0) & (code != DATA) & (code != DONE_CODE)):
            return None
        ends.append(np.flatnonzero(code != DATA))  # stops and D (nothing else is left): fiber ends
        st = code[ends[-1][:-1]]
        if stops is None:
            stops = st
        elif not np.array_equal(st, stops):
            return None
        data = code == DATA
        if len(s) > 1:
            if s.data.min(where=data, initial=0) < 0:
                return None
            top = max(top, int(s.data.max(where=data, initial=0)))
    m = top + 2
    if (len(stops) + 1) * m >= 2 ** 62:
        return None
    keys = []
    for s, end in zip(crds, ends):
        fiber = np.repeat(np.arange(len(end), dtype=np.int64) * m, np.diff(end, prepend=-1))
        fiber[end] += m - 1  # a fiber's stop (or D) sorts after its coordinates
        k = fiber
        data = np.ones(len(s), dtype=bool)
        data[end] = False
        np.add(k, s.data, out=k, where=data)
        if np.any(k[1:] <= k[:-1]):
            return None
        keys.append(k)
    return keys, m


def _merge(keys: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted distinct keys (the steps) and, per input, the step of each of its tokens."""
    base = max(range(len(keys)), key=lambda i: len(keys[i]))
    steps = keys[base]
    pos: list = []
    for i, k in enumerate(keys):  # common case: one input (a dense level) holds every key
        if i == base:
            pos.append(np.arange(len(k)))
            continue
        p = np.searchsorted(steps, k)
        if len(p) and (p[-1] >= len(steps) or not np.array_equal(steps[p], k)):
            break
        pos.append(p)
    else:
        return steps, pos
    merged = np.concatenate(keys)
    order = np.argsort(merged, kind="stable")
    ordered = merged[order]
    new = np.ones(len(merged), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    where = np.empty(len(merged), dtype=np.int64)
    where[order] = np.cumsum(new) - 1
    bounds = np.cumsum([len(k) for k in keys])[:-1]
    return ordered[new], np.split(where, bounds)


def _spread(values: np.ndarray, pos: np.ndarray, nsteps: int) -> np.ndarray:
    """Per step, ``values[m]`` of the input's head token m (token m heads steps pos[m-1]+1..pos[m])."""
    if len(pos) == nsteps:  # popped at every step
        return values
    return np.repeat(values, np.diff(pos, prepend=-1))


def _received(values: np.ndarray, pos: np.ndarray, nsteps: int) -> np.ndarray:
    """Per step, ``values[m]`` of the last token received by the end of the step (0 before any)."""
    if len(pos) == nsteps:
        return values
    return np.repeat(np.concatenate([np.zeros(1, values.dtype), values]), np.diff(pos, prepend=0, append=nsteps))


def _at(pos: np.ndarray, idx: np.ndarray, nsteps: int) -> tuple[np.ndarray, np.ndarray]:
    """At steps ``idx``: the index of the input's head token and whether the step pops it."""
    if len(pos) == nsteps:
        return idx, np.ones(len(idx), dtype=bool)
    if len(idx) == nsteps:
        popped = np.zeros(nsteps, dtype=bool)
        popped[pos] = True
        return _spread(np.arange(len(pos)), pos, nsteps), popped
    head = np.searchsorted(pos, idx)
    return head, pos[np.minimum(head, len(pos) - 1)] == idx


def _all_pop(pos: list[np.ndarray], nsteps: int) -> np.ndarray:
    """The steps at which every input pops (intersect emits there), smallest input first."""
    order = sorted(range(len(pos)), key=lambda i: len(pos[i]))
    steps = pos[order[0]]
    for i in order[1:]:
        if len(pos[i]) == nsteps:
            continue
        j = np.minimum(np.searchsorted(pos[i], steps), len(pos[i]) - 1)
        steps = steps[pos[i][j] == steps]
    return steps


def _join(ctx, ins, union: bool):
    n, ports = ref_ports(ctx)
    crds = ins[:n]
    merged = _keys(crds)
    if merged is None:
        return None
    keys, m = merged
    refs = [[ins[p] for p in group] for group in ports]
    if any(len(r) != len(c) for c, group in zip(crds, refs) for r in group):
        return None
    steps, pos = _merge(keys)
    nsteps = len(steps)
    # arrivals: every step peeks all crd heads; popping an input receives its refs
    crd_arr = None
    ref_arr: list = []
    for i in range(n):
        head_arr = _spread(crds[i].runmax(), pos[i], nsteps)
        crd_arr = head_arr.copy() if crd_arr is None else np.maximum(crd_arr, head_arr, out=crd_arr)
        arr = None
        for r in refs[i]:
            if r.same_stamps(crds[i]):
                continue  # stamped with the crds: never later than the peeked head
            got = _received(r.runmax(), pos[i], nsteps)
            arr = got if arr is None else np.maximum(arr, got)
        ref_arr.append(arr)
    full = crd_arr
    for arr in ref_arr:
        if arr is not None:
            full = np.maximum(full, arr)
    end = step_clocks(full, ctx.ii)
    check_stamps(int(end[-1]) + ctx.ii + ctx.latency)
    lat = TIME_DTYPE(ctx.latency)
    idx = np.arange(nsteps) if union else _all_pop(pos, nsteps)
    ctrl = steps[idx] % m == m - 1  # stops and D: every input pops, one point, the stop goes everywhere
    at = [_at(p, idx, nsteps) for p in pos]
    code0 = crds[0].code[at[0][0]]
    end_idx = end[idx]
    if union:
        start = np.maximum(np.concatenate([np.zeros(1, TIME_DTYPE), end[:-1] + TIME_DTYPE(ctx.ii)]), crd_arr)
        send_clock = np.where(ctrl, end_idx, start)
    else:
        send_clock = end_idx  # intersect pops every input, then sends
    out_code = np.where(ctrl, code0, DATA).astype(CODE_DTYPE)
    outs = [Stream(out_code, np.where(ctrl, 0, steps[idx] % m).astype(coordinate_dtype(m)), send_clock + lat)]
    clock = send_clock
    for i in range(n):
        h, popped = at[i]
        got = popped & ~ctrl
        if union and ref_arr[i] is not None:
            clock = np.maximum(clock, np.where(ctrl, 0, ref_arr[i][idx]))
        for r in refs[i]:
            rc = np.where(ctrl, code0, np.where(got, r.code[h], EMPTY_CODE)).astype(CODE_DTYPE)
            keep = got.reshape((-1,) + (1,) * (r.data.ndim - 1))  # tiles: whole tiles kept
            rd = np.where(keep, r.data[h], 0).astype(r.data.dtype)
            outs.append(Stream(rc, rd, (clock if union else end_idx) + lat))
    return finish(ctx, ins, outs, end, ctx.ii)  # at most one token per step on every output


def intersect(ctx, ins):
    """Coordinates present in every input, with every input's references."""
    return _join(ctx, ins, union=False)


def union(ctx, ins):
    """Coordinates present in any input; ``N`` for the references of absent inputs."""
    return _join(ctx, ins, union=True)

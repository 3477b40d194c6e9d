"""Compiled (numba) co-iteration of a joiner's coordinate streams: one sorted merge, one pass.

The inputs of an intersecter or unioner are laid end to end (``code``, ``crd`` and the stamps
``time``, input ``i`` at ``off[i] .. off[i+1] - 1``). Every input closes the same fibers with
the same stops, so the inputs leave a fiber together and a step compares coordinates only: it
takes the smallest coordinate among the inputs' heads and pops every input holding it, or,
when every head is a stop (or ``D``), pops them all. Conventions as in ``fast_native``: the
kernels compute in int64 and return the last clock for the caller's ``check_stamps``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fuseflow.sim.engines.fast_native import DATA, DONE, EMPTY

_STOP = np.int64(2 ** 62)
"""A stop's (and ``D``'s) sort key: after every coordinate of its fiber."""


@njit(cache=True, nogil=True, inline="always")
def _key(code, crd, k):
    return np.int64(crd[k]) if code[k] == DATA else _STOP


@njit(cache=True, nogil=True)
def merge_count(code, crd, off):
    """Checks that the inputs co-iterate and counts the merge: returns ``(steps, common, top)``
    (every step, the steps popping every input, the largest coordinate), or ``steps = -1`` when
    they do not: a code other than a coordinate, a stop or a final ``D``; a negative or repeated
    coordinate, or one out of order in its fiber; fibers closed by different stops."""
    n = len(off) - 1
    head = off[:-1].copy()
    steps = 0
    common = 0
    top = np.int64(0)
    while True:
        k = _STOP
        for i in range(n):
            c = code[head[i]]
            if c == DATA:
                x = np.int64(crd[head[i]])
                if x < 0:
                    return -1, 0, 0
                k = min(k, x)
            elif c < 0 and c != DONE:
                return -1, 0, 0  # N, R: not mergeable
        steps += 1
        if k == _STOP:  # every head closes the fiber
            c0 = code[head[0]]
            for i in range(n):
                if code[head[i]] != c0:
                    return -1, 0, 0
            common += 1
            if c0 == DONE:
                for i in range(n):
                    if head[i] != off[i + 1] - 1:
                        return -1, 0, 0
                return steps, common, top
            for i in range(n):
                head[i] += 1
            continue
        top = max(top, k)
        every = True
        for i in range(n):
            h = head[i]
            if code[h] == DATA and np.int64(crd[h]) == k:
                head[i] = h + 1
                if code[h + 1] == DATA and np.int64(crd[h + 1]) <= k:
                    return -1, 0, 0
            else:
                every = False
        if every:
            common += 1


@njit(cache=True, nogil=True)
def merge_fill(code, crd, off, time, refs, has_ref, ii, latency, union, out_code, out_crd, out_time,
               src_row, src, time_row, ref_time):
    """The joiner's steps over inputs :func:`merge_count` accepted: writes its emitted tokens
    (every step of a union, the steps popping every input of an intersection) and returns the
    last step's clock.

    A step peeks every input's head and receives the references of the inputs it pops: its
    arrival is the latest of the heads' stamps so far and, for inputs with ``has_ref``, of the
    references received so far (``refs``: per token, the latest stamp among its references
    stamped apart from it). Clocks: ``c_t = max(c_(t-1) + ii, arrival_t)`` from 0. Emitted:
    the coordinate or stop (``out_code``, ``out_crd``, ``out_time``) and, for an input with
    references (``src_row[i] >= 0``), its references' source token (``src[src_row[i]]``: the
    token's index in its input, -1 for ``N``, -2 for the stop). A union sends a coordinate
    once the heads arrived (the stop at its step's clock) and each input's references once
    they too arrived, in input order: the references' stamps are ``out_time`` until the first
    input with ``has_ref``, then ``ref_time[time_row[i]]`` (one row per such input; the inputs
    after it without ``has_ref`` share its row). An intersection sends everything at its
    step's clock: every stamp is ``out_time``."""
    n = len(off) - 1
    head = off[:-1].copy()
    seen = np.empty(n, np.int64)  # latest stamp up to each head
    got = np.zeros(n, np.int64)  # latest reference stamp received
    pops = np.zeros(n, np.bool_)
    keys = np.empty(n, np.int64)
    for i in range(n):
        seen[i] = time[head[i]]
    ready = np.int64(0)  # c_(t-1) + ii
    c = np.int64(0)
    e = 0
    while True:
        k = _STOP
        peek = np.int64(0)
        for i in range(n):
            x = _key(code, crd, head[i])
            keys[i] = x
            k = min(k, x)
            peek = max(peek, seen[i])
        ctrl = k == _STOP
        every = True
        arrival = peek
        for i in range(n):
            p = keys[i] == k
            pops[i] = p
            if has_ref[i]:
                if p:
                    got[i] = max(got[i], np.int64(refs[head[i]]))
                arrival = max(arrival, got[i])
            every &= p
        c = max(ready, arrival)
        c0 = code[head[0]]
        if union or every:
            send = c if ctrl or not union else max(ready, peek)
            out_code[e] = c0 if ctrl else DATA
            out_crd[e] = 0 if ctrl else k
            out_time[e] = send + latency
            clock = send
            for i in range(n):
                r = src_row[i]
                if r >= 0:
                    src[r, e] = -2 if ctrl else (head[i] - off[i] if pops[i] else -1)
                if union and has_ref[i]:
                    if not ctrl:
                        clock = max(clock, got[i])
                    ref_time[time_row[i], e] = clock + latency
            e += 1
        if ctrl and c0 == DONE:
            return c
        for i in range(n):
            if pops[i]:
                h = head[i] + 1
                head[i] = h
                seen[i] = max(seen[i], np.int64(time[h]))
        ready = c + ii


@njit(cache=True, nogil=True)
def gather_refs(src, crd_code, code, data, out_code, out_data):
    """A joiner's reference output: per emitted token, input token ``src[e]``'s reference, or
    ``N`` (-1), or the step's stop from ``crd_code`` (-2); payload 0 for both (whole tiles)."""
    for e in range(len(src)):
        s = src[e]
        if s >= 0:
            out_code[e] = code[s]
            out_data[e] = data[s]
        else:
            out_code[e] = EMPTY if s == -1 else crd_code[e]
            out_data[e] = 0

"""Compiled (numba) loops of the fast engine: the clock recurrence and the hottest layouts.

numpy needs several passes and full-size temporaries for what is one sequential loop here (the
clock recurrence is a running maximum with a ramp; an accumulator's fold a table update per
pair). Each kernel is compiled on its first call for the dtypes it gets (int32 or int64 stamps)
and cached on disk beside this module (``cache=True``; numba falls back to a user cache
directory where that is not writable), so later processes load it instead of compiling.

The kernels compute in int64 and leave every overflow check to their callers: they return the
largest clock they wrote (or the last one, where the clocks never decrease), and the caller
passes it to ``check_stamps`` before the result is used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

DATA, EMPTY, DONE = -1, -2, -3
"""The token codes the kernels read and write (``fast_stream.DATA``, ``EMPTY_CODE`` and
``DONE_CODE``; the kernels are compiled with these values)."""
REPEAT = -4
"""``fast_stream.REPEAT_CODE``."""


@njit(cache=True, nogil=True)
def clocks_1(a, sh, ii, latency, caught_up, out, select):
    """Step clocks plus ``latency`` of arrivals ``a + sh``: ``c_t = max(c_(t-1) + ii, a_t +
    sh)`` from ``c_(-1) + ii = 0`` (or ``c_t = a_t + sh`` when ``caught_up``), written to
    ``out[t]``, or to ``out[k]`` for ``t = select[k]`` when ``select`` is not empty. ``out``
    may be ``a``. Returns the last clock plus ``latency``.

    ``a`` may be raw stamps instead of their running maximum: the clock after step ``t - 1``
    is at least every arrival up to it, so ``max(c + ii, a_t)`` equals ``max(c + ii,
    max_(j<=t) a_j)``."""
    n = len(a)
    c = np.int64(-ii)
    k = 0
    if len(select):
        for t in range(n):
            x = np.int64(a[t]) + sh
            c = x if caught_up or x > c + ii else c + ii
            if select[k] == t:
                out[k] = c + latency
                k += 1
    else:
        for t in range(n):
            x = np.int64(a[t]) + sh
            c = x if caught_up or x > c + ii else c + ii
            out[t] = c + latency
    return c + latency


@njit(cache=True, nogil=True)
def clocks_2(a, sa, b, sb, ii, latency, caught_up, out, select):
    """:func:`clocks_1` of the arrivals ``max(a + sa, b + sb)`` (two streams read in lock
    step). ``out`` may be ``a``."""
    n = len(a)
    c = np.int64(-ii)
    k = 0
    if len(select):
        for t in range(n):
            x = max(np.int64(a[t]) + sa, np.int64(b[t]) + sb)
            c = x if caught_up or x > c + ii else c + ii
            if select[k] == t:
                out[k] = c + latency
                k += 1
    else:
        for t in range(n):
            x = max(np.int64(a[t]) + sa, np.int64(b[t]) + sb)
            c = x if caught_up or x > c + ii else c + ii
            out[t] = c + latency
    return c + latency


@njit(cache=True, nogil=True)
def _spacc_emit(sums, mark, touched, nt, width, by_keys, code, stamp, p, out_code, out_crd,
                out_val, out_time):
    """One flush of :func:`spacc_flush` laid out from output position ``p``: the marked
    coordinates in increasing order (``by_keys``: the ``nt`` noted in ``touched``, sorted;
    else read off the table) with their sums, which are cleared, then ``S(code - 1)``; all
    stamped ``stamp``. Returns the next output position."""
    if by_keys:
        touched[:nt].sort()
    else:
        nt = 0
        for c in range(width):
            touched[nt] = c
            nt += mark[c]
    for i in range(nt):
        c = touched[i]
        out_code[p] = DATA
        out_crd[p] = c
        out_val[p] = sums[c]
        out_time[p] = stamp
        sums[c] = 0
        mark[c] = 0
        p += 1
    out_code[p] = code - 1
    out_crd[p] = 0
    out_val[p] = 0
    out_time[p] = stamp
    return p + 1


@njit(cache=True, nogil=True)
def spacc_flush(cc, vc, crd, val, width, a, sa, b, sb, ii, latency, caught_up, track, out_code,
                out_crd, out_val, out_time):
    """The outputs of an order-1 sparse accumulator: its pairs (``cc`` and ``vc`` both data,
    ``crd`` in ``[0, width)``) folded per flush (a stop ``S_k``, ``k >= 1``, of ``cc``) into
    float32 sums in arrival order (one addition per pair, as the reference), laid out as the
    flush's coordinates in increasing order with their sums, then ``S(k-1)``, all stamped with
    the flushing step's clock plus ``latency``; then ``D`` stamped likewise. The step clocks
    are :func:`clocks_2`'s of the stamps ``a + sa`` and ``b + sb`` (one step per token, the
    recurrence run in the same pass). ``val`` holds a scalar or a tile per token. The output
    arrays must hold every flush's entries (at most its pairs, at most ``width``) and stop, and
    ``D``. Pairs after the last flush are never emitted. Returns the number of output tokens,
    of pairs, and the last step's stamp (``D``'s, the largest).

    ``track``: the coordinates a flush holds are noted as they arrive (without a branch: whether
    a key is new is often unpredictable) and sorted, or read off the table in order when they
    cover a good part of it (no comparisons: a few hundred keys of a few thousand); otherwise
    (flushes with more pairs than the table has keys) every flush reads the whole table.

    The loop over the tokens holds only the clock and the fold; a flush's layout is a call
    (:func:`_spacc_emit`): with it inline the loop ran about 1.4x slower."""
    sums = np.zeros((width,) + val.shape[1:], dtype=np.float32)
    mark = np.zeros(width, dtype=np.uint8)
    touched = np.empty(width + 1, dtype=np.int64)
    nt = 0
    p = 0
    pairs = 0
    clock = np.int64(-ii)
    if track:
        for t in range(len(cc)):
            x = max(np.int64(a[t]) + sa, np.int64(b[t]) + sb)
            clock = x if caught_up else max(x, clock + ii)
            code = cc[t]
            if (code & vc[t]) == DATA:  # both data (DATA is -1, all bits set)
                pairs += 1
                c = np.intp(crd[t])
                touched[nt] = c
                nt += 1 - mark[c]
                mark[c] = 1
                sums[c] += val[t]
            elif code >= 1:
                p = _spacc_emit(sums, mark, touched, nt, width, nt * 32 < width, code,
                                clock + latency, p, out_code, out_crd, out_val, out_time)
                nt = 0
    else:
        for t in range(len(cc)):
            x = max(np.int64(a[t]) + sa, np.int64(b[t]) + sb)
            clock = x if caught_up else max(x, clock + ii)
            code = cc[t]
            if (code & vc[t]) == DATA:
                pairs += 1
                c = np.intp(crd[t])
                mark[c] = 1
                sums[c] += val[t]
            elif code >= 1:
                p = _spacc_emit(sums, mark, touched, 0, width, False, code, clock + latency, p,
                                out_code, out_crd, out_val, out_time)
    out_code[p] = DONE
    out_crd[p] = 0
    out_val[p] = 0
    out_time[p] = clock + latency
    return p + 1, pairs, clock + latency


@njit(cache=True, nogil=True)
def dense_fibers(code, time, shift, n, ii, latency, out_code, out_crd, out_time):
    """A dense scan of fibers of ``n >= 1`` coordinates, one per data reference of ``code``
    (every stop absorbed by the reference before it, ``D`` last; stamps ``time + shift``),
    laid out: per reference, coordinates ``0 .. n-1`` and the close (``S(k+1)`` for an
    absorbed ``S_k``, else ``S0``), then ``D``.

    A fiber's first step waits for its reference (``c = max(c + ii, a)``, the running maximum
    of the stamps up to it), its other coordinates follow ``ii`` apart, its close waits for the
    next token; ``D``'s step for ``D``. Returns the clock of ``D``'s step."""
    m = len(code)
    c = np.int64(-ii)
    rm = np.int64(0)
    p = 0
    for i in range(m - 1):
        rm = max(rm, np.int64(time[i]) + shift)
        if code[i] != DATA:
            continue
        c = max(c + ii, rm)
        up = np.uint64(p)  # unsigned: no wraparound check per access
        stamp = c + latency
        for j in range(np.uint64(n)):
            out_code[up + j] = DATA
            out_crd[up + j] = j
            out_time[up + j] = stamp
            stamp += ii
        p += n
        c = max(c + n * ii, max(rm, np.int64(time[i + 1]) + shift))
        nxt = code[i + 1]
        out_code[p] = nxt + 1 if nxt >= 0 else 0
        out_crd[p] = 0
        out_time[p] = c + latency
        p += 1
    c = max(c + ii, max(rm, np.int64(time[m - 1]) + shift))
    out_code[p] = DONE
    out_crd[p] = 0
    out_time[p] = c + latency
    return c


@njit(cache=True, nogil=True)
def unit_clocks(lead, lead_shift, src, src_shift, heads, sidx, closes, ii, latency, out):
    """Step stamps of a block that takes one step per token of ``lead`` (stamps ``lead +
    lead_shift``) and walks ``src`` unit by unit (a repeater's signals and input, a locate's
    coordinates and parent references): unit ``u`` is ``src[heads[u]]``, acted on by the lead
    tokens ``sidx[u-1] + 1 .. sidx[u]`` (the last unit by the rest); every step peeks its
    unit's head, step ``sidx[u]`` the token after it where ``closes[u]``. The peeked indices
    never decrease, so ``src``'s running maximum is carried along. Returns the last stamp."""
    units = len(heads)
    c = np.int64(-ii)
    rm = np.int64(0)
    q = 0
    u = 0
    for t in range(len(lead)):
        closing = u < units - 1 and t == sidx[u]
        peek = heads[u] + closes[u] if closing else heads[u]
        while q <= peek:
            rm = max(rm, np.int64(src[q]) + src_shift)
            q += 1
        c = max(c + ii, max(rm, np.int64(lead[t]) + lead_shift))
        out[t] = c + latency
        u += closing
    return c + latency


@njit(cache=True, nogil=True)
def repeat_layout(code, data, heads, sidx, out_code, out_data):
    """A repeater's output codes and payloads: unit ``u`` (input token ``heads[u]``) repeated
    over its signals ``sidx[u-1] + 1 .. sidx[u]``, its last (``S``) step giving the close: a
    bare ``S_k`` gives ``S(k+1)``, a data or ``N`` head ``S(k+1)`` if the next input token is
    ``S_k`` (absorbed), else ``S0``; the last unit (``D``) is copied. ``data`` and
    ``out_data`` hold a scalar or a tile per token."""
    units = len(heads)
    t = np.uint64(0)  # unsigned: no wraparound check per access
    one = np.uint64(1)
    for u in range(units):
        h = heads[u]
        hc = code[h]
        end = np.uint64(sidx[u] if u < units - 1 else len(out_code) - 1)
        if data.ndim == 1:
            v = data[h]
            while t < end:
                out_code[t] = hc
                out_data[t] = v
                t += one
        else:
            while t < end:
                out_code[t] = hc
                out_data[t] = data[h]
                t += one
        if u < units - 1:
            nxt = code[h + 1]
            out_code[t] = hc + 1 if hc >= 0 else (nxt + 1 if nxt >= 0 else 0)
            out_data[t] = 0
        else:
            out_code[t] = hc
            out_data[t] = data[h]
        t += one


@njit(cache=True, nogil=True)
def lead_wins(lead, lead_shift, src, src_shift, heads, sidx, closes, ii):
    """Whether a block of :func:`unit_clocks` whose lead stamps are at least ``ii`` apart never
    waits for ``src``, its clocks then being the lead's stamps.

    Its clocks are ``c_t = max(s_t, ii*t + max(0, max_(j<=t) (h_j - ii*j)))`` with ``s`` the
    lead stamps and ``h`` what each step peeks of ``src``, which is constant over runs of steps
    (a unit's steps before its last, then its last). Since ``s_t - ii*t`` never decreases, the
    lead wins over a whole run if it wins at the run's first step: one check per run."""
    units = len(heads)
    best = np.int64(0)
    rm = np.int64(0)
    q = 0
    start = 0
    for r in range(2 * units):
        u = r // 2
        if r % 2 == 0:  # the unit's first step, peeking its head
            first, peek = start, heads[u]
        elif u < units - 1:  # its last, the S step, peeking the next token if it closes
            first, peek = sidx[u], heads[u] + np.int64(closes[u])
            start = first + 1
        else:  # D's
            first, peek = len(lead) - 1, heads[u]
        while q <= peek:
            rm = max(rm, np.int64(src[q]) + src_shift)
            q += 1
        best = max(best, rm - ii * first)
        if np.int64(lead[first]) + lead_shift - ii * first < best:
            return False
    return True


@njit(cache=True, nogil=True)
def scan_layout(code, time, shift, lo, hi, table, starts, gather, ii, latency, out_code, out_crd,
                out_ref, out_time):
    """A level scan laid out in one pass over its input references (``code``, stamps ``time +
    shift``): the i-th data reference's fiber is the children ``lo[i] .. hi[i] - 1``, one step
    each (coordinate and child reference), then the close (``S(k+1)`` absorbing a next
    ``S_k``, else ``S0``); ``N`` gives ``N`` and a close; a bare ``S_k`` gives ``S(k+1)``; ``D``
    gives ``D``. Coordinates: ``child - lo[i]`` (``gather`` 0, a dense level), ``table[child]``
    (1) or ``table[starts[child]]`` (2, a grouping level). Control tokens carry 0.

    Clocks: a fiber's first step, ``N`` and a stop wait for their token, a close for the token
    after its owner (``c = max(c + ii, a)``, ``a`` the running maximum of the stamps up to it);
    the other steps follow ``ii`` apart. Returns the last stamp.

    A fiber of valid children (a dense level's, or a table's, the usual case) is written with
    unsigned indices: numba checks a signed index for wraparound on every access, which keeps
    the loop from running at the speed of its stores."""
    m = len(code)
    c = np.int64(-ii)
    rm = np.int64(0)
    p = 0
    r = 0
    i = 0
    ntable = len(table)
    while i < m:
        rm = max(rm, np.int64(time[i]) + shift)
        k = code[i]
        if k == DATA or k == EMPTY:
            if k == DATA:
                a, b = lo[r], hi[r]
                r += 1
                if b > a:
                    c = max(c + ii, rm)
                    n = b - a
                    if a >= 0 and (gather == 0 or (gather == 1 and b <= ntable)):
                        # unsigned indices: no wraparound checks in the loop
                        up, ua = np.uint64(p), np.uint64(a)
                        stamp = c + latency
                        for j in range(np.uint64(n)):
                            out_code[up + j] = DATA
                            out_ref[up + j] = ua + j
                            if gather == 0:
                                out_crd[up + j] = j
                            else:
                                out_crd[up + j] = table[ua + j]
                            out_time[up + j] = stamp
                            stamp += ii
                        p += n
                        c += n * ii
                    else:
                        for child in range(a, b):
                            out_code[p] = DATA
                            out_ref[p] = child
                            if gather == 0:
                                out_crd[p] = child - a
                            elif gather == 1:
                                out_crd[p] = table[child]
                            else:
                                out_crd[p] = table[starts[child]]
                            out_time[p] = c + latency
                            c += ii
                            p += 1
                    c -= ii
            else:
                c = max(c + ii, rm)
                out_code[p] = EMPTY
                out_ref[p] = 0
                out_crd[p] = 0
                out_time[p] = c + latency
                p += 1
            nxt = code[i + 1]
            c = max(c + ii, max(rm, np.int64(time[i + 1]) + shift))
            out_code[p] = nxt + 1 if nxt >= 0 else 0
            if nxt >= 0:  # absorbed
                i += 1
                rm = max(rm, np.int64(time[i]) + shift)
        else:
            c = max(c + ii, rm)
            out_code[p] = k + 1 if k >= 0 else k
        out_ref[p] = 0
        out_crd[p] = 0
        out_time[p] = c + latency
        p += 1
        i += 1
    return c + latency


@njit(cache=True, nogil=True)
def count_equal(code, c):
    """How many entries of ``code`` equal ``c`` (one pass, no temporary)."""
    n = 0
    for i in range(len(code)):
        n += code[i] == c
    return n


@njit(cache=True, nogil=True)
def count_at_least(code, c):
    """How many entries of ``code`` are at least ``c`` (one pass, no temporary)."""
    n = 0
    for i in range(len(code)):
        n += code[i] >= c
    return n


@njit(cache=True, nogil=True)
def positions_of(code, c):
    """The indices of the entries of ``code`` equal to ``c``, increasing (int64)."""
    out = np.empty(count_equal(code, c), dtype=np.int64)
    k = 0
    for i in range(len(code)):
        if code[i] == c:
            out[k] = i
            k += 1
    return out


@njit(cache=True, nogil=True)
def contains(code, c):
    """Whether some entry of ``code`` equals ``c`` (stops at the first)."""
    for i in range(len(code)):
        if code[i] == c:
            return True
    return False


@njit(cache=True, nogil=True)
def same_controls(cc, vc):
    """Whether two equally long code arrays hold the same control tokens (stops and ``D``) at
    the same places, data or ``N`` elsewhere (stops at the first difference)."""
    for t in range(len(cc)):
        a, b = cc[t], vc[t]
        if a != b and (a >= 0 or b >= 0 or a == DONE or b == DONE):
            return False
    return True


@njit(cache=True, nogil=True)
def gather_values(code, refs, vals, out):
    """An array block's loads: ``out[i] = vals[refs[i]]`` for every token (a control's payload,
    usually 0, reads a value no one uses), 0 where ``code`` is ``N``, in one pass that also
    checks the references. Returns the number of data tokens, or -1 as soon as a reference
    falls outside ``vals`` (``out`` then partly written; the caller takes another path)."""
    n = len(vals)
    loads = 0
    for i in range(len(code)):
        r = refs[i]
        if r < 0 or r >= n:
            return -1
        k = code[i]
        out[i] = vals[np.uint64(r)] if k != EMPTY else 0  # checked: no wraparound test
        loads += k == DATA
    return loads


@njit(cache=True, nogil=True)
def gather_rows(vals, refs, n, out):
    """A dense scan's values: row ``refs[i]`` of ``vals`` (``vals[r*n : r*n + n]``) at
    ``out[i*(n+1) : i*(n+1) + n]``, 0 at each row's close and at the last token (``D``). The
    caller checks the references (every row inside ``vals``)."""
    p = np.uint64(0)
    width = np.uint64(n)
    for i in range(len(refs)):
        base = np.uint64(refs[i]) * width
        for j in range(width):
            out[p + j] = vals[base + j]
        out[p + width] = 0
        p += width + np.uint64(1)
    out[p] = 0


ALU_BINARY = {"add": 0, "sub": 1, "mul": 2}
"""The binary ALU ops :func:`binary_values` computes, by name (exact float32 arithmetic: the
same bits as numpy's)."""


@njit(cache=True, nogil=True)
def binary_values(op, ca, cb, xa, xb, out):
    """A binary ALU's values over two float32 streams with the same codes and no ``N``:
    ``out[t] = xa[t] <op> xb[t]`` for every token (``op`` from :data:`ALU_BINARY`; a control's
    payload gives a value no one reads, as the array form does), in one pass that checks the
    codes. Returns the number of data tokens, or -1 when the codes differ or hold ``N``
    (nothing written; the caller takes the general path)."""
    data = 0
    bad = False
    for t in range(len(ca)):  # without a branch: vectorized
        k = ca[t]
        bad |= (k != cb[t]) | (k == EMPTY)
        data += k == DATA
    if bad:
        return -1
    if op == 0:
        for t in range(len(ca)):
            out[t] = xa[t] + xb[t]
    elif op == 1:
        for t in range(len(ca)):
            out[t] = xa[t] - xb[t]
    else:
        for t in range(len(ca)):
            out[t] = xa[t] * xb[t]
    return data


@njit(cache=True, nogil=True)
def fiber_sums(code, vals, compact, out, seen):
    """A sum reducer's fold: the values of fiber ``g`` (the data tokens of ``code`` between its
    ``g``-th and ``g+1``-th stop ``S_k``, ``k >= 0``) added in arrival order in float32 into
    ``out[g]`` (zeros on entry; rows of the tile's elements, ``(fibers + 1, size)``: values
    after the last stop go to the last row), and ``seen[g]`` set. ``vals`` is ``(tokens,
    size)``: a row per token of ``code``, or per data token only when ``compact``."""
    g = 0
    j = 0
    size = out.shape[1]
    if size == 1:  # scalars: the sum in a register (a chain of additions, not of stores)
        acc = np.float32(0.0)
        held = 0
        for t in range(len(code)):
            k = code[t]
            if k == DATA:
                acc += np.float32(vals[j if compact else t, 0])
                held = 1
                j += 1
            elif k >= 0:
                out[g, 0] = acc
                seen[g] = held
                acc = np.float32(0.0)
                held = 0
                g += 1
        out[g, 0] = acc
        seen[g] = held
        return
    for t in range(len(code)):
        k = code[t]
        if k == DATA:
            row = j if compact else t
            for e in range(size):
                out[g, e] += np.float32(vals[row, e])
            seen[g] = 1
            j += 1
        elif k >= 0:
            g += 1


_HIT_BLOCK = 4096
"""Entries counted at once (a branch-free loop) before the block holding a wanted hit is read
one entry at a time (:func:`hit_positions`)."""


@njit(cache=True, nogil=True, inline="always")
def _is_hit(x, c, at_least):
    return (x == c) | (at_least & (x >= c))


@njit(cache=True, nogil=True, inline="always")
def _hits_in(code, lo, hi, c, at_least):
    """Hits among ``code[lo:hi]`` (the test hoisted out of the loop, which then vectorizes)."""
    m = 0
    if at_least:
        for j in range(lo, hi):
            m += code[j] >= c
    else:
        for j in range(lo, hi):
            m += code[j] == c
    return m


@njit(cache=True, nogil=True)
def count_hits(code, c, at_least):
    """How many entries of ``code`` equal ``c`` (or, with ``at_least``, are at least ``c``):
    one pass without a branch per entry."""
    return _hits_in(code, 0, len(code), c, at_least)


@njit(cache=True, nogil=True)
def hit_positions(code, c, at_least, first, total):
    """The indices of hits ``first`` and ``first + 1`` (counting from 0; -1 where there is
    none) among the ``total`` entries of ``code`` equal to ``c`` (or at least ``c``, with
    ``at_least``), read from whichever end of ``code`` is nearer to them, whole blocks of
    entries without the hit counted and skipped."""
    out = np.full(2, -1, dtype=np.int64)
    n = len(code)
    if total <= 0 or first >= total:
        return out
    if first < total - first:  # forwards: hit k is the first hit at or after index i
        k, i = 0, 0
        while i < n:
            end = min(i + _HIT_BLOCK, n)
            m = _hits_in(code, i, end, c, at_least)
            if k + m <= first:
                k += m
                i = end
                continue
            for j in range(i, n):
                if _is_hit(code[j], c, at_least):
                    if k == first:
                        out[0] = j
                    elif k == first + 1:
                        out[1] = j
                        return out
                    k += 1
            return out
        return out
    k, i = total - 1, n  # backwards: hit k is the last hit before index i
    while i > 0:
        start = max(i - _HIT_BLOCK, 0)
        m = _hits_in(code, start, i, c, at_least)
        if k - m >= first + 1:
            k -= m
            i = start
            continue
        for j in range(i - 1, -1, -1):
            if _is_hit(code[j], c, at_least):
                if k == first + 1:
                    out[1] = j
                elif k == first:
                    out[0] = j
                    return out
                k -= 1
        return out
    return out


@njit(cache=True, nogil=True)
def last_at_least(code, k, low):
    """One past the last index ``i < k`` with ``code[i] >= low``, or 0 (read backwards)."""
    for i in range(min(k, len(code)) - 1, -1, -1):
        if code[i] >= low:
            return i + 1
    return 0


@njit(cache=True, nogil=True)
def unit_heads_closes(code, heads, closes):
    """The units of a stream walked unit by unit (a data or ``N`` token with the stop after it,
    which it absorbs, or a bare stop or ``D``): each unit's head index into ``heads`` and
    whether it absorbs a stop into ``closes`` (both at least ``len(code)`` long); returns the
    number of units."""
    u = 0
    owner = False  # the previous token owns a fiber
    for i in range(len(code)):
        c = code[i]
        if owner and c >= 0:
            closes[u - 1] = True
        else:
            heads[u] = i
            closes[u] = False
            u += 1
        owner = (c == DATA) | (c == EMPTY)
    return u


@njit(cache=True, nogil=True)
def stop_positions(code, n, out):
    """The indices of the first ``len(out)`` stops (``code[i] >= 0``) among the first ``n``
    entries of ``code``, into ``out``, read forwards and no further than the last one needed;
    returns how many were found."""
    k = 0
    m = len(out)
    if m == 0:
        return 0
    for i in range(min(n, len(code))):
        if code[i] >= 0:
            out[k] = i
            k += 1
            if k == m:
                break
    return k


@njit(cache=True, nogil=True)
def first_at_least(code, low):
    """One past the first index ``i`` with ``code[i] >= low``, or 0 (read forwards)."""
    for i in range(len(code)):
        if code[i] >= low:
            return i + 1
    return 0


@njit(cache=True, nogil=True)
def signal_stops(sig, owner, out):
    """A repeater's checks on its signals ``sig`` against the units of its input: every signal
    but the last is ``R`` or ``S0`` (code 0), the last is ``D``; ``S0`` number ``u`` closes unit
    ``u`` (``out[u]``: its index; ``out`` holds one per unit but the last, ``D``'s), an ``R``
    repeats the current unit, which must own a fiber (``owner[u]``: a data or ``N`` head), and
    none comes after the last unit's ``S0``. Returns whether the signals pass (``out`` is
    complete then).

    ``R`` is by far the most common signal (one per repeated token): the loop skips it with one
    well-predicted branch and checks a unit's owner at its ``S0``, when ``R`` came before it."""
    units = len(out)
    n = len(sig)
    if n == 0 or sig[n - 1] != DONE:
        return False
    if units == 0:
        return n == 1
    k = 0
    prev = -1  # the last S0's index
    for t in range(n - 1):
        x = sig[t]
        if x == REPEAT:
            continue
        if x != 0 or k >= units or (t > prev + 1 and not owner[k]):
            return False
        out[k] = t
        prev = t
        k += 1
    return k == units and prev == n - 2


@njit(cache=True, nogil=True)
def span_stats(lo, hi):
    """Over the spans ``lo[i] .. hi[i] - 1``: their total length, the least length (0 if none),
    the largest ``hi[i] - 1`` of a non-empty span and how many are non-empty (one pass)."""
    total = 0
    least = 0
    top = 0
    nonempty = 0
    for i in range(len(lo)):
        n = np.int64(hi[i]) - np.int64(lo[i])
        total += n
        if i == 0 or n < least:
            least = n
        if n > 0:
            end = np.int64(hi[i]) - 1
            if nonempty == 0 or end > top:
                top = end
            nonempty += 1
    return total, least, top, nonempty


@njit(cache=True, nogil=True)
def segment_bounds(pos, refs, lo, hi):
    """``lo[i] = pos[refs[i]]`` and ``hi[i] = pos[refs[i] + 1]`` (a compressed level's fiber
    under each reference); False as soon as a reference has no segment (``lo``, ``hi`` then
    partly written)."""
    n = len(pos) - 1
    for i in range(len(refs)):
        r = refs[i]
        if r < 0 or r >= n:
            return False
        lo[i] = pos[r]
        hi[i] = pos[r + 1]
    return True

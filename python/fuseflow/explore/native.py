"""Compiled (numba) array work of the cost model's sparse accumulators and joiners.

A compiled kernel (:mod:`~fuseflow.explore.compiled`) predicts an accumulator with a few
dozen numpy calls on small arrays (the miss matrix of :func:`~fuseflow.explore.joins.held`,
fiber-size groups, key sizes): on the small graphs a repeated prediction is mostly their
per-call overhead. Here each accumulator's and joiner's arithmetic is one compiled call on the
same formulas. Only compiled kernels use it (``kernel.COMPILE_AFTER``): numba's first call
in a process, loading these functions from their on-disk cache (``cache=True``, beside this
module, as the fast engine's ``fast_native``), costs 0.3-0.4 s once per process, which a
first prediction (a reference walk of 4-7 ms on a small graph) does not pay.

The miss matrix ``C(J − n_c, d) / C(J, d)`` (``joins.misses``) of an integral fiber size
``d`` is the product ``Π_{j=1..d} (top_c − j) / (J + 1 − j)`` (``top_c = J − n_c + 1``):
``Γ(x) / Γ(x − d)`` of an integral ``d`` is ``(x − 1)…(x − d)``. One pass per step ``j``
over the keys (vectorized) gives every fiber size up to ``max d`` at once, a multiplication
per step and key instead of a ``ln``, a division and an ``exp`` per size and key; fractional
sizes (bin means) take the log-gammas as :func:`~fuseflow.explore.joins.misses_series`
does. The results equal the numpy path's to the rounding of its log-gammas (tested).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from fuseflow.explore.joins import SERIES_FROM, SIZE_ROUNDING, UNIQUE_ABOVE

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

PRODUCT_STEPS = 16
"""Steps per fiber size (``max d ≤ PRODUCT_STEPS · sizes``) up to which integral sizes take
the product: a step is a vectorized multiply per key, an entry by log-gammas 15-20 times
that."""

MISSES_NEGLIGIBLE = -40.0
"""A bound on the log of a miss probability below which the key is kept with probability
exactly 1.0: ``1 − p`` rounds to 1.0 for ``p ≤ 2⁻⁵⁴`` (``ln 2⁻⁵⁴ ≈ −37.4``). ``ln P_miss(d) =
ln Γ(top) − ln Γ(top − d) + ln Γ(J + 1 − d) − ln Γ(J + 1)`` is 0 at ``d = 0`` and concave
(its second derivative ``ψ'(J + 1 − d) − ψ'(top − d) ≤ 0``, ``top ≤ J + 1``), so it lies
below ``d · (ψ(top) − ψ(J + 1))``: :func:`kept_sums`' log-gamma path skips the entries whose
bound is below this, with the same sums as evaluating them. The margin of 2.6 over −37.4 is
billions of times the rounding of the log-gammas (about 1e-12 at the published graphs'
populations)."""

_NONE = np.zeros(0, dtype=np.intp)


@njit(cache=True, nogil=True)
def log_gamma(x):
    """``ln Γ(x)``: Stirling's series from :data:`~fuseflow.explore.joins.SERIES_FROM`
    (``joins.misses_series``' terms), ``math.lgamma`` below."""
    if x >= SERIES_FROM:
        r = 1.0 / x
        return ((x - 0.5) * math.log(x) - x + _HALF_LOG_2PI
                + r * (1.0 / 12.0 - r * r * (1.0 / 360.0)))
    return math.lgamma(x)


@njit(cache=True, nogil=True)
def kept_sums(weights, d, q, counts, J, by_key, per_fiber):
    """Fills ``by_key[c] = Σ_i weights[i] · kept[i, c]`` and ``per_fiber[i] = Σ_c counts[c]
    · kept[i, c]``, ``kept = 1 − joins.misses(d, q, J)``, without building the matrix.
    ``counts`` empty: all 1."""
    D, C = d.shape[0], q.shape[0]
    ones = counts.shape[0] == 0
    by_key[:] = 0.0
    per_fiber[:] = 0.0
    maxd = 0.0
    for i in range(D):
        maxd = max(maxd, d[i])
    if J >= 1.0 and J < maxd <= J * (1.0 + SIZE_ROUNDING):
        d = np.minimum(d, J)                       # sizes above J by rounding (joins)
        maxd = J
    integral = True
    for i in range(D):
        if d[i] != math.floor(d[i]):
            integral = False
    if J < max(maxd, 1.0):                         # population unknown: binomial
        for c in range(C):
            lq = math.log1p(-min(q[c], 1.0 - 1e-12))
            n = 1.0 if ones else counts[c]
            for i in range(D):
                k = 1.0 - math.exp(d[i] * lq)
                by_key[c] += weights[i] * k
                per_fiber[i] += n * k
        return
    top = np.empty(C)
    for c in range(C):
        top[c] = (J + 1.0) - q[c] * J
    if integral and maxd <= PRODUCT_STEPS * D:
        # p[c]: the misses of fiber size `step`; where rest = top - size < 1, rest / C(J,
        # size) (joins._few_holders_missed; `few` is 1 / C(J, step)), 0 once rest <= 0.
        # rest falls with the step: while the least top keeps it >= 1 no key needs the
        # test (a loop without it, twice as fast); once the largest is <= 0, every p is 0
        # from then on, as the loop would set it.
        lo, hi = np.inf, -np.inf
        for c in range(C):
            lo, hi = min(lo, top[c]), max(hi, top[c])
        p = np.ones(C)
        step = 0
        few = 1.0
        for i in _ascending(d):
            while step < d[i]:
                step += 1
                j = float(step)
                if hi - j <= 0.0:
                    p[:] = 0.0
                    step = int(maxd) + 1
                    break
                inv = 1.0 / (J + 1.0 - j)
                few *= j * inv
                if lo - j >= 1.0:
                    for c in range(C):
                        p[c] = p[c] * ((top[c] - j) * inv)
                else:
                    for c in range(C):
                        rest = top[c] - j
                        p[c] = p[c] * (rest * inv) if rest >= 1.0 else \
                            rest * few if rest > 0.0 else 0.0
            _add_row(weights[i], p, counts, ones, by_key, per_fiber, i)
        return
    # slope[c] > ψ(top) − ψ(J + 1) (ln x − 1/x < ψ(x) < ln x − 1/(2x)): entries with
    # d · slope[c] below MISSES_NEGLIGIBLE are not evaluated (see there).
    # A row whose entries are all skipped (d times the flattest slope below the bound: a
    # large fiber) and that has no entry of rest < 1 is p = 0 without its log-gamma.
    # Entries of rest < 1 are rest / C(J, d) (joins._few_holders_missed).
    lg_top, slope = np.empty(C), np.empty(C)
    below = math.log(J + 1.0) - 1.0 / (J + 1.0)
    flattest = -np.inf
    lo = np.inf
    for c in range(C):
        lg_top[c] = math.lgamma(top[c])
        slope[c] = math.log(top[c]) - 0.5 / top[c] - below
        flattest = max(flattest, slope[c])
        lo = min(lo, top[c])
    lg_J = math.lgamma(J + 1.0)
    p = np.empty(C)
    for i in range(D):
        if d[i] == 0.0:                            # misses every key: nothing kept
            continue
        if d[i] * flattest < MISSES_NEGLIGIBLE and lo - d[i] >= 1.0:
            p[:] = 0.0
        else:
            row = math.lgamma(J - d[i] + 1.0) - lg_J
            few = math.exp(math.lgamma(d[i] + 1.0) + row) if lo - d[i] < 1.0 else 0.0
            for c in range(C):
                rest = top[c] - d[i]
                if rest >= 1.0:
                    p[c] = math.exp(lg_top[c] - log_gamma(rest) + row) \
                        if d[i] * slope[c] >= MISSES_NEGLIGIBLE else 0.0
                else:
                    p[c] = rest * few if rest > 0.0 else 0.0
        _add_row(weights[i], p, counts, ones, by_key, per_fiber, i)


@njit(cache=True, nogil=True)
def _ascending(d):
    """``np.argsort(d)``; without sorting when ``d`` is strictly increasing (a level's
    distinct sizes times a scale: the order is then the only one)."""
    for i in range(1, d.shape[0]):
        if not d[i - 1] < d[i]:
            return np.argsort(d)
    return np.arange(d.shape[0])


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _add_row(w, p, counts, ones, by_key, per_fiber, i):
    """Adds the kept keys ``1 − p`` of fiber size ``i`` to ``by_key`` (times ``w``) and
    their sum (times ``counts``) to ``per_fiber[i]``; summed in any order (vectorized)."""
    s = 0.0
    for c in range(p.shape[0]):
        k = 1.0 - p[c]
        by_key[c] += w * k
        s += k if ones else counts[c] * k
    per_fiber[i] = s


@njit(cache=True, nogil=True)
def held_keys(weights, d, h, hscale, inv, first, counts, index, J, hist, per_fiber):
    """Fills ``hist`` and ``per_fiber`` (:func:`~fuseflow.explore.joins.held`) for the key
    frequencies ``q = min((h · hscale) · inv, 1)`` (``h · hscale`` the histogram, as a
    scan's is its measured counts times a factor; ``hscale`` 1: ``h`` itself) and returns
    the keys, ``Σ hist``. ``first``: the
    entry of ``h`` each distinct frequency is taken from (empty: every entry, no grouping),
    ``counts`` their multiplicities (empty: 1 each), ``index`` each key's group (empty: the
    keys are the groups)."""
    C = first.shape[0] if first.shape[0] else h.shape[0]
    q = np.empty(C)
    for c in range(C):
        q[c] = min((h[first[c] if first.shape[0] else c] * hscale) * inv, 1.0)
    by_key = hist if index.shape[0] == 0 else np.empty(C)
    kept_sums(weights, d, q, counts, J, by_key, per_fiber)
    if index.shape[0] == 0:
        return by_key.sum()
    keys = 0.0
    for k in range(index.shape[0]):
        hist[k] = by_key[index[k]]
        keys += hist[k]
    return keys


@njit(cache=True, nogil=True)
def held_mean(nonempty, draws, h, hscale, inv, first, counts, index, J):
    """:func:`held` of ``nonempty`` fibers of ``draws`` items each, the histogram ``h ·
    hscale`` (as :func:`held_keys`) and its groups given (``first`` empty: none), in one
    call: ``(hist, keys)``."""
    weights, d, per_fiber = np.empty(1), np.empty(1), np.empty(1)
    weights[0], d[0] = nonempty, draws
    hist = np.empty(index.shape[0] if index.shape[0] else h.shape[0])
    keys = held_keys(weights, d, h, hscale, inv, first, counts, index, J, hist, per_fiber)
    return hist, keys


def held(weights: np.ndarray, draws: np.ndarray, h: np.ndarray, inv: float,
         population: float, groups: tuple | None) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`~fuseflow.explore.joins.held` of ``q = min(h · inv, 1)`` in one compiled call,
    and the expected keys (``Σ hist``). ``groups``: ``(index, counts, first)`` of keys known
    to share ``q``, always used; without them keys are grouped by ``np.unique`` where
    ``joins.held`` does."""
    J = float(population)
    per_fiber = np.empty(len(draws))
    if groups is not None:
        index, counts, first = groups
    elif h.size * len(draws) > UNIQUE_ABOVE:
        q = np.minimum(h * inv, 1.0)
        unique, index, counts = np.unique(q, return_inverse=True, return_counts=True)
        if 2 * len(unique) >= q.size:
            index = counts = first = _NONE
        else:
            h, inv, first = unique, 1.0, _NONE
    else:
        index = counts = first = _NONE
    hist = np.empty(len(index) if len(index) else len(h))
    keys = held_keys(weights, draws, h, 1.0, inv, first, counts, index, J, hist, per_fiber)
    return hist, per_fiber, keys


@njit(cache=True, nogil=True)
def joined_counts(hists, uniform, n_fibers, union, hist):
    """``(items, merged)`` of :func:`~fuseflow.explore.rules._joined_hist`, its histogram
    into ``hist`` (one entry per coordinate): operand ``i`` holds coordinate ``c`` with probability
    ``min(hists[i][c] / n_fibers, 1)``, or ``uniform[i]`` where ``hists[i]`` is empty. Two
    operands sum their probabilities as ``_joined_hist`` does (``merged`` from the sums of
    ``x1``, ``x2`` and ``x1·x2``), more sum ``1 − Π (1 − x_i)``."""
    inv = 1.0 / n_fibers
    k = len(hists)
    x = np.empty(k)
    s1 = s2 = sh = total = anyof = 0.0
    for c in range(hist.shape[0]):
        for i in range(k):
            h = hists[i]
            x[i] = min(h[c] * inv, 1.0) if h.shape[0] else uniform[i]
        if k == 2:
            hit = x[0] * x[1]
            s1 += x[0]
            s2 += x[1]
            sh += hit
            hist[c] = ((x[0] + x[1] - hit) if union else hit) * n_fibers
        else:
            hit, miss = x[0], 1.0 - x[0]
            for i in range(1, k):
                hit *= x[i]
                miss *= 1.0 - x[i]
            hist[c] = n_fibers * ((1.0 - miss) if union else hit)
            total += hist[c]
            anyof += 1.0 - miss
    if k == 2:
        anyof = s1 + s2 - sh
        return n_fibers * (anyof if union else sh), n_fibers * anyof
    return total, n_fibers * anyof


_EMPTY = np.zeros(0)


def joined_hist(arrays, n_fibers: float, union: bool):
    """:func:`~fuseflow.explore.rules._joined_hist` in one compiled call: ``(hist, items,
    merged)``, or None when the operands' lengths differ."""
    hists, length = [], None
    for h, _, _ in arrays:                         # the common case: histograms throughout
        if h is None or (length is not None and len(h) != length):
            break
        length = len(h)
        hists.append(h)
    else:
        return join_all(tuple(hists), n_fibers, union)
    inv = 1.0 / n_fibers
    hists, uniform, length = [], [], None
    for h, data, size in arrays:
        if h is None:
            m = max(int(round(size)), 1)
            hists.append(_EMPTY)
            uniform.append(min(data / m * inv, 1.0))
        else:
            m = len(h)
            hists.append(h)
            uniform.append(0.0)
        if length is not None and m != length:
            return None
        length = m
    hist = np.empty(length)
    return (hist, *joined_counts(tuple(hists), np.array(uniform), n_fibers, union, hist))


@njit(cache=True, nogil=True)
def join_all(hists, n_fibers, union):
    """:func:`joined_counts` of operands that all have histograms, of one length (a
    tuple), into a new histogram: ``(hist, items, merged)``."""
    hist = np.empty(hists[0].shape[0])
    items, merged = joined_counts(hists, np.zeros(len(hists)), n_fibers, union, hist)
    return hist, items, merged


@njit(cache=True, nogil=True)
def size_weights(base, table, unique, scale, items, nonempty, weights, sizes):
    """The fiber sizes of :func:`~fuseflow.explore.rules._fiber_sizes` of at most
    ``SIZE_BINS`` sizes ``unique · scale``, into ``sizes``, and their ``weights``: ``base``
    summed per size (``base[b]`` to size ``table[b]``; ``table`` empty: ``base`` is per
    size) and scaled to ``nonempty`` fibers, 0 where a size is not positive. Returns False
    (nothing filled) when the weighted sizes do not add up to ``items`` within 1%."""
    G = unique.shape[0]
    grouped = np.zeros(G)
    if table.shape[0]:
        for b in range(table.shape[0]):
            grouped[table[b]] += base[b]
    else:
        grouped[:] = base
    total = 0.0
    for g in range(G):
        total += grouped[g] * unique[g]
    total *= scale
    if not abs(total - items) <= 0.01 * items:
        return False
    weight = 0.0
    for g in range(G):
        sizes[g] = unique[g] * scale
        weights[g] = grouped[g] if sizes[g] > 0.0 else 0.0
        weight += weights[g]
    share = nonempty / weight if weight else 0.0
    for g in range(G):
        weights[g] *= share
    return True


@njit(cache=True, nogil=True)
def key_counts(per_fiber, by_base, table, sizes, extended):
    """The groups of :func:`~fuseflow.explore.rules._key_sizes`: fills ``sizes`` with
    ``per_fiber`` and a last size 0 (no fiber merged) and ``extended`` with ``table``
    (empty: none; ``extended`` then too) and that group, and returns ``Σ weights · sizes``,
    the weights ``by_base`` summed per group through ``extended`` (``by_base`` per group
    when ``table`` is empty)."""
    n = per_fiber.shape[0]
    sizes[:n] = per_fiber
    sizes[n] = 0.0
    total = 0.0
    if table.shape[0] == 0:
        for g in range(n + 1):
            total += by_base[g] * sizes[g]
        return total
    extended[:-1] = table
    extended[-1] = n
    counts = np.zeros(n + 1)
    for b in range(extended.shape[0]):
        counts[extended[b]] += by_base[b]
    for g in range(n + 1):
        total += counts[g] * sizes[g]
    return total


@njit(cache=True, nogil=True)
def node_sums(weights, base, groups):
    """``rules._node_sums`` in one call: ``(bincount(base, weights, minlength=groups),
    keyed, bincount(keyed, weights, minlength=groups + 1))``, ``keyed = where(weights > 0,
    base, groups)`` (the same lengths as numpy's, the weights added in the same order)."""
    n = base.shape[0]
    top, kept = groups, groups + 1
    for i in range(n):
        top = max(top, base[i] + 1)
        if weights[i] > 0.0:
            kept = max(kept, base[i] + 1)
    grouped = np.zeros(top)
    keyed = np.empty(n, dtype=np.intp)
    by_key = np.zeros(kept)
    for i in range(n):
        grouped[base[i]] += weights[i]
        keyed[i] = base[i] if weights[i] > 0.0 else groups
        by_key[keyed[i]] += weights[i]
    return grouped, keyed, by_key


@njit(cache=True, nogil=True)
def accumulate_key(base, table, unique, scale, items, nonempty, h, hscale, inv, first, counts,
                   index, J, by_base, empty_below, extended, need_empty):
    """An accumulator's first key level in one call (``rules.accumulate_key`` with its fiber
    sizes in at most ``SIZE_BINS`` groups): :func:`size_weights`, :func:`held_keys` and
    :func:`key_counts` in turn. Returns ``(found, keys, total, Σ weights ·
    empty_below^size, out)``, ``out`` one new array: the key histogram (one entry per key
    group of ``index``, or of ``h`` when ``index`` is empty), then the key sizes per size
    group and a last 0 (``len(unique) + 1`` entries; one array boxed instead of two, about
    half a microsecond each). ``extended`` (the caller's, empty unless the groups are
    mapped, then one entry more than ``table``) is filled with ``table`` and that group.
    ``found`` False: the sizes do not add up (nothing else computed, ``out`` empty). The
    sum over ``empty_below^size`` is taken only if ``need_empty`` (else 0)."""
    G = unique.shape[0]
    weights, sizes, per_fiber = np.empty(G), np.empty(G), np.empty(G)
    if not size_weights(base, table, unique, scale, items, nonempty, weights, sizes):
        return False, 0.0, 0.0, 0.0, np.empty(0)
    n = index.shape[0] if index.shape[0] else h.shape[0]
    out = np.empty(n + G + 1)
    keys = held_keys(weights, sizes, h, hscale, inv, first, counts, index, J, out[:n],
                     per_fiber)
    total = key_counts(per_fiber, by_base, table, out[n:], extended)
    empty = 0.0
    if need_empty:                          # (rules.accumulate_key reads it or not)
        for g in range(G):
            empty += weights[g] * empty_below ** sizes[g]
    return True, keys, total, empty, out


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def written_sizes(weights, unique, base, table, scale, per, items, empty, by_parent,
                  empty_by_parent, index):
    """The fiber sizes of a written level of an accumulator's keys
    (:func:`~fuseflow.explore.rules.written_level`): under parent coordinate ``p`` the size
    of group ``table[base[p]]`` (``base[p]`` when ``table`` is empty; ``index`` filled with
    the groups otherwise) of ``unique``, scaled so that the ``per`` fibers under each
    parent add up to ``items``, into ``by_parent``, and the empty fibers spread into
    ``empty_by_parent``. Returns the scale factor, or 0 (nothing filled) when the sizes do
    not match ``items`` (``weights · sizes · scale`` off by more than 1%) or are all 0.
    Sums in any order (vectorized)."""
    P = base.shape[0]
    mapped = table.shape[0] > 0
    each_sum = weighted_sum = 0.0
    for p in range(P):
        g = table[base[p]] if mapped else base[p]
        if mapped:
            index[p] = g
        each_sum += unique[g]
        weighted_sum += weights[p] * unique[g]
    total = each_sum * per
    if not total or abs(weighted_sum * scale - items) > 0.01 * items:
        return 0.0
    factor = items / total
    zero = 0
    for p in range(P):
        by_parent[p] = unique[index[p] if mapped else base[p]] * factor
        if by_parent[p] <= 0.0:
            zero += 1
    nonzero = P - zero
    rest = max(empty - per * (P - nonzero), 0.0)
    share = min(rest / (per * nonzero), 1.0) if nonzero else 0.0
    for p in range(P):
        empty_by_parent[p] = 1.0 if by_parent[p] <= 0.0 else share
    return factor


@njit(cache=True, nogil=True)
def written_arrays(weights, unique, base, table, scale, per, items, empty, mapped):
    """:func:`written_sizes` into new arrays: ``(factor, by_parent, empty_by_parent,
    index, unique · factor)`` (``index`` empty unless ``mapped``; all empty when
    ``factor`` is 0)."""
    P = base.shape[0]
    by_parent, empty_by_parent = np.empty(P), np.empty(P)
    index = np.empty(P if mapped else 0, dtype=np.intp)
    factor = written_sizes(weights, unique, base, table, scale, per, items, empty, by_parent,
                           empty_by_parent, index)
    if not factor:
        return factor, np.empty(0), np.empty(0), np.empty(0, dtype=np.intp), np.empty(0)
    return factor, by_parent, empty_by_parent, index, unique * factor

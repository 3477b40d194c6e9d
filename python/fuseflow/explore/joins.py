"""Coordinate-overlap estimates for intersecters, unioners and sparse accumulators.

The model treats the coordinates of a fiber of ``a`` coordinates in a level of ``n`` as a
uniformly random ``a``-subset, independent of the other operands' fibers (the assumption of
density models such as Sparseloop's). Then two fibers of sizes ``a`` and ``b`` share
``a·b/n`` coordinates on average and are disjoint with the hypergeometric probability
``C(n-a, b) / C(n, b)``; a dense operand (``a = n``) makes both exact.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln


def disjoint(a: float, b: float, n: float) -> float:
    """Probability that random subsets of sizes ``a`` and ``b`` of ``n`` coordinates are
    disjoint (``C(n-a, b) / C(n, b)`` continued to real sizes)."""
    if a <= 0.0 or b <= 0.0:
        return 1.0
    if a + b > n:
        return 0.0
    return math.exp(math.lgamma(n - a + 1.0) + math.lgamma(n - b + 1.0)
                    - math.lgamma(n + 1.0) - math.lgamma(n - a - b + 1.0))


def fold(operands: list[tuple[float, float]], n: float, union: bool) -> tuple[float, float]:
    """Joins fibers, each operand ``(p, a)``: nonempty with probability ``p``, then of mean
    size ``a``. Returns ``(p, a)`` of the intersection (``union=False``) or union."""
    p, a = operands[0]
    for q, b in operands[1:]:
        if union:
            expected = p * a + q * b - p * q * a * b / n
            p = 1.0 - (1.0 - p) * (1.0 - q)
            a = expected / p if p else 0.0
        else:
            hit = 1.0 - disjoint(a, b, n)
            common = a * b / n
            p = p * q * hit
            a = common / hit if hit else 0.0
    return p, a


def distinct(draws: float, per_draw: float, space: float) -> float:
    """Expected distinct keys when ``draws`` random sets of ``per_draw`` keys each are taken
    from ``space`` keys: ``space · (1 - (1 - per_draw/space)^draws)``."""
    if space <= 0.0 or per_draw <= 0.0 or draws <= 0.0:
        return 0.0
    if per_draw >= space:
        return space
    return space * -math.expm1(draws * math.log1p(-per_draw / space))


def misses(draws: np.ndarray, q: np.ndarray, population: float) -> np.ndarray:
    """``[i, c]``: probability that a fiber of ``draws[i]`` distinct coordinates, out of the
    ``population`` coordinates of its level, misses key ``c``, which ``n_c = q[c] ·
    population`` of them hold (``0 <= q <= 1``): the hypergeometric ``C(J − n_c, d) / C(J,
    d)`` (the coordinates of a fiber are drawn without replacement; the binomial
    ``(1 − q)^d`` is its limit for ``J ≫ d`` and undercounts the keys of fibers that cover
    much of their level); for ``n_c`` between ``J − d`` and ``J − d + 1``, where it falls
    to 0, the mixture of the two whole counts (:func:`_few_holders_missed`)."""
    d = np.asarray(draws, dtype=float)
    J = float(population)
    most = float(d.max()) if d.size else 0.0
    if J < max(most, 1.0):
        if J < 1.0 or most > J * (1.0 + SIZE_ROUNDING):  # population unknown: binomial
            return np.exp(d[:, None] * np.log1p(-np.minimum(q, 1.0 - 1e-12)))
        d = np.minimum(d, J)
    top = (J + 1.0) - q * J                               # J − n_c + 1
    empty = d.size - np.count_nonzero(d)                  # size bins of no fibers
    if empty * top.size <= EMPTY_ABOVE:
        return _misses_drawn(d, top, J)
    out = np.ones((d.size, top.size))                    # no draws miss every key
    if empty < d.size:
        drawn = d != 0.0
        out[drawn] = _misses_drawn(d[drawn], top, J)
    return out


def _misses_drawn(d: np.ndarray, top: np.ndarray, J: float) -> np.ndarray:
    if d.size * top.size <= SERIES_ABOVE:
        return misses_gamma(d, top, J)
    return misses_series(d, top, J)


def misses_gamma(d: np.ndarray, top: np.ndarray, J: float) -> np.ndarray:
    """:func:`misses` of the fiber sizes ``d`` for ``top = J − n_c + 1`` (``J >= max(d,
    1)``), each log-gamma by ``scipy.special.gammaln``."""
    rest = top - d[:, None]
    log = (gammaln(top) - gammaln(np.maximum(rest, 1.0))) \
        + (gammaln(J - d + 1.0) - math.lgamma(J + 1.0))[:, None]
    out = np.exp(log)
    return _few_holders_missed(out, rest, d, J)


def _few_holders_missed(out: np.ndarray, rest: np.ndarray, d, J: float) -> np.ndarray:
    """``out`` with the entries of ``rest = J − n_c + 1 − d < 1`` set: a fiber of ``d`` of
    the ``J`` coordinates misses a key held by more than ``J − d`` of them never, by exactly
    ``J − d`` with probability ``1 / C(J, d)``. A fractional ``n_c`` (a mean) between the
    two is their mixture with that mean: ``(1 − (n_c − (J − d))) / C(J, d) = rest / C(J,
    d)``, 0 from ``rest <= 0`` (``C(J − n, d)`` itself, continued past ``n = J − d``, would
    say 0 for every ``n_c > J − d``: a key held by a tenth of a coordinate on average would
    be in every fiber that covers its level)."""
    few = rest < 1.0
    if few.any():
        d = np.asarray(d, dtype=float)
        inv_binom = np.exp(gammaln(d + 1.0) + gammaln(J - d + 1.0) - math.lgamma(J + 1.0))
        share = np.maximum(rest, 0.0) * (inv_binom[:, None] if inv_binom.ndim else inv_binom)
        out[few] = share[few]
    return out


def misses_series(d: np.ndarray, top: np.ndarray, J: float) -> np.ndarray:
    """:func:`misses_gamma` with the log-gamma of the matrix entries ``rest = top − d`` by
    Stirling's series where ``rest >= SERIES_FROM`` (``gammaln`` below): ``ln Γ(x) = (x −
    ½) ln x − x + ½ ln 2π + 1/(12x) − 1/(360x³)``, truncated below ``1/(1260x⁵) < 8e-14``,
    the rounding of a log-gamma of a few hundred. Its ``− x`` term and the vectors over
    ``d`` and over ``top`` are added once per row and column: about a dozen array passes
    an entry instead of a ``gammaln`` (13-21 ns)."""
    rest = top - d[:, None]
    least = float(_min(rest, axis=None))
    x = np.maximum(rest, SERIES_FROM) if least < SERIES_FROM else rest
    r = np.reciprocal(x)
    corr = r * r
    corr *= 1.0 / 360.0
    corr -= 1.0 / 12.0
    corr *= r                                   # −(1/(12x) − 1/(360x³))
    log = np.log(x, out=r)
    log *= x - 0.5
    np.subtract(corr, log, out=log)             # −ln Γ(rest) − rest + ½ ln 2π
    if least < SERIES_FROM:
        small = np.flatnonzero(rest < SERIES_FROM)
        few = rest.flat[small]
        log.flat[small] = (_HALF_LOG_2PI - few) - gammaln(np.maximum(few, 1.0))
    log += (gammaln(top) + top)
    log += (gammaln(J - d + 1.0) - math.lgamma(J + 1.0) - d - _HALF_LOG_2PI)[:, None]
    out = np.exp(log, out=log)
    if least < 1.0:
        _few_holders_missed(out, rest, d, J)
    return out


SIZE_ROUNDING = 1e-9
"""Relative amount by which :func:`misses` takes fiber sizes above the population as the
population (a fiber holds at most every coordinate of its level): sizes scaled by a ratio
of two sums of the same terms (an accumulator's keys per fiber over their total) exceed it
by rounding, and the binomial limit for larger sizes would be a jump of up to 1e-3 in the
keys."""

SERIES_FROM = 100.0
"""Arguments from which :func:`misses_series` takes Stirling's series for ``ln Γ``."""

SERIES_ABOVE = 1024
"""Matrix entries beyond which :func:`misses` takes :func:`misses_series` (below, its few
extra array calls cost more than they save)."""

EMPTY_ABOVE = 512
"""Entries of rows of fiber size 0 (empty size bins, 44 of DBLP's 64) beyond which
:func:`misses` sets them to 1 instead of evaluating them."""

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_min = np.minimum.reduce


def held(weights: np.ndarray, draws: np.ndarray, q: np.ndarray, population: float,
         groups: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per key ``c``: the expected fibers holding it, ``Σ_i weights[i] (1 − misses[i, c])``
    over fibers of ``draws[i]`` coordinates; and per fiber size ``i`` the expected keys of
    one such fiber, ``Σ_c (1 − misses[i, c])``. When the matrix would be large, keys sharing
    ``q`` (measured counts take few values) are evaluated once. ``groups``: ``(index,
    counts, first)`` of keys known to share ``q`` (:func:`~fuseflow.explore.stats.coord_groups`
    of the counts ``q`` is scaled from), used instead of grouping ``q`` here when they halve
    the keys."""
    if groups is not None and 2 * len(groups[2]) < q.size:
        index, counts, first = groups
        if len(draws) == 1:
            kept = 1.0 - _misses_one(float(draws[0]), q[first], float(population))
            return (kept * float(weights[0]))[index], np.array([float(kept @ counts)])
        kept = 1.0 - misses(draws, q[first], population)
        return (weights @ kept)[index], kept @ counts
    if q.size * len(draws) > UNIQUE_ABOVE:
        unique, index, counts = np.unique(q, return_inverse=True, return_counts=True)
        if 2 * len(unique) < q.size:
            kept = 1.0 - misses(draws, unique, population)
            return (weights @ kept)[index], kept @ counts
    if len(draws) == 1:
        kept = 1.0 - _misses_one(float(draws[0]), q, float(population))
        return kept * float(weights[0]), np.array([float(_sum(kept))])
    kept = 1.0 - misses(draws, q, population)
    return weights @ kept, _sum(kept, axis=1)


def _misses_one(d: float, q: np.ndarray, J: float) -> np.ndarray:
    """:func:`misses` of one fiber size ``d`` (a vector over the keys; fewer array calls)."""
    if J < max(d, 1.0):
        if J < 1.0 or d > J * (1.0 + SIZE_ROUNDING):
            return np.exp(d * np.log1p(-np.minimum(q, 1.0 - 1e-12)))
        d = J
    top = (J + 1.0) - q * J
    rest = top - d
    out = np.exp(gammaln(top) - gammaln(np.maximum(rest, 1.0))
                 + (math.lgamma(J - d + 1.0) - math.lgamma(J + 1.0)))
    return _few_holders_missed(out, rest, d, J)


_sum = np.add.reduce

UNIQUE_ABOVE = 2048
"""Matrix entries (fiber sizes × keys) beyond which :func:`held` evaluates each distinct
``q`` once (when that halves the keys)."""

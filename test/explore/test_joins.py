"""The accumulator's hypergeometric misses (``joins.misses``) and the node-vector work kept
per accumulator (``rules.NodeMemo``): faster paths against the direct computation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.explore import joins, rules

EPS = np.finfo(float).eps


def _log_gamma_rounding(J: float) -> float:
    """Relative rounding the two paths may differ by: both add log-gammas as large as
    ``ln Γ(J + 1)`` (about 155,000 at J = 17,716), each rounded to its last bit."""
    return 8.0 * EPS * max(math.lgamma(J + 1.0), 1.0)


def _top(q: np.ndarray, J: float) -> np.ndarray:
    return (J + 1.0) - q * J


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([1.0, 2.0, 5.0, 16.0, 50.0, 300.0, 2708.0, 17716.0]),
       st.integers(1, 40), st.integers(1, 30), st.booleans(), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_series_misses_equal_gamma_misses(J, rows, keys, whole_draws, whole_counts, seed):
    """Stirling's series gives the misses that ``gammaln`` gives, to the rounding of the
    log-gammas both add, on integral and fractional fiber sizes and key counts, empty
    fibers (d = 0), keys every coordinate holds (q = 1) or none (q = 0), and fibers that
    cannot miss a key (``rest < 1``: 0 on both paths); both sides of ``SERIES_FROM``."""
    rng = np.random.default_rng(seed)
    d = rng.integers(0, int(J) + 1, rows).astype(float)
    if not whole_draws:
        d = np.minimum(d + rng.random(rows) * (d > 0), J)
    d[0] = 0.0
    q = rng.random(keys)
    if whole_counts:
        q = np.round(q * J) / J
    q[0], q[-1] = 0.0, 1.0
    top = _top(q, J)
    series, gamma = joins.misses_series(d, top, J), joins.misses_gamma(d, top, J)
    assert np.array_equal(series == 0.0, gamma == 0.0)
    np.testing.assert_allclose(series, gamma, rtol=_log_gamma_rounding(J), atol=1e-300)


def test_series_misses_are_exact_to_rounding():
    """Against 40-digit log-gammas (mpmath), including arguments just above and below
    ``SERIES_FROM`` and populations of the published graphs."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for J in (60.0, 2708.0, 17716.0):
        q = np.array([0.0, 0.3, 0.5 + 1 / 3, 1.0 - 45.5 / J])
        d = np.array([1.0, 7.0, 15.5, 20.0, 44.0])
        top = _top(q, J)
        got = joins.misses_series(d, top, J)
        for i, di in enumerate(d):
            for c, tc in enumerate(top):
                if tc - di < 1.0:
                    assert got[i, c] == 0.0
                    continue
                exact = float(mpmath.exp(mpmath.loggamma(tc) - mpmath.loggamma(tc - di)
                                         + mpmath.loggamma(J - di + 1)
                                         - mpmath.loggamma(J + 1)))
                assert got[i, c] == pytest.approx(exact, rel=_log_gamma_rounding(J))


def test_misses_takes_the_series_for_large_matrices_and_keeps_empty_fibers_exact():
    J = 17716.0
    d = np.concatenate((np.zeros(40), np.arange(1.0, 13.0), [13.43, 15.77, 20.55, 57.99]))
    q = np.random.default_rng(1).random(423) * 0.7
    assert d.size * q.size > joins.SERIES_ABOVE
    got = joins.misses(d, q, J)
    assert np.all(got[:40] == 1.0)
    np.testing.assert_allclose(got, joins.misses_gamma(d, _top(q, J), J),
                               rtol=_log_gamma_rounding(J))
    # Below SERIES_ABOVE: gammaln, empty rows too while they are few (EMPTY_ABOVE).
    small = joins.misses(d[38:46], q[:8], J)
    assert np.array_equal(small, joins.misses_gamma(d[38:46], _top(q[:8], J), J))


@pytest.mark.parametrize("J", [0.0, 1.0, 10.0])
def test_misses_without_a_population_for_the_draws_are_binomial(J):
    """Fibers larger than the population (or none known, J = 0, or J = 1 < d) miss a key
    of frequency q with ``(1 - q)^d``; J = 1 and d <= 1 stays hypergeometric."""
    q = np.array([0.0, 0.25, 1.0])
    d = np.array([0.0, 3.0, 11.0])
    np.testing.assert_allclose(joins.misses(d, q, J),
                               np.exp(d[:, None] * np.log1p(-np.minimum(q, 1.0 - 1e-12))))
    one = joins.misses(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 1.0)
    assert one.tolist() == [[1.0, 1.0], [1.0, 0.0]]     # the one coordinate holds the key


def _accumulator_inputs(seed: int, parents: int = 3000, population: int = 500):
    """``accumulate`` arguments of a reduced level whose fibers have measured sizes (more
    distinct sizes than ``SIZE_BINS``, some parents without fibers)."""
    rng = np.random.default_rng(seed)
    by_parent = rng.integers(0, 200, parents).astype(float)
    weights = np.where(rng.random(parents) < 0.9, 1.0, 0.0)
    groups = np.unique(by_parent, return_inverse=True)
    items = float(weights @ by_parent)
    nonempty = float(np.count_nonzero(weights * by_parent))
    hist = rng.integers(0, 60, population).astype(float)
    hist *= items / hist.sum()
    crds = ((hist, items, float(population)),)
    return (items, float(population), (weights, by_parent, 1.0, groups), float(parents),
            nonempty, items / nonempty, 0.0, crds)


def _same(a, b):
    if isinstance(a, rules.NodeMap):
        return np.array_equal(a.resolve(), b.resolve())
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def test_node_memo_gives_what_computing_gives_on_repeated_and_changed_inputs():
    """An accumulator's node-vector work kept in a ``NodeMemo`` (a compiled accumulator's)
    returns bit for bit what computing it returns: on its first call, on a repeat with the
    same arrays (reused: the same map of coordinates to key groups comes back), on equal
    arrays that are other objects, on other values and back; also for a second
    accumulator merging the first's key sizes (as in GCN's aggregations)."""
    first, second = rules.NodeMemo(), rules.NodeMemo()
    a = _accumulator_inputs(1)
    runs = [a, a, _accumulator_inputs(1), _accumulator_inputs(2), a]
    maps = []
    for args in runs:
        want = rules.accumulate(*args)
        got = rules.accumulate(*args, memo=first)
        assert _same(got, want)
        keys, _, hist, sizes = got
        maps.append(sizes[3][1].base)                   # coordinates -> fixed groups
        chained = (keys, 500.0, sizes, args[3], args[4], keys / args[4], 0.0,
                   ((hist, keys, 500.0),))
        assert _same(rules.accumulate(*chained, memo=second), rules.accumulate(*chained))
    assert maps[1] is maps[0]                           # reused
    assert maps[2] is not maps[1] and np.array_equal(maps[2], maps[1])
    assert first.grouped[0][0] is a[2][0]               # holds the last arrays only (its key)


def _close(a, b):
    if isinstance(a, rules.NodeMap):
        a = a.resolve()
    if isinstance(b, rules.NodeMap):
        b = b.resolve()
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return np.allclose(a, b, rtol=1e-12, atol=0.0)


def test_key_sizes_left_as_group_maps_give_what_sizes_per_coordinate_give():
    """An accumulator merging the first's key sizes, given as group maps (``NodeMap``,
    no sizes per coordinate), predicts what it predicts from those sizes built out per
    coordinate (to rounding: weights are summed per group, then per bin)."""
    args = _accumulator_inputs(3)
    keys, _, hist, sizes = rules.accumulate(*args)
    weights, each, scale, (unique, index) = sizes
    assert each is None and isinstance(index, rules.NodeMap)
    flat = (weights, unique[index.resolve()], scale, (unique, index.resolve()))
    chained = [(keys, 500.0, known, args[3], args[4], keys / args[4], 0.0,
                ((hist, keys, 500.0),)) for known in (sizes, flat)]
    got, want = (rules.accumulate(*c) for c in chained)
    assert _close(got[:3], want[:3])
    assert _close(got[3][3], want[3][3]) and got[3][2] == pytest.approx(want[3][2], rel=1e-12)
    written = [rules.written_level(1.0, keys, 0.0, 500, hist, known, len(weights))
               for known in (sizes, flat)]
    assert written[0].by_parent is not None
    np.testing.assert_allclose(written[0].by_parent, written[1].by_parent, rtol=1e-12)
    assert np.array_equal(written[0].size_groups[1], written[1].size_groups[1])


def test_misses_of_sizes_above_the_population_by_rounding_are_those_of_the_population():
    """A fiber size scaled by a ratio of two sums of the same terms (1 + 2e-16) may exceed
    its level's coordinates by rounding: it is taken as the level's size (hypergeometric:
    the 16 keys of a 16-wide level are all held), not as the binomial limit of larger
    sizes, on the numpy and the compiled paths."""
    from fuseflow.explore import native

    J = 16.0
    q = np.array([0.0, 0.25, 1.0 / 16.0, 1.0])
    above = np.nextafter(J, 20.0) * np.ones(1)
    exact = joins.misses(np.array([J]), q, J)
    np.testing.assert_allclose(exact, [[1.0, 0.0, 0.0, 0.0]], atol=1e-14)
    np.testing.assert_array_equal(joins.misses(above, q, J), exact)
    np.testing.assert_array_equal(joins._misses_one(float(above[0]), q, J), exact[0])
    by_key, per_fiber = np.empty(4), np.empty(1)
    native.kept_sums(np.ones(1), above, q, np.zeros(0, dtype=np.intp), J, by_key, per_fiber)
    np.testing.assert_allclose(by_key, 1.0 - exact[0], atol=1e-14)
    # Beyond rounding, sizes above the population are binomial as before.
    far = np.array([J * (1.0 + 1e-6)])
    np.testing.assert_allclose(joins.misses(far, q, J),
                               np.exp(far[:, None] * np.log1p(-np.minimum(q, 1.0 - 1e-12))))

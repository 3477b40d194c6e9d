"""The compiled (numba) array work of accumulators and joiners (``explore.native``) against
the numpy code it replaces in compiled kernels (``joins.held``, ``rules._joined_hist``,
``rules.accumulate`` without ``native``), on random inputs and edge cases: fibers of size 0,
keys every fiber holds (q = 1) or none (q = 0), fibers that cannot miss a key, populations
smaller than the fibers (binomial), huge key counts."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.explore import joins, native, rules
from fuseflow.explore.stats import LevelStats, coord_groups

EPS = np.finfo(float).eps


def _rounding(J: float) -> float:
    """What the numpy path's log-gammas round to, relative (``test_joins``)."""
    return 8.0 * EPS * max(math.lgamma(J + 1.0), 1.0)


def _draws(rng, rows: int, J: float, whole: bool) -> np.ndarray:
    d = rng.integers(0, max(int(J), 1) + 1, rows).astype(float)
    if not whole:
        d = np.minimum(d + rng.random(rows) * (d > 0), max(J, 1.0))
    d[0] = 0.0                                  # an empty size bin
    return d


def _frequencies(rng, keys: int, J: float, whole: bool) -> np.ndarray:
    q = rng.random(keys) ** 3                   # mostly rare keys, as in a graph
    if whole and J:
        q = np.round(q * J) / J
    q[0] = 0.0
    if keys > 1:
        q[-1] = 1.0
    return q


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([0.0, 1.0, 2.0, 7.0, 16.0, 300.0, 2708.0, 17716.0]),
       st.integers(1, 40), st.integers(1, 60), st.booleans(), st.booleans(), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_kept_sums_equal_the_miss_matrix(J, rows, keys, whole_draws, whole_counts, counted,
                                         seed):
    """Both sums over the matrix ``1 − joins.misses``: by the product (integral sizes), by
    log-gammas (fractional) and binomially (sizes above the population, J = 0 or 1)."""
    rng = np.random.default_rng(seed)
    d = _draws(rng, rows, J, whole_draws)
    if J and rows > 1 and rng.random() < 0.2:
        d[-1] = J + 3.0                         # larger than the population: binomial
    q = _frequencies(rng, keys, J, whole_counts)
    w = rng.random(rows) * 1e6
    counts = rng.integers(1, 10**12, keys) if counted else np.zeros(0, dtype=np.intp)
    kept = 1.0 - joins.misses(d, q, J)
    by_key, per_fiber = np.empty(keys), np.empty(rows)
    native.kept_sums(w, d, q, counts, J, by_key, per_fiber)
    c = counts.astype(float) if counted else np.ones(keys)
    tol = _rounding(J)
    np.testing.assert_allclose(by_key, w @ kept, rtol=tol, atol=tol * w.sum())
    np.testing.assert_allclose(per_fiber, kept @ c, rtol=tol, atol=tol * c.sum())
    assert per_fiber[0] == 0.0                  # an empty fiber holds no key


def test_kept_sums_of_fibers_that_cannot_miss_a_key_are_exact():
    """A key every coordinate holds (q = 1), or fibers at least one larger than the
    coordinates without the key (``rest <= 0``), is kept with probability 1 on both paths;
    integral sizes take the product, fractional ones the log-gammas."""
    J = 10.0
    q = np.array([1.0, 0.5, 0.0])
    for d in (np.array([0.0, 3.0, 6.0, 10.0]), np.array([0.0, 3.5, 6.5, 9.5])):
        by_key, per_fiber = np.empty(3), np.empty(4)
        native.kept_sums(np.ones(4), d, q, np.zeros(0, dtype=np.intp), J, by_key, per_fiber)
        kept = 1.0 - joins.misses(d, q, J)
        assert by_key[0] == (d > 0).sum() and by_key[2] == 0.0
        np.testing.assert_allclose(per_fiber, kept.sum(axis=1), rtol=1e-12, atol=1e-13)
        assert per_fiber[-1] == pytest.approx(2.0)  # 10 or 9.5 of 10 hold the q = .5 key


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.data())
def test_a_key_of_fewer_holders_than_a_whole_one_is_missed_as_their_mixture(J, data):
    """Between ``J − d`` and ``J − d + 1`` holders (a fractional mean ``n``), the misses of a
    fiber of ``d`` of the ``J`` coordinates are the mixture of the two whole counts with
    that mean, ``C(J − n, d) / C(J, d)`` at each (where the continued formula would say 0:
    every fiber covering its level would hold a key of a tenth of a holder), on both
    paths."""
    d = data.draw(st.integers(1, J))
    f = data.draw(st.floats(0.01, 0.99))
    low = J - d                                   # holders of the whole count below
    n = low + f
    q = np.array([n / J, 0.0, 1.0])
    expected = ((1.0 - f) * math.comb(J - low, d) + f * math.comb(J - low - 1, d)) \
        / math.comb(J, d)
    misses = joins.misses(np.array([float(d)]), q, float(J))[0]
    assert misses[0] == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert misses[1] == pytest.approx(1.0) and misses[2] == 0.0
    by_key, per_fiber = np.empty(3), np.empty(1)
    native.kept_sums(np.ones(1), np.array([float(d)]), q, np.zeros(0, dtype=np.intp),
                     float(J), by_key, per_fiber)
    assert by_key[0] == pytest.approx(1.0 - expected, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([16.0, 300.0, 1433.0, 2708.0]), st.integers(1, 40),
       st.integers(1, 30), st.booleans(), st.integers(0, 2**32 - 1))
def test_kept_sums_skip_negligible_misses_bit_for_bit(J, rows, keys, shuffled, seed):
    """The log-gamma path skips the entries whose bound on the log misses is below
    ``MISSES_NEGLIGIBLE``: the same sums, bit for bit, as evaluating every entry (the
    function run by Python with the cut at −inf), on fractional sizes in any order and keys
    from rare to held by most fibers (most entries negligible)."""
    rng = np.random.default_rng(seed)
    d = np.sort(rng.random(rows)) * J
    d[0] = 0.0
    if shuffled:
        rng.shuffle(d)
    q = np.sort(rng.random(keys))
    w = rng.random(rows) * 1e3
    counts = np.zeros(0, dtype=np.intp)
    negligible = native.MISSES_NEGLIGIBLE

    def sums(cut):
        native.MISSES_NEGLIGIBLE = cut
        by_key, per_fiber = np.empty(keys), np.empty(rows)
        native.kept_sums.py_func(w, d, q, counts, J, by_key, per_fiber)
        return by_key, per_fiber

    try:
        full, cut = sums(-np.inf), sums(negligible)
    finally:
        native.MISSES_NEGLIGIBLE = negligible
    for a, b in zip(full, cut):
        assert a.tobytes() == b.tobytes()
    compiled = np.empty(keys), np.empty(rows)
    native.kept_sums(w, d, q, counts, J, *compiled)
    for a, b in zip(cut, compiled):             # Python's lgamma against libm's
        np.testing.assert_allclose(a, b, rtol=_rounding(J), atol=_rounding(J) * a.max())


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([1.0, 16.0, 300.0, 1433.0, 17716.0]), st.floats(0.0, 1.0),
       st.floats(0.0, 1.0))
def test_log_misses_lie_below_their_slope_at_size_zero(J, q, size):
    """The bound behind ``MISSES_NEGLIGIBLE``: ``ln P_miss(d) ≤ d · (ln top − 1/(2 top) −
    ln(J + 1) + 1/(J + 1))`` for every size the log-gammas take (``top − d ≥ 1``)."""
    top = (J + 1.0) - q * J
    d = size * (top - 1.0)
    log_misses = (math.lgamma(top) - math.lgamma(top - d) + math.lgamma(J + 1.0 - d)
                  - math.lgamma(J + 1.0))
    slope = math.log(top) - 0.5 / top - (math.log(J + 1.0) - 1.0 / (J + 1.0))
    assert log_misses <= d * slope + 1e-9 * max(1.0, math.lgamma(J + 1.0))


@pytest.mark.parametrize("J", [16.0, 2708.0])
def test_kept_sums_product_equals_a_step_by_step_product(J):
    """The product of integral sizes skips the ``rest >= 1`` test while every key passes it
    and stops once every ``rest <= 0``: the same as multiplying every step with the test
    (``rest / C(J, step)`` below 1, ``joins._few_holders_missed``; the same products, the
    sums over keys to their rounding), on keys all far below the population, all held by
    every coordinate (q = 1) and mixed."""
    rng = np.random.default_rng(int(J))
    d = np.array([0.0, 1.0, 2.0, 5.0, 9.0, 16.0])
    for q in (rng.random(40) * 0.3, np.ones(40), np.append(rng.random(39), 1.0)):
        w = rng.random(len(d))
        top = (J + 1.0) - q * J
        want_key, want_fiber = np.zeros(len(q)), np.zeros(len(d))
        p, step, few = np.ones(len(q)), 0, 1.0
        for i in range(len(d)):                 # d ascending
            while step < d[i]:
                step += 1
                rest = top - step
                inv = 1.0 / (J + 1.0 - step)
                few *= step * inv               # 1 / C(J, step)
                p = np.where(rest >= 1.0, p * (rest * inv),
                             np.where(rest > 0.0, rest * few, 0.0))
            want_key += w[i] * (1.0 - p)
            want_fiber[i] = (1.0 - p).sum()
        by_key, per_fiber = np.empty(len(q)), np.empty(len(d))
        native.kept_sums(w, d, q, np.zeros(0, dtype=np.intp), J, by_key, per_fiber)
        np.testing.assert_allclose(by_key, want_key, rtol=1e-15, atol=0.0)
        np.testing.assert_allclose(per_fiber, want_fiber, rtol=1e-15, atol=0.0)
        if np.all(q == 1.0):                    # every nonempty fiber holds every key
            assert per_fiber[0] == 0.0 and (per_fiber[1:] == len(q)).all()


@pytest.mark.parametrize("grouping", ["coords", "unique", "plain"])
@pytest.mark.parametrize("seed", range(6))
def test_held_equals_joins_held(grouping, seed):
    """``native.held`` of a histogram and ``1 / items`` gives ``joins.held`` of ``q = min(h /
    items, 1)``, and the keys (``Σ hist``): with the measured groups of the histogram's
    counts, with keys grouped by value, and key by key."""
    rng = np.random.default_rng(seed)
    J = [2708.0, 16.0, 1433.0, 300.0, 7.0, 17716.0][seed]
    size = int(J) if grouping != "plain" else min(int(J), 20)
    coords = rng.integers(0, 30, size).astype(float)
    coords[: size // 4] = 0.0                   # keys no fiber holds
    items = float(coords.sum()) * 1.3
    h = coords * 1.3
    d = _draws(rng, 1 if seed == 3 else 37, 60.0 if J > 60 else J, seed % 2 == 0)
    w = rng.random(len(d)) * 100.0
    groups = coord_groups(LevelStats(1.0, items, 0.0, size, coords)) \
        if grouping == "coords" else None
    hist, per_fiber, keys = native.held(w, d, h, 1.0 / items, J, groups)
    want_hist, want_per_fiber = joins.held(w, d, np.minimum(h * (1.0 / items), 1.0), J,
                                           groups)
    tol = _rounding(J)
    np.testing.assert_allclose(hist, want_hist, rtol=tol, atol=tol * w.sum())
    np.testing.assert_allclose(per_fiber, want_per_fiber, rtol=tol, atol=tol * size)
    assert keys == pytest.approx(float(want_hist.sum()), rel=tol, abs=tol * w.sum() * size)


@pytest.mark.parametrize("union", [False, True])
@pytest.mark.parametrize("operands", [2, 3])
def test_joined_hist_equals_the_numpy_join(union, operands):
    """``native.joined_hist`` gives ``rules._joined_hist``'s histogram, items and merged
    items: operands with histograms (some probabilities clipped at 1) and without (spread
    uniformly); None when the lengths differ."""
    rng = np.random.default_rng(operands + 2 * union)
    n = 40.0
    arrays = [(rng.random(16) * 60.0, 300.0, 16.0) for _ in range(operands - 1)]
    arrays.append((None, 250.0, 16.0))
    for order in (arrays, arrays[::-1]):
        got, want = native.joined_hist(order, n, union), rules._joined_hist(order, n, union)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        assert got[1:] == pytest.approx(want[1:], rel=1e-12)
    uneven = arrays[:-1] + [(None, 250.0, 15.0)]
    assert native.joined_hist(uneven, n, union) is None
    assert rules._joined_hist(uneven, n, union) is None


@pytest.mark.parametrize("union", [False, True])
def test_joined_hist_of_two_histograms_equals_the_numpy_join(union):
    """Two operands with histograms (``native.joined_hist``'s path without the operand
    lists): ``rules._joined_hist``'s numbers, also for empty histograms; None when the
    lengths differ."""
    rng = np.random.default_rng(5 + union)
    n = 40.0
    for length in (16, 0):
        arrays = [(rng.random(length) * 60.0, 300.0, 16.0) for _ in range(2)]
        got, want = native.joined_hist(arrays, n, union), rules._joined_hist(arrays, n, union)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        assert got[1:] == pytest.approx(want[1:], rel=1e-12)
    uneven = [(rng.random(16), 300.0, 16.0), (rng.random(15), 300.0, 16.0)]
    assert native.joined_hist(uneven, n, union) is None
    assert rules._joined_hist(uneven, n, union) is None


def _inputs(seed: int, sizes: int, parents: int = 3000, population: int = 500):
    """``accumulate`` arguments over measured fiber sizes of ``sizes`` distinct values (some
    0; some parents without a weight) and a histogram with measured groups."""
    rng = np.random.default_rng(seed)
    by_parent = rng.integers(0, sizes, parents).astype(float)
    weights = np.where(rng.random(parents) < 0.9, 1.0, 0.0)
    items = float(weights @ by_parent)
    nonempty = float(np.count_nonzero(weights * by_parent))
    coords = rng.integers(0, 60, population).astype(float)
    coords[:7] = 0.0
    level = LevelStats(1.0, float(coords.sum()), 0.0, population, coords)
    hist = coords * (items / coords.sum())
    return (items, float(population), (weights, by_parent, 1.0,
                                       np.unique(by_parent, return_inverse=True)),
            float(parents), nonempty, items / nonempty, 0.25,
            ((hist, items, float(population), level),))


def _close(a, b, tol):
    if isinstance(a, rules.NodeMap):
        a = a.resolve()
    if isinstance(b, rules.NodeMap):
        b = b.resolve()
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    if isinstance(a, np.ndarray) and a.dtype.kind in "iu":
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=tol, atol=tol * np.max(np.abs(b), initial=1.0))


@pytest.mark.parametrize("sizes", [2, 40, 64, 200])
def test_native_accumulate_equals_numpy_accumulate(sizes):
    """``rules.accumulate`` with ``native`` (one compiled call up to ``SIZE_BINS`` sizes,
    the compiled helpers beyond) gives what numpy gives, on a first accumulator over
    measured sizes and a second merging its key sizes (a ``NodeMap``), repeated with the
    memo (node sums reused) and on other values."""
    memos = [rules.NodeMemo(), rules.NodeMemo()]
    tol = _rounding(500.0) * 500.0              # numpy's rounding, summed over 500 keys
    for seed in (1, 1, 2):
        args = _inputs(seed, sizes)
        want = rules.accumulate(*args)
        got = rules.accumulate(*args, memos[0], native)
        assert _close(got, want, tol)
        keys, _, hist, key_sizes = want
        chained = (keys, 500.0, key_sizes, args[3], args[4], keys / args[4], 0.0,
                   ((hist, keys, 500.0),))
        assert _close(rules.accumulate(*chained, memos[1], native),
                      rules.accumulate(*chained), tol)


def test_native_accumulate_of_sizes_that_do_not_add_up_takes_the_mean_fiber():
    """Measured sizes off the reduced items by more than 1%: both paths merge fibers of the
    mean size."""
    args = list(_inputs(4, 30))
    args[0] *= 1.5
    want = rules.accumulate(*args)
    assert want[3] is None
    assert _close(rules.accumulate(*args, rules.NodeMemo(), native), want,
                  _rounding(500.0) * 500.0)


@pytest.mark.parametrize("sizes", [2, 40, 200])
def test_native_written_level_equals_numpy(sizes):
    """A result level written from an accumulator's keys (``rules.written_level`` with
    ``native``): the same sizes per parent coordinate, empty fibers and groups as numpy,
    whether the key groups are an array or a ``NodeMap``, with empty fibers to spread and
    with sizes that do not add up (no sizes kept)."""
    args = _inputs(5, sizes)
    keys, _, hist, key_sizes = rules.accumulate(*args)
    parents = len(key_sizes[0])
    for items, empty in ((keys, 0.0), (keys, 400.0), (keys * 1.5, 0.0)):
        want = rules.written_level(3.0 * parents, items, empty, 500, hist, key_sizes, parents)
        got = rules.written_level(3.0 * parents, items, empty, 500, hist, key_sizes, parents,
                                  native)
        for name in ("fibers", "items", "empty", "size"):
            assert getattr(got, name) == getattr(want, name)
        if want.by_parent is None:
            assert got.by_parent is None and got.size_groups is None
            continue
        np.testing.assert_allclose(got.by_parent, want.by_parent, rtol=1e-12)
        np.testing.assert_array_equal(got.empty_by_parent, want.empty_by_parent)
        np.testing.assert_allclose(got.size_groups[0], want.size_groups[0], rtol=1e-12)
        np.testing.assert_array_equal(got.size_groups[1], want.size_groups[1])


@pytest.mark.parametrize("union", [False, True])
@pytest.mark.parametrize("operands", [3, 4])
def test_join_many_equals_join_counts(union, operands):
    """A compiled kernel's join of three or more operands (``rules.join_many``, the
    histograms, data and sizes as tuples) gives ``rules.join_counts``' numbers bit for bit:
    histograms throughout (one compiled call), one missing, lengths that differ, no
    fibers."""
    rng = np.random.default_rng(17 + 2 * operands + union)
    hists = [rng.random(16) * 60.0 for _ in range(operands)]
    datas = tuple(float(x) for x in rng.random(operands) * 300.0)
    sizes = (16.0,) * operands
    for n in (40.0, 0.0):
        for hs in (hists, [None] + hists[1:], hists[:-1] + [rng.random(15) * 60.0],
                   [None] * operands):
            ops = tuple((float(p), float(a)) for p, a in
                        zip(rng.random(operands), rng.random(operands) * 9.0))
            got = rules.join_many(ops, 16.0, union, n, tuple(hs), datas, sizes, native)
            want = rules.join_counts(ops, 16.0, union, n, tuple(zip(hs, datas, sizes)),
                                     native)
            assert got[:3] == want[:3]
            assert (got[3] is None and want[3] is None) or np.array_equal(got[3], want[3])


@pytest.mark.parametrize("sizes", [2, 40, 200])
@pytest.mark.parametrize("grouped", [True, False])
def test_accumulate_key_of_counts_and_factor_equals_the_histogram(sizes, grouped):
    """A compiled kernel's accumulator reads a scan's histogram as its measured counts and
    their factor (``rules.accumulate_key``): bit-identical to passing the histogram itself,
    in the one-call path (up to ``SIZE_BINS`` sizes), the general one (more sizes) and with
    sizes that do not add up; with the key groups known or not."""
    for seed, scale_items in ((3, 1.0), (3, 1.0), (4, 1.5)):
        args = list(_inputs(seed, sizes))
        args[0] *= scale_items
        _, data, size, level = args[7][0]
        counts, factor = level.coords, args[0] / level.items
        known = level if grouped else None
        head = args[:7]
        want = rules.accumulate_key(*head, counts * factor, 1.0, data, size, known,
                                    rules.NodeMemo(), native)
        got = rules.accumulate_key(*head, counts, factor, data, size, known,
                                   rules.NodeMemo(), native)
        assert _close(got, want, 0.0)
        numpy = rules.accumulate(*head, ((counts * factor, data, size, known),))
        assert _close(got, numpy, _rounding(500.0) * 500.0)


@pytest.mark.parametrize("seed", range(5))
def test_node_sums_equal_numpy_bincounts(seed):
    """``rules._node_sums`` with ``native`` (one compiled call) gives numpy's arrays exactly
    (the weights added in numpy's order), with weights 0 and negative, groups beyond
    ``groups`` and no nodes."""
    rng = np.random.default_rng(seed)
    for n, groups in ((0, 3), (1, 1), (2708, 37), (500, 64)):
        base = rng.integers(0, groups + (seed % 2) * 3, n).astype(np.intp)
        weights = rng.random(n) * 1e3
        weights[rng.random(n) < 0.2] = 0.0
        weights[rng.random(n) < 0.05] *= -1.0
        want = rules._node_sums(weights, base, groups, None)
        got = rules._node_sums(weights, base, groups, None, native)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("union", [False, True])
@pytest.mark.parametrize("operands", [2, 3, 4])
def test_joined_hist_of_histograms_throughout_is_one_call_of_the_general_one(union, operands):
    """Operands that all have histograms (``native.join_all``, one compiled call) give what
    the general path gives with every ``uniform`` unread, bit for bit; the numpy join to
    rounding."""
    rng = np.random.default_rng(operands + 10 * union)
    n = 40.0
    hists = [rng.random(16) * 60.0 for _ in range(operands)]
    got = native.joined_hist([(h, 300.0, 16.0) for h in hists], n, union)
    hist = np.empty(16)
    want = native.joined_counts(tuple(hists), np.zeros(operands), n, union, hist)
    assert np.array_equal(got[0], hist) and got[1:] == want
    numpy = rules._joined_hist([(h, 300.0, 16.0) for h in hists], n, union)
    np.testing.assert_allclose(got[0], numpy[0], rtol=1e-12)
    assert got[1:] == pytest.approx(numpy[1:], rel=1e-12)


@pytest.mark.parametrize("union", [False, True])
def test_join_two_equals_join_counts(union):
    """A compiled kernel's two-operand join (``rules.join_two``) gives ``rules.join_counts``'
    numbers bit for bit: both histograms (one compiled call), one or none (the density
    model), lengths that differ, no fibers."""
    rng = np.random.default_rng(11 + union)
    h = [rng.random(16) * 60.0, rng.random(16) * 60.0, rng.random(15) * 60.0]
    for n in (40.0, 0.0):
        for h1, h2 in ((h[0], h[1]), (h[0], None), (None, h[1]), (None, None), (h[0], h[2])):
            p1, a1, p2, a2 = rng.random(4) * (1.0, 9.0, 1.0, 9.0)
            args = (16.0, union, n)
            arrays = ((h1, 300.0, 16.0), (h2, 250.0, 16.0))
            got = rules.join_two(p1, a1, p2, a2, *args, *arrays[0], *arrays[1], native)
            want = rules.join_counts(((p1, a1), (p2, a2)), *args, arrays, native)
            assert got[:3] == want[:3]
            assert (got[3] is None and want[3] is None) or np.array_equal(got[3], want[3])


@pytest.mark.parametrize("grouped", [True, False])
def test_accumulate_key_of_the_mean_fiber_equals_the_general_path(grouped):
    """Without known fiber sizes (``sizes`` None: fibers of the mean size) the key level is
    one call of ``native.held_mean``: bit-identical to ``rules.accumulate``'s general path
    with ``native``, for a histogram given as counts and a factor, empty fibers below or
    not, and fibers of no items."""
    args = list(_inputs(6, 20))
    _, data, size, level = args[7][0]
    counts, factor = level.coords, args[0] / level.items
    known = level if grouped else None
    for empty_below, draws in ((0.25, args[5]), (0.0, args[5]), (0.0, 0.0)):
        head = (args[0], args[1], None, args[3], args[4], draws, empty_below)
        got = rules.accumulate_key(*head, counts, factor, data, size, known, None, native)
        want = rules._accumulate(*head, ((counts * factor, data, size, known),), None, native)
        assert want[3] is None and _close(got, want, 0.0)

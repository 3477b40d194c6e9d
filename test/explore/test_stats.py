"""Statistics of tensors: measured from data (hand-counted) and from the density model."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.explore import TensorStats
from fuseflow.explore.stats import THREADED_DOT, coord_groups, dot
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat

# The worked example of shared/reference/sam-streams.md: 3x4, row 1 empty.
B = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 4, 0, 5]], dtype=np.float32)


def test_measured_csr_counts_fibers_coordinates_and_empty_rows():
    stats = TensorStats.measure(B, TensorFormat.csr(B.shape))
    rows, cols = stats.levels
    assert (rows.fibers, rows.items, rows.empty, rows.size) == (1, 3, 0, 3)
    assert (cols.fibers, cols.items, cols.empty, cols.size) == (3, 5, 1, 4)
    assert cols.coords.tolist() == [1, 2, 0, 2]
    assert cols.by_parent.tolist() == [2, 0, 3]
    assert cols.empty_by_parent.tolist() == [0, 1, 0]
    assert (stats.values, stats.nonzeros) == (5, 5)


def test_measured_dense_format_keeps_zeros_as_values():
    stats = TensorStats.measure(B, TensorFormat.dense(B.shape))
    assert [lv.items for lv in stats.levels] == [3, 12]
    assert (stats.values, stats.nonzeros) == (12, 5)


def test_measured_coo_scans_deduplicated_runs():
    stats = TensorStats.measure(B, TensorFormat.coo(B.shape))
    rows, cols = stats.levels
    assert (rows.fibers, rows.items) == (1, 2)          # rows 0 and 2 hold entries
    assert (cols.fibers, cols.items, cols.empty) == (2, 5, 0)


def test_measured_dcsr_and_csc():
    dcsr = TensorStats.measure(B, TensorFormat.dcsr(B.shape))
    assert [(lv.fibers, lv.items, lv.empty) for lv in dcsr.levels] == [(1, 2, 0), (2, 5, 0)]
    csc = TensorStats.measure(B, TensorFormat.csc(B.shape))
    assert [(lv.fibers, lv.items, lv.empty) for lv in csc.levels] == [(1, 4, 0), (4, 5, 1)]


def test_density_model_of_csr_is_the_expectation():
    fmt = TensorFormat.csr((100, 50))
    stats = TensorStats.from_density(fmt, 0.1)
    rows, cols = stats.levels
    assert (rows.fibers, rows.items, rows.empty) == (1, 100, 0)
    assert cols.fibers == 100 and cols.items == pytest.approx(500)
    assert cols.empty == pytest.approx(100 * 0.9 ** 50)
    assert stats.nonzeros == pytest.approx(500)


def test_density_model_of_dcsr_stores_only_nonempty_rows():
    stats = TensorStats.from_density(TensorFormat.dcsr((100, 50)), 0.01)
    rows, cols = stats.levels
    nonempty = 100 * (1 - 0.99 ** 50)
    assert rows.items == pytest.approx(nonempty)
    assert cols.fibers == pytest.approx(nonempty) and cols.empty == pytest.approx(0)
    assert cols.items == pytest.approx(50)


def test_density_model_matches_measurement_on_average():
    rng = np.random.default_rng(0)
    fmt = TensorFormat.csr((200, 40))
    dense = (rng.random((200, 40)) < 0.05).astype(np.float32)
    measured = TensorStats.measure(FiberTree.from_dense(dense, fmt))
    model = TensorStats.from_density(fmt, measured.density)
    assert model.levels[1].items == pytest.approx(measured.levels[1].items)
    assert model.levels[1].empty == pytest.approx(measured.levels[1].empty, rel=0.3)


def test_bad_density_and_bad_data_name_the_problem():
    with pytest.raises(ValueError, match="density must be in"):
        TensorStats.from_density(TensorFormat.csr((2, 2)), 1.5)
    with pytest.raises(TypeError, match="torch tensor"):
        TensorStats.measure([[1.0]])


@st.composite
def _array_and_format(draw):
    """A random array and a format of dense and compressed levels in any level order,
    sometimes with a blocked (div/mod) dimension."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    kinds = [draw(st.sampled_from(("dense", "compressed"))) for _ in range(ndim)]
    levels = [LevelSpec(k, d) for k, d in zip(kinds, draw(st.permutations(range(ndim))))]
    if ndim == 2 and draw(st.booleans()):
        shape = (shape[0] * 2, shape[1])
        first = draw(st.sampled_from(("dense", "compressed")))
        levels = [LevelSpec(first, 0, "div", 2), LevelSpec(kinds[1], 1),
                  LevelSpec(kinds[0], 0, "mod", 2)]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    density = draw(st.sampled_from((0.0, 0.1, 0.4, 1.0)))
    array = ((rng.random(shape) < density) * rng.integers(1, 4, shape)).astype(np.float32)
    return array, TensorFormat(shape, tuple(levels))


def _exact(stats: TensorStats) -> str:
    """Every count and array of ``stats``, with dtypes (NaN equal to NaN)."""
    arrays = [(lv.coords, lv.by_parent, lv.empty_by_parent,
               lv.size_groups and lv.size_groups[0], lv.size_groups and lv.size_groups[1])
              for lv in stats.levels]
    return repr((stats, [[None if a is None else (a.dtype, a.tolist()) for a in level]
                         for level in arrays]))


@settings(max_examples=150, deadline=None)
@given(_array_and_format())
def test_measuring_a_conversion_counts_on_the_array_what_the_converted_tree_holds(case):
    """Statistics of dense data in another format are counted on its nonzero mask
    (``_measure_array``), without building the converted tree: the same numbers and arrays
    as counting on the tree."""
    array, fmt = case
    on_tree = TensorStats.measure(FiberTree.from_dense(array, fmt))
    assert _exact(TensorStats.measure(array, fmt)) == _exact(on_tree)
    sparse = FiberTree.from_dense(array, TensorFormat.coo(array.shape))
    assert _exact(TensorStats.measure(sparse, fmt)) == _exact(on_tree)


def test_measuring_a_coo_conversion_still_counts_on_the_tree():
    stats = TensorStats.measure(FiberTree.from_dense(B), TensorFormat.coo(B.shape))
    assert _exact(stats) == _exact(TensorStats.measure(B, TensorFormat.coo(B.shape)))
    assert (stats.levels[0].items, stats.levels[1].items) == (2, 5)


@pytest.mark.parametrize("n", [100, THREADED_DOT, THREADED_DOT + 1, 5 * THREADED_DOT])
def test_dot_products_are_exact_to_rounding_on_either_side_of_the_threaded_size(n):
    rng = np.random.default_rng(n)
    a, b = rng.random(n), rng.random(n)
    assert dot(a, b) == pytest.approx(math.fsum(a * b), rel=1e-13)
    if n > THREADED_DOT:        # summed in this thread, not split over BLAS threads
        assert dot(a, b) == float(np.add.reduce(a * b))
    else:
        assert dot(a, b) == float(a @ b)


def test_coordinate_groups_group_equal_counts_once_per_level():
    cols = TensorStats.measure(B, TensorFormat.csr(B.shape)).levels[1]   # coords [1, 2, 0, 2]
    index, counts, first = coord_groups(cols)
    assert index.tolist() == [1, 2, 0, 2]           # values 0, 1, 2 ascending
    assert counts.tolist() == [1, 1, 2]
    assert cols.coords[first].tolist() == [0, 1, 2]
    assert coord_groups(cols) is coord_groups(cols)  # kept on the level


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 400), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_held_keys_from_known_groups_equal_held_grouping_them_itself(keys, sizes, seed):
    """``held`` evaluating each group of equal ``q`` once (groups given, as a scan's
    histogram of measured counts passes them) gives what it computes per key or by grouping
    ``q`` itself, to rounding."""
    from fuseflow.explore.joins import held
    from fuseflow.explore.stats import LevelStats

    rng = np.random.default_rng(seed)
    coords = rng.integers(0, 5, keys).astype(float)
    level = LevelStats(1.0, float(coords.sum()), 0.0, keys, coords)
    q = np.minimum(coords * (0.7 / max(coords.max(), 1.0)), 1.0)
    weights = rng.random(sizes)
    draws = rng.integers(1, 40, sizes).astype(float)
    want = held(weights, draws, q, 50.0)
    got = held(weights, draws, q, 50.0, coord_groups(level))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(np.max(b)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 600), st.sampled_from([0, 1, 7, 8, 16, 24, 40]), st.integers(0, 2**32 - 1))
def test_counting_eight_entries_a_word_counts_what_count_nonzero_counts(rows, cols, seed):
    """Row and column counts of a mask, eight bytes a word (runs of more than 255 rows
    included, and shapes that fall back to ``np.count_nonzero``), are numpy's exactly."""
    from fuseflow.explore.stats import count_columns, count_rows

    mask = np.random.default_rng(seed).random((rows, cols)) < 0.7
    assert np.array_equal(count_rows(mask), np.count_nonzero(mask, axis=-1))
    assert np.array_equal(count_columns(mask), np.count_nonzero(mask, axis=0))
    assert np.array_equal(count_columns(np.ones((rows, cols), dtype=bool)),
                          np.full(cols, rows))
    cube = np.stack([mask, ~mask, mask])             # more than two axes
    assert np.array_equal(count_rows(cube), np.count_nonzero(cube, axis=-1))
    if rows > 1:                                     # not C-contiguous: numpy counts
        assert np.array_equal(count_rows(mask[::2]), np.count_nonzero(mask[::2], axis=-1))


@pytest.mark.parametrize("shape", [(0, 3), (0, 0)])
def test_an_empty_outer_dimension_measures_nothing_per_coordinate_not_nan(shape):
    """No parent fibers: the per-coordinate means below a dense level are zeros (not the NaN
    of a mean over nothing, which would reach every prediction that multiplies it)."""
    array = np.zeros(shape, np.float32)
    for fmt in (TensorFormat.dense(shape), TensorFormat.csr(shape)):
        for stats in (TensorStats.measure(array, fmt),
                      TensorStats.measure(FiberTree.from_dense(array, fmt))):
            inner = stats.levels[1]
            assert inner.by_parent is None or np.all(np.isfinite(inner.by_parent))
            assert inner.empty_by_parent is None or np.all(np.isfinite(inner.empty_by_parent))
            assert stats.nonzeros == 0

"""Statistics of tensors: measured from data (hand-counted) and from the density model."""

import numpy as np
import pytest

from fuseflow.explore import TensorStats
from fuseflow.sim.formats import FiberTree, TensorFormat

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

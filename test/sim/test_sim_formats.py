"""Fibertree formats: construction, round trips against torch and scipy, scanning views."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from fuseflow.errors import ChoiceError
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat

RNG = np.random.default_rng(0)


def sparse_matrix(shape, density=0.3, empty_rows=(1,)):
    a = (RNG.random(shape) < density) * RNG.standard_normal(shape)
    for r in empty_rows:
        if r < shape[0]:
            a[r] = 0
    return a.astype(np.float32)


FORMATS = {
    "dense": TensorFormat.dense, "csr": TensorFormat.csr, "csc": TensorFormat.csc,
    "coo": TensorFormat.coo, "dcsr": TensorFormat.dcsr, "bsr2": lambda s: TensorFormat.bsr(s, 2),
}


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("shape", [(6, 8), (4, 4), (0, 6), (6, 0), (2, 2)])
def test_dense_round_trip(name, shape):
    a = sparse_matrix(shape)
    tree = FiberTree.from_dense(a, FORMATS[name](shape))
    np.testing.assert_array_equal(tree.to_dense(), a)
    assert tree.to_dense().dtype == np.float32


@pytest.mark.parametrize("name", list(FORMATS))
def test_all_zero_matrix(name):
    tree = FiberTree.from_dense(np.zeros((4, 6), np.float32), FORMATS[name]((4, 6)))
    np.testing.assert_array_equal(tree.to_dense(), 0)
    if name in ("csr", "csc", "dcsr", "coo"):
        assert len(tree.vals) == 0


def test_csr_arrays_of_the_worked_example():
    b = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 4, 0, 5]], np.float32)
    tree = FiberTree.from_dense(b, TensorFormat.csr(b.shape))
    assert tree.pos[0] is None and tree.pos[1].tolist() == [0, 2, 2, 5]
    assert tree.crd[1].tolist() == [1, 3, 0, 1, 3] and tree.vals.tolist() == [1, 2, 3, 4, 5]
    crds, refs = tree.fiber(1, 2)
    assert crds.tolist() == [0, 1, 3] and refs.tolist() == [2, 3, 4]
    crds, refs = tree.fiber(0, 0)
    assert crds.tolist() == [0, 1, 2] and refs.tolist() == [0, 1, 2]


def test_scalar_and_vectors_and_3d():
    s = FiberTree.from_dense(np.float32(2.5))
    assert s.fmt.levels == () and s.vals.tolist() == [2.5] and s.to_dense() == np.float32(2.5)
    v = np.array([0, 3, 0, 4], np.float32)
    for fmt in (TensorFormat.dense((4,)), TensorFormat.coo((4,))):
        np.testing.assert_array_equal(FiberTree.from_dense(v, fmt).to_dense(), v)
    t = (RNG.random((3, 4, 5)) < 0.3).astype(np.float32)
    for fmt in (TensorFormat.dense(t.shape), TensorFormat.coo(t.shape)):
        np.testing.assert_array_equal(FiberTree.from_dense(t, fmt).to_dense(), t)


def test_coo_runs_give_deduplicated_fibers():
    t = np.zeros((2, 3, 4), np.float32)
    t[0, 1, 0], t[0, 1, 3], t[0, 2, 2], t[1, 0, 1] = 1, 2, 3, 4
    tree = FiberTree.from_dense(t, TensorFormat.coo(t.shape))
    assert tree.crd[0].tolist() == [0, 0, 0, 1]  # stored with one position per entry
    crds, refs = tree.fiber(0, 0)
    assert crds.tolist() == [0, 1]
    crds, refs = tree.fiber(1, int(refs[0]))  # i = 0: j in {1, 2}
    assert crds.tolist() == [1, 2]
    crds, refs = tree.fiber(2, int(refs[0]))  # (0, 1): k in {0, 3}
    assert crds.tolist() == [0, 3] and tree.vals[refs].tolist() == [1, 2]


@pytest.mark.parametrize("layout", ["csr", "csc", "coo", "bsr", "strided"])
def test_from_torch_natural_formats(layout):
    a = sparse_matrix((6, 8))
    t = torch.from_numpy(a)
    src = {"csr": t.to_sparse_csr(), "csc": t.to_sparse_csc(), "coo": t.to_sparse_coo(),
           "bsr": t.to_sparse_bsr((2, 2)), "strided": t}[layout]
    tree = FiberTree.from_torch(src)
    want = {"csr": TensorFormat.csr(a.shape), "csc": TensorFormat.csc(a.shape),
            "coo": TensorFormat.coo(a.shape), "bsr": TensorFormat.bsr(a.shape, 2),
            "strided": TensorFormat.dense(a.shape)}[layout]
    assert tree.fmt == want
    torch.testing.assert_close(tree.to_torch(), t)
    if layout == "csr":
        assert tree.pos[1].tolist() == src.crow_indices().tolist()
        assert tree.crd[1].tolist() == src.col_indices().tolist()


def test_from_torch_converts_and_keeps_explicit_zeros():
    crow, col, val = torch.tensor([0, 2, 2, 3]), torch.tensor([0, 2, 1]), torch.tensor([1.0, 0.0, 3.0])
    t = torch.sparse_csr_tensor(crow, col, val, (3, 4))
    tree = FiberTree.from_torch(t)
    assert tree.vals.tolist() == [1.0, 0.0, 3.0]
    dcsr = FiberTree.from_torch(t, TensorFormat.dcsr((3, 4)))
    assert dcsr.crd[0].tolist() == [0, 2] and dcsr.vals.tolist() == [1.0, 0.0, 3.0]
    torch.testing.assert_close(dcsr.to_torch(), t.to_dense())
    assert FiberTree.from_torch(t.to_dense(), TensorFormat.csr((3, 4))).vals.tolist() == [1.0, 3.0]


def test_blocked_level_sizes_cover_every_coordinate():
    """A 'div' level has ceil(n / block) coordinates, one per d // block for d < n."""
    assert [LevelSpec("dense", 0, "div", 4).size((n,)) for n in (8, 6, 1)] == [2, 2, 1]
    assert LevelSpec("dense", 0, "mod", 4).size((6,)) == 4
    assert LevelSpec("compressed", 1).size((3, 5)) == 5


def test_conversion_keeps_stored_entries_and_drops_dense_fill():
    """The one format conversion: a sparse source's explicit zeros stay stored (as
    sparse_tensor.convert), a dense source stores only its nonzeros."""
    csr = FiberTree(TensorFormat.csr((2, 3)), [None, [0, 2, 3]], [None, [0, 2, 1]], [1.0, 0.0, 3.0])
    coo = csr.convert(TensorFormat.coo((2, 3)))
    assert (coo.crd[0].tolist(), coo.crd[1].tolist(), coo.vals.tolist()) == \
        ([0, 0, 1], [0, 2, 1], [1.0, 0.0, 3.0])
    assert csr.convert(TensorFormat.csc((2, 3))).vals.tolist() == [1.0, 3.0, 0.0]
    dense = FiberTree.from_dense(np.array([[1.0, 0.0], [0.0, 2.0]], np.float32))
    assert dense.convert(TensorFormat.csr((2, 2))).vals.tolist() == [1.0, 2.0]
    assert csr.convert(csr.fmt) is csr


def test_from_torch_uncoalesced_coo_sums_duplicates():
    t = torch.sparse_coo_tensor(torch.tensor([[1, 0, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (2, 3))
    tree = FiberTree.from_torch(t)
    assert tree.vals.tolist() == [2.0, 4.0]
    torch.testing.assert_close(tree.to_torch(), t.to_dense())


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "bsr", "lil"])
def test_from_scipy(kind):
    a = sparse_matrix((6, 8))
    m = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix,
         "bsr": lambda x: sp.bsr_matrix(x, blocksize=(2, 2)), "lil": sp.lil_matrix}[kind](a)
    tree = FiberTree.from_scipy(m)
    np.testing.assert_array_equal(tree.to_dense(), a)
    np.testing.assert_array_equal(FiberTree.from_scipy(m, TensorFormat.dcsr(a.shape)).to_dense(), a)


def test_level_sizes_and_describe():
    fmt = TensorFormat.bsr((4, 6), (2, 3))
    assert fmt.level_sizes() == (2, 2, 2, 3)
    assert TensorFormat.csr((3, 4)).describe() == "3x4[dense(0),compressed(1)]"


def test_format_errors_list_choices():
    with pytest.raises(ChoiceError) as info:
        LevelSpec("sparse", 0)
    assert str(info.value) == ("invalid value 'sparse' for level format; valid choices: dense, "
                               "compressed, compressed_nonunique, singleton")
    with pytest.raises(ChoiceError, match="^invalid value 'shift' for level kind; valid choices: id, div, mod$"):
        LevelSpec("dense", 0, kind="shift")
    with pytest.raises(ValueError, match="dim 1 must be indexed"):
        TensorFormat((2, 3), (LevelSpec("dense", 0),))
    with pytest.raises(ValueError, match="singleton level must follow"):
        TensorFormat((2, 3), (LevelSpec("dense", 0), LevelSpec("singleton", 1)))
    with pytest.raises(ValueError, match="needs a 2-d shape"):
        TensorFormat.csr((2, 3, 4))
    with pytest.raises(ValueError, match="block size dividing"):
        TensorFormat.bsr((5, 4), 2)


def test_tree_validation():
    with pytest.raises(ValueError, match="pos must have 4 entries"):
        FiberTree(TensorFormat.csr((3, 4)), [None, [0, 1]], [None, [0]], [1.0])
    with pytest.raises(ValueError, match="outside level sizes"):
        FiberTree.from_coords([[3, 0]], [1.0], TensorFormat.csr((3, 4)))


def _generic(a, fmt):
    """The tree built through coordinates, sorted (the path every format can take)."""
    idx = np.nonzero(a)
    if all(lv.format == "dense" for lv in fmt.levels):
        idx = np.indices(a.shape).reshape(a.ndim, -1)
    return FiberTree.from_coords(np.stack(idx, axis=1), a[tuple(idx)], fmt)


def _same_tree(t, u):
    assert t.fmt == u.fmt
    assert np.array_equal(t.vals, u.vals)
    for p, q in zip(t.pos + t.crd, u.pos + u.crd):
        assert (p is None and q is None) or np.array_equal(p, q)


@pytest.mark.parametrize("fmt", [
    TensorFormat.dense((5, 7)), TensorFormat.csr((5, 7)), TensorFormat.dcsr((5, 7)),
    TensorFormat.coo((5, 7)), TensorFormat.csc((5, 7)), TensorFormat.bsr((6, 8), 2),
    TensorFormat((5, 7), (LevelSpec("dense", 1), LevelSpec("dense", 0))),
    TensorFormat((3, 4, 5), (LevelSpec("dense", 2), LevelSpec("dense", 0), LevelSpec("dense", 1))),
    TensorFormat((3, 4, 5), (LevelSpec("dense", 0), LevelSpec("compressed", 1),
                             LevelSpec("compressed", 2))),
    TensorFormat((0, 4), (LevelSpec("dense", 0), LevelSpec("compressed", 1))),
], ids=lambda f: f.describe())
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_from_dense_shortcuts_build_the_tree_the_coordinates_build(fmt, density):
    """An all-dense format takes the array transposed, a format whose levels follow the
    dimensions takes nonzero's entries unsorted (both without the coordinate sort a dense
    input of ogbn-mag's size needed gigabytes for): the same tree as the generic path."""
    a = ((RNG.random(fmt.shape) < density) * RNG.standard_normal(fmt.shape)).astype(np.float32)
    tree = FiberTree.from_dense(a, fmt)
    _same_tree(tree, _generic(a, fmt))
    assert np.array_equal(tree.to_dense(), a)


_DENSE_SOURCES = [
    TensorFormat.dense((6, 8)),
    TensorFormat((6, 8), (LevelSpec("dense", 1), LevelSpec("dense", 0))),
    TensorFormat((3, 4, 5), (LevelSpec("dense", 2), LevelSpec("dense", 0), LevelSpec("dense", 1))),
]
_TARGETS = ["csr", "csc", "coo", "dcsr", "dense_t", "bsr2"]


def _target(name, shape):
    if name == "dense_t":
        dims = reversed(range(len(shape)))
        return TensorFormat(shape, tuple(LevelSpec("dense", d) for d in dims))
    if len(shape) == 3:
        return TensorFormat(shape, (LevelSpec("dense", 0), LevelSpec("compressed", 2),
                                    LevelSpec("compressed", 1)))
    return {**FORMATS, "dcsr": TensorFormat.dcsr}[name](shape)


@pytest.mark.parametrize("source", _DENSE_SOURCES, ids=lambda f: f.describe())
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_a_dense_source_converts_to_the_tree_of_its_nonzeros(source, target, density):
    """A source stored dense (in any level order) converts through its array, not a coordinate
    per entry: the tree of its nonzeros (dense fill dropped, -0.0 too, NaN kept), as the
    coordinate path builds it."""
    shape = source.shape
    a = ((RNG.random(shape) < density) * RNG.standard_normal(shape)).astype(np.float32)
    if density == 0.3:
        a.reshape(-1)[:3] = [-0.0, np.nan, 0.0]
    tree = FiberTree.from_dense(a, source)
    fmt = _target(target, source.shape)
    got = tree.convert(fmt)
    idx = np.nonzero(a)
    want = FiberTree.from_coords(np.stack(idx, axis=1), a[idx], fmt)
    assert got.fmt == fmt
    assert np.array_equal(got.vals, want.vals, equal_nan=True)
    for p, q in zip(got.pos + got.crd, want.pos + want.crd):
        assert (p is None and q is None) or np.array_equal(p, q)
    assert np.array_equal(tree.to_dense(), a, equal_nan=True)


def test_a_dense_source_converts_without_a_coordinate_per_entry():
    """Converting a dense (H, N) weight to CSR costs memory in its nonzeros, not its entries:
    SAE's NIH-CXR weights (10% dense, 1M columns) built int64 coordinates of every entry,
    more than the machine's memory."""
    import tracemalloc

    shape = (400, 5000)
    a = ((RNG.random(shape) < 0.01) * RNG.standard_normal(shape)).astype(np.float32)
    tree = FiberTree.from_dense(a)
    tracemalloc.start()
    try:
        tree.convert(TensorFormat.csr(shape))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < a.nbytes, f"peak {peak:,} bytes converting a {a.nbytes:,}-byte array"

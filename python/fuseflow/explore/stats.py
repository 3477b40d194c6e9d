"""Statistics of a tensor stored in a fibertree format: what the cost model knows about data.

Per storage level a :class:`LevelStats` gives the number of fibers a full scan visits (one per
reference of the level above), the coordinates it emits and how many fibers are empty; a
:class:`TensorStats` adds the stored values and how many are nonzero. Statistics come from
data (:meth:`TensorStats.measure`, exact) or from a density model
(:meth:`TensorStats.from_density`: entries nonzero independently with probability ``density``).
Counts are floats so that measured and modelled statistics share one type.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np

from fuseflow.sim.formats import FiberTree, TensorFormat


@dataclass(slots=True, unsafe_hash=True)
class LevelStats:
    """One storage level, as a scanner sees it when every parent reference is scanned once.
    Treated as immutable (the cost model recognizes unchanged statistics by identity); not
    frozen, which makes building one several times cheaper."""

    fibers: float
    """Fibers (parent references) of the level."""
    items: float
    """Coordinates of all fibers (the level's references: the fibers of the next level)."""
    empty: float
    """Fibers without a coordinate."""
    size: int
    """Coordinate range of the level."""
    coords: np.ndarray | None = field(default=None, compare=False)
    """Measured: coordinates per value over all fibers (``size`` entries)."""
    by_parent: np.ndarray | None = field(default=None, compare=False)
    """Measured, under a dense parent level: mean fiber size per parent coordinate."""
    empty_by_parent: np.ndarray | None = field(default=None, compare=False)
    """Measured, under a dense parent level: fraction of empty fibers per parent coordinate."""
    size_groups: tuple | None = field(default=None, compare=False)
    """Measured with ``by_parent``: ``np.unique(by_parent, return_inverse=True)`` (fiber sizes
    grouped once per tensor, for accumulators averaging over them)."""
    coord_groups: tuple | None = field(default=None, compare=False)
    """``(index, counts, first)`` grouping the equal entries of ``coords`` (:func:`coord_groups`,
    filled on first use: what a scan's histogram is scaled from, grouped once per tensor for
    the accumulators that evaluate each distinct value once)."""
    weighted: tuple = field(default=(), compare=False)
    """``(hist, items, empty)`` of the last :data:`WEIGHTED_KEPT` histograms
    :func:`weighted` summed ``by_parent`` under (filled on use)."""

    @property
    def mean(self) -> float:
        """Mean coordinates per fiber."""
        return self.items / self.fibers if self.fibers else 0.0

    @property
    def empty_fraction(self) -> float:
        """Fraction of fibers without a coordinate."""
        return self.empty / self.fibers if self.fibers else 0.0


@dataclass(slots=True, unsafe_hash=True)
class TensorStats:
    """A tensor's format, per-level statistics, and its stored and nonzero values (treated as
    immutable, like :class:`LevelStats`)."""

    fmt: TensorFormat
    levels: tuple[LevelStats, ...]
    values: float
    """Stored values (one per reference of the last level)."""
    nonzeros: float
    """Stored values that are nonzero."""
    measured: bool = False
    """Whether the counts were measured from data (exact) or come from a density model."""

    @property
    def density(self) -> float:
        """Nonzero values over the tensor's entries."""
        numel = math.prod(self.fmt.shape)
        return self.nonzeros / numel if numel else 0.0

    @property
    def nonzero_fraction(self) -> float:
        """Fraction of the stored values that are nonzero."""
        return self.nonzeros / self.values if self.values else 0.0

    @classmethod
    def measure(cls, data, fmt: TensorFormat | None = None) -> "TensorStats":
        """Exact statistics of ``data`` (a torch tensor, dense or sparse, a numpy array or a
        :class:`FiberTree`) stored in ``fmt`` (default: its own format), stored the way the
        runtime binds it (a format change keeps only the nonzeros)."""
        tree = _tree(data)
        if fmt is not None and tree.fmt != fmt:
            array = np.asarray(tree.to_dense(), dtype=np.float32)
            if _masked(fmt) and array.shape == fmt.shape:
                return _measure_array(array, fmt)
            tree = FiberTree.from_dense(array, fmt)
        per_level = []
        refs = 1                                   # the root reference
        for lv, spec in enumerate(tree.fmt.levels):
            counts, refs = _level_counts(tree, lv, refs)
            size = spec.size(tree.fmt.shape)
            per_level.append((counts, _coords(tree, lv, len(counts), size)))
        return _assemble(tree.fmt, per_level, float(len(tree.vals)),
                         float(np.count_nonzero(tree.vals)))

    @classmethod
    def from_density(cls, fmt: TensorFormat, density: float) -> "TensorStats":
        """Expected statistics when every entry is nonzero independently with ``density``.

        A compressed (or singleton) level ``l`` stores the distinct nonempty prefixes of its
        levels, ``P_l q_l`` with ``P_l`` the product of the level sizes up to ``l`` and
        ``q_l = 1 - (1 - density)^(R_l)`` (``R_l`` entries below a prefix); a dense level stores
        every child of its parent's references. Fibers of level ``l`` are the references of
        level ``l - 1``; the nonempty ones are the nonempty prefixes of level ``l - 1``.
        """
        return DensityModel(fmt)(density)

    def convert(self, fmt: TensorFormat) -> "TensorStats":
        """The statistics of the same tensor stored in ``fmt``: unchanged for the same format,
        otherwise the density model at the measured density (a conversion keeps nonzeros)."""
        if fmt == self.fmt:
            return self
        numel = math.prod(fmt.shape)
        return TensorStats.from_density(fmt, min(self.nonzeros / numel, 1.0) if numel else 0.0)


class DensityModel:
    """:meth:`TensorStats.from_density` for one format: what depends on the format alone
    (level sizes, prefix counts) is computed once, so predicting many densities (a host
    layout op between kernels, at every prediction) only does the per-density arithmetic."""

    __slots__ = ("fmt", "_numel", "_plan", "_bare")

    def __init__(self, fmt: TensorFormat):
        self.fmt = fmt
        self._numel = math.prod(fmt.shape)
        self._plan = []
        prefixes = 1
        for spec, size in zip(fmt.levels, fmt.level_sizes()):
            prefixes *= size
            below = self._numel // prefixes if prefixes else 0
            self._plan.append((prefixes, below, size, spec.format == "dense",
                               spec.format == "dense" or size == 0))
        self._bare = not fmt.levels

    def __call__(self, density: float) -> "TensorStats":
        if not 0.0 <= density <= 1.0:
            raise ValueError(f"density must be in [0, 1], got {density}")
        # 1 - (1 - density)^n, the probability that n entries hold a nonzero, as
        # -expm1(n * log1p(-density)) (1 for density 1, 0 for n 0).
        log = math.log1p(-density) if density < 1.0 else None
        expm1 = math.expm1
        levels = []
        refs = 1.0
        numel = self._numel
        parent = (1.0 if log is None else -expm1(numel * log)) if numel > 0 else 0.0
        for prefixes, below, size, dense_level, dense in self._plan:
            nonempty = prefixes * ((1.0 if log is None else -expm1(below * log))
                                   if below > 0 else 0.0)
            items = refs * size if dense_level else nonempty
            empty = 0.0 if dense else max(refs - parent, 0.0)
            levels.append(LevelStats(refs, items, empty, size))
            refs, parent = items, nonempty
        values = 1.0 if self._bare else refs
        return TensorStats(self.fmt, tuple(levels), values, density * numel)


def _nonempty(density: float, entries: int) -> float:
    """Probability that ``entries`` independent entries hold at least one nonzero."""
    if entries <= 0:
        return 0.0
    if density >= 1.0:
        return 1.0
    return -math.expm1(entries * math.log1p(-density))


def _assemble(fmt: TensorFormat, per_level: list, values: float,
              nonzeros: float) -> TensorStats:
    """Measured statistics from each level's coordinates per fiber (in reference order) and
    coordinates per value."""
    levels: list[LevelStats] = []
    for lv, (spec, (counts, coords)) in enumerate(zip(fmt.levels, per_level)):
        by_parent = empty_by_parent = groups = None
        if lv and fmt.levels[lv - 1].format == "dense":
            width = int(levels[-1].size)
            if len(counts) and width:
                per = counts.reshape(-1, width)
                by_parent, empty_by_parent = per.mean(axis=0), (per == 0).mean(axis=0)
            else:  # no fibers (an empty dimension): nothing per coordinate, not a mean of none
                by_parent = empty_by_parent = np.zeros(width)
            groups = np.unique(by_parent, return_inverse=True)
        levels.append(LevelStats(float(len(counts)), float(counts.sum()),
                                 float(np.count_nonzero(counts == 0)), spec.size(fmt.shape),
                                 coords, by_parent, empty_by_parent, groups))
    return TensorStats(fmt, tuple(levels), values, nonzeros, measured=True)


def _masked(fmt: TensorFormat) -> bool:
    """Whether :func:`_measure_array` measures ``fmt``: dense and compressed levels (no COO
    runs to deduplicate)."""
    return bool(fmt.levels) and all(lv.format in ("dense", "compressed") for lv in fmt.levels)


def _measure_array(array: np.ndarray, fmt: TensorFormat) -> TensorStats:
    """The statistics :meth:`TensorStats.measure` counts on ``FiberTree.from_dense(array,
    fmt)``, counted on the array's nonzero mask instead (no coordinate per entry is built: a
    pruned SAE weight of 12.8 million entries at the published preset is measured in 0.045 s
    instead of 0.22 s).

    The mask is laid out as the format's level coordinates (a blocked dimension split into
    its ``div`` and ``mod`` axes, the axes in level order), so level ``l``'s stored prefixes
    are a boolean array over its first ``l + 1`` axes: a dense level stores every child of a
    stored parent, a compressed level the children holding a nonzero. In C order, the
    parents' entries are the references in storage order."""
    split, axes = [], {}
    for d, n in enumerate(fmt.shape):
        kinds = {lv.kind: lv for lv in fmt.levels if lv.dim == d}
        if "div" in kinds:
            block = kinds["div"].block
            axes[(d, "div")], axes[(d, "mod")] = len(split), len(split) + 1
            split += [n // block, block]
        else:
            axes[(d, "id")] = len(split)
            split.append(n)
    mask = array.reshape(split).transpose([axes[(lv.dim, lv.kind)] for lv in fmt.levels]) != 0
    stored = np.ones((), dtype=bool)       # the root reference
    every = True                           # every prefix of the level above is stored
    per_level = []
    for lv, spec in enumerate(fmt.levels):
        size = mask.shape[lv]
        shape = mask.shape[:lv + 1]
        parents = int(np.count_nonzero(stored))
        if spec.format == "dense":
            counts = np.full(parents, size, dtype=np.int64)
            coords = np.full(size, float(parents))
            stored = np.broadcast_to(stored[..., None], shape)
        else:
            # Prefixes holding a nonzero, kept under stored parents.
            holds = mask.any(axis=tuple(range(lv + 1, mask.ndim))) if lv + 1 < mask.ndim \
                else mask
            parent, stored = stored, holds if every else stored[..., None] & holds
            counts = count_rows(stored)
            counts = (counts.reshape(-1) if every else counts[parent]).astype(np.int64)
            coords = (count_columns(stored.reshape(-1, size)) if size
                      else np.zeros(0, dtype=np.int64)).astype(float)
            every = False
        per_level.append((counts, coords))
    return _assemble(fmt, per_level, float(np.count_nonzero(stored)),
                     float(np.count_nonzero(mask)))


_BYTE_SUM = np.uint64(0x0101010101010101)
_LANE_MAX = 255
"""Rows of 0/1 bytes a byte lane of a 64-bit sum holds without overflowing."""
_BLOCK_WORDS = 1 << 16
"""Words :func:`count_rows` multiplies at a time."""


def _as_words(mask: np.ndarray):
    """``mask`` (bool, last axis a nonzero multiple of 8, C-contiguous, little-endian machine)
    as 64-bit words of eight 0/1 bytes each, or None."""
    if (mask.ndim == 0 or not mask.shape[-1] or mask.shape[-1] % 8
            or not mask.flags.c_contiguous or sys.byteorder != "little"):
        return None
    return mask.view(np.uint64)


def count_rows(mask: np.ndarray) -> np.ndarray:
    """``np.count_nonzero(mask, axis=-1)`` of a bool array, eight entries per operation: a
    word of eight 0/1 bytes times ``0x0101010101010101`` holds their sum in its top byte."""
    words = _as_words(mask)
    if words is None:
        return np.asarray(np.count_nonzero(mask, axis=-1))
    words = words.reshape(-1, words.shape[-1])
    out = np.empty(len(words), dtype=np.int64)
    step = max(_BLOCK_WORDS // max(words.shape[1], 1), 1)
    for start in range(0, len(words), step):     # blocks: the temporaries stay in cache
        block = words[start:start + step] * _BYTE_SUM
        block >>= np.uint64(56)
        block.sum(axis=-1, dtype=np.int64, out=out[start:start + step])
    return out.reshape(mask.shape[:-1])


def count_columns(mask: np.ndarray) -> np.ndarray:
    """``np.count_nonzero(mask, axis=0)`` of a 2-d bool array, eight entries per operation:
    rows of words added in runs of up to 255, so each byte lane counts its column without
    carrying into the next."""
    words = _as_words(mask)
    if words is None:
        return np.count_nonzero(mask, axis=0)
    rows, cols = mask.shape
    full = rows - rows % _LANE_MAX
    runs = words[:full].reshape(-1, _LANE_MAX, words.shape[1]).sum(axis=1, dtype=np.uint64)
    total = runs.view(np.uint8).reshape(-1, cols).sum(axis=0, dtype=np.int64)
    if full < rows:
        total += words[full:].sum(axis=0, dtype=np.uint64).view(np.uint8)
    return total


THREADED_DOT = 10_000
"""Elements beyond which OpenBLAS (numpy's BLAS) splits a dot product of two vectors over its
threads. Waking them costs far more than the product on a busy machine (about 8 ms of CPU for
17,716 elements on the 2-core development machine during a sweep, against 6 us in one thread:
the per-coordinate products made a GCN prediction on DBLP take 0.12 s instead of 3 ms), and
the split makes the sum depend on the thread count."""


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """The dot product of two vectors, computed in this thread: BLAS's own (single-threaded)
    product up to :data:`THREADED_DOT` elements, a pairwise sum of the products beyond."""
    if len(a) <= THREADED_DOT:
        return float(a.dot(b))      # BLAS's ddot as ``a @ b``, without the ufunc machinery
    return float(np.add.reduce(a * b))


def weighted(level: LevelStats, hist: np.ndarray) -> tuple[float, float]:
    """``(dot(hist, by_parent), dot(hist, empty_by_parent))`` of ``level``: the coordinates
    and empty fibers a scan of it reads under a parent histogram ``hist``. Kept on the level
    for the last :data:`WEIGHTED_KEPT` histograms (by identity: a compiled kernel's constant
    histogram, or the measured ``coords`` a histogram is scaled from, are the same objects
    on every prediction; arrays are never changed in place)."""
    for kept in level.weighted:
        if kept[0] is hist:
            return kept[1], kept[2]
    items, empty = dot(hist, level.by_parent), dot(hist, level.empty_by_parent)
    level.weighted = ((hist, items, empty),) + level.weighted[:WEIGHTED_KEPT - 1]
    return items, empty


WEIGHTED_KEPT = 4
"""Histograms :func:`weighted` keeps its sums for, per level."""


def coord_groups(level: LevelStats) -> tuple:
    """``(index, counts, first)`` of ``level.coords``: entry ``c`` is in group ``index[c]``, of
    ``counts`` entries, all equal to entry ``first[group]`` (the distinct values in ascending
    order, ``np.unique``'s groups). Computed once per level and kept on it (a function of
    ``coords`` alone, which statistics never change)."""
    groups = level.coord_groups
    if groups is None:
        _, first, index, counts = np.unique(level.coords, return_index=True,
                                            return_inverse=True, return_counts=True)
        groups = level.coord_groups = (index, counts, first)
    return groups


def _tree(data) -> FiberTree:
    if isinstance(data, FiberTree):
        return data
    if isinstance(data, np.ndarray):
        return FiberTree.from_dense(data)
    import torch

    if isinstance(data, torch.Tensor):
        return FiberTree.from_torch(data.detach())
    raise TypeError(f"cannot measure statistics of {type(data).__name__}; pass a torch tensor, "
                    "a numpy array or a FiberTree")


def _coords(tree: FiberTree, level: int, fibers: int, size: int) -> np.ndarray:
    """How many times each coordinate of ``level`` occurs over all its fibers."""
    spec = tree.fmt.levels[level]
    if spec.format == "dense":
        return np.full(size, float(fibers))
    crd = tree.crd[level]
    if tree.fmt.groups(level):
        crd = crd[tree._run_starts(level)[:-1]]
    return np.bincount(crd, minlength=size).astype(float)


def _level_counts(tree: FiberTree, level: int, parents: int) -> tuple[np.ndarray, int]:
    """Coordinates per fiber of ``level`` under each of the ``parents`` references of the
    level above, as the scanner reads them (COO runs deduplicated, see
    :meth:`FiberTree.fiber`), and the number of the level's own references."""
    fmt = tree.fmt
    spec = fmt.levels[level]
    if spec.format == "dense":
        n = spec.size(fmt.shape)
        return np.full(parents, n, dtype=np.int64), parents * n
    positions = len(tree.crd[level])
    if spec.format == "singleton":
        # The fiber under a parent reference is its run (when the level above groups) or
        # its one position.
        if fmt.groups(level - 1):
            starts = tree._run_starts(level - 1)
            lo, hi = starts[:-1], starts[1:]
        else:
            lo = np.arange(positions, dtype=np.int64)
            hi = lo + 1
    else:
        lo, hi = tree.pos[level][:-1], tree.pos[level][1:]
    if not fmt.groups(level):
        return hi - lo, positions
    starts = tree._run_starts(level)
    first = np.searchsorted(starts, lo, side="right") - 1
    last = np.searchsorted(starts, hi, side="left")
    return np.where(hi > lo, last - first, 0), len(starts) - 1

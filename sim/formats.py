"""Fibertree tensor formats: level specifications, formats and stored tensors.

A tensor is stored level by level in :class:`~fuseflow.dialects.levels.LevelSpec` levels
(the storage-level model the compiler reads from ``#sparse_tensor.encoding`` too).

Level formats and the fibers a scanner sees under parent reference ``r``:

- ``dense`` of size n: coordinates ``0..n-1``, child reference ``r*n + c``;
- ``compressed``: ``crd[pos[r]:pos[r+1]]``, child references are those positions;
- ``compressed_nonunique`` + ``singleton`` (COO): stored with one position per entry, but
  scanned as the deduplicated equivalent: a level followed by a singleton level *groups* its
  positions into runs of equal coordinates (never crossing a parent fiber) and emits each
  run's coordinate once, with the run's index as child reference; the singleton level under it
  iterates the positions of that run. A singleton level not followed by another singleton emits
  each position it iterates, with the position as reference.

Values are indexed by the last level's references. A 0-d tensor has no levels and one value.
Only :func:`FiberTree.from_torch` and :func:`FiberTree.to_torch` import torch (lazily).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fuseflow.dialects.levels import LevelSpec


@dataclass(frozen=True)
class TensorFormat:
    """A tensor's shape and its storage levels, outermost first."""

    shape: tuple[int, ...]
    levels: tuple[LevelSpec, ...]

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        object.__setattr__(self, "levels", tuple(self.levels))
        nd = len(self.shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"negative extent in shape {self.shape}")
        maps: dict[int, list[LevelSpec]] = {}
        for lv in self.levels:
            if lv.dim >= nd:
                raise ValueError(f"level indexes dim {lv.dim} of a {nd}-d tensor")
            maps.setdefault(lv.dim, []).append(lv)
        for d in range(nd):
            kinds = sorted(lv.kind for lv in maps.get(d, []))
            if kinds == ["id"]:
                continue
            if kinds == ["div", "mod"]:
                blocks = {lv.block for lv in maps[d]}
                if len(blocks) != 1 or self.shape[d] % blocks.pop() != 0:
                    raise ValueError(f"dim {d}: div/mod levels need one block size dividing {self.shape[d]}")
                continue
            raise ValueError(f"dim {d} must be indexed by one 'id' level or a 'div' and a 'mod' level; "
                             f"got kinds {kinds or 'none'}")
        for i, lv in enumerate(self.levels):
            nxt = self.levels[i + 1].format if i + 1 < len(self.levels) else None
            if lv.format == "singleton" and (i == 0 or self.levels[i - 1].format not in
                                             ("compressed_nonunique", "singleton")):
                raise ValueError("a singleton level must follow a compressed_nonunique or singleton level")
            if lv.format == "compressed_nonunique" and nxt != "singleton":
                raise ValueError("a compressed_nonunique level must be followed by a singleton level")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def is_row_major_dense(self) -> bool:
        """Every level dense, one per dimension in dimension order (its values are the
        row-major array)."""
        return bool(self.levels) and len(self.levels) == self.ndim and all(
            lv.format == "dense" and lv.kind == "id" and lv.dim == d
            for d, lv in enumerate(self.levels))

    def level_sizes(self) -> tuple[int, ...]:
        """Number of coordinates of each level."""
        return tuple(lv.size(self.shape) for lv in self.levels)

    def groups(self, level: int) -> bool:
        """True if ``level`` is scanned as runs (it is followed by a singleton level)."""
        return level + 1 < len(self.levels) and self.levels[level + 1].format == "singleton"

    def describe(self) -> str:
        """A compact text form, e.g. ``3x4[dense(0),compressed(1)]``."""
        lv = ",".join(f"{l.format}({l.dim}{'' if l.kind == 'id' else f' {l.kind} {l.block}'})"
                      for l in self.levels)
        return f"{'x'.join(map(str, self.shape)) or 'scalar'}[{lv}]"

    @classmethod
    def dense(cls, shape) -> "TensorFormat":
        """All levels dense, row-major."""
        shape = tuple(shape)
        return cls(shape, tuple(LevelSpec("dense", d) for d in range(len(shape))))

    @classmethod
    def csr(cls, shape) -> "TensorFormat":
        """Dense rows, compressed columns (2-d)."""
        _need_2d(shape, "csr")
        return cls(tuple(shape), (LevelSpec("dense", 0), LevelSpec("compressed", 1)))

    @classmethod
    def csc(cls, shape) -> "TensorFormat":
        """Dense columns, compressed rows (2-d)."""
        _need_2d(shape, "csc")
        return cls(tuple(shape), (LevelSpec("dense", 1), LevelSpec("compressed", 0)))

    @classmethod
    def dcsr(cls, shape) -> "TensorFormat":
        """Compressed rows, compressed columns (2-d)."""
        _need_2d(shape, "dcsr")
        return cls(tuple(shape), (LevelSpec("compressed", 0), LevelSpec("compressed", 1)))

    @classmethod
    def coo(cls, shape) -> "TensorFormat":
        """compressed_nonunique + singletons (a 1-d COO is a compressed vector)."""
        shape = tuple(shape)
        if len(shape) == 0:
            raise ValueError("coo needs at least one dimension")
        if len(shape) == 1:
            return cls(shape, (LevelSpec("compressed", 0),))
        return cls(shape, (LevelSpec("compressed_nonunique", 0),)
                   + tuple(LevelSpec("singleton", d) for d in range(1, len(shape))))

    @classmethod
    def bsr(cls, shape, block) -> "TensorFormat":
        """Block rows (dense), block columns (compressed), dense blocks; ``block`` int or (bh, bw)."""
        _need_2d(shape, "bsr")
        bh, bw = (block, block) if isinstance(block, int) else tuple(block)
        return cls(tuple(shape), (LevelSpec("dense", 0, "div", bh), LevelSpec("compressed", 1, "div", bw),
                                  LevelSpec("dense", 0, "mod", bh), LevelSpec("dense", 1, "mod", bw)))


def _need_2d(shape, name):
    if len(tuple(shape)) != 2:
        raise ValueError(f"{name} format needs a 2-d shape, got {tuple(shape)}")


@dataclass(eq=False)
class FiberTree:
    """A tensor stored in a :class:`TensorFormat`: per-level ``pos``/``crd`` arrays and values.

    ``pos[l]`` is set for compressed levels (length = parent references + 1), ``crd[l]`` for
    compressed and singleton levels; both are ``None`` for dense levels. ``vals`` (float32) has
    one entry per reference of the last level (one entry for a 0-d tensor).
    """

    fmt: TensorFormat
    pos: list
    crd: list
    vals: np.ndarray
    _runs: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        self.vals = np.ascontiguousarray(self.vals, dtype=np.float32).reshape(-1)
        nlev = len(self.fmt.levels)
        self.pos = [None if p is None else np.asarray(p, dtype=np.int64) for p in self.pos] + [None] * (nlev - len(self.pos))
        self.crd = [None if c is None else np.asarray(c, dtype=np.int64) for c in self.crd] + [None] * (nlev - len(self.crd))
        refs = 1
        for l, lv in enumerate(self.fmt.levels):
            if lv.format == "dense":
                refs *= lv.size(self.fmt.shape)
                continue
            if self.crd[l] is None:
                raise ValueError(f"level {l} ({lv.format}) needs a crd array")
            if lv.format == "singleton":
                if len(self.crd[l]) != refs:
                    raise ValueError(f"singleton level {l} has {len(self.crd[l])} coordinates for {refs} parents")
            else:
                p = self.pos[l]
                if p is None or len(p) != refs + 1 or p[-1] != len(self.crd[l]):
                    raise ValueError(f"level {l}: pos must have {refs + 1} entries ending at len(crd)")
            refs = len(self.crd[l])
        if len(self.vals) != refs:
            raise ValueError(f"expected {refs} values, got {len(self.vals)}")

    # -- scanning -----------------------------------------------------------------------------

    def fiber(self, level: int, ref: int) -> tuple[np.ndarray, np.ndarray]:
        """The coordinates and child references of the fiber under ``ref`` at ``level``."""
        lv = self.fmt.levels[level]
        if lv.format == "dense":
            n = lv.size(self.fmt.shape)
            return np.arange(n), np.arange(ref * n, ref * n + n)
        if lv.format == "singleton":
            if self.fmt.groups(level - 1):
                starts = self._run_starts(level - 1)
                lo, hi = int(starts[ref]), int(starts[ref + 1])
            else:
                lo, hi = ref, ref + 1
        else:
            lo, hi = int(self.pos[level][ref]), int(self.pos[level][ref + 1])
        crd = self.crd[level]
        if not self.fmt.groups(level):
            return crd[lo:hi], np.arange(lo, hi)
        starts = self._run_starts(level)
        first = np.searchsorted(starts, lo, side="right") - 1
        last = np.searchsorted(starts, hi, side="left")
        rids = np.arange(first, last)
        return crd[starts[rids]], rids

    def _run_starts(self, level: int) -> np.ndarray:
        """Start positions of the runs of a grouping level, with a final sentinel."""
        if level not in self._runs:
            crd = self.crd[level]
            n = len(crd)
            lv = self.fmt.levels[level]
            seg = self.pos[level] if lv.format != "singleton" else self._run_starts(level - 1)
            change = np.flatnonzero(crd[1:] != crd[:-1]) + 1
            starts = np.union1d(np.union1d(change, seg[seg < n]), [0] if n else [])
            self._runs[level] = np.append(starts, n).astype(np.int64)
        return self._runs[level]

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_level_coords(cls, fmt: TensorFormat, lcoords, vals,
                          ordered: bool = False) -> "FiberTree":
        """Builds a tree from entries given as level coordinates (rows) and values.

        Entries are sorted; duplicates are summed (float32, in sorted order). Dense levels are
        filled: absent entries under a stored parent get 0.0. ``ordered``: the caller
        guarantees the entries are sorted and distinct (no sort, no copy).
        """
        nlev = len(fmt.levels)
        vals = np.asarray(vals, dtype=np.float32).reshape(-1)
        lc = np.asarray(lcoords, dtype=np.int64).reshape(len(vals), nlev)
        if nlev == 0:
            return cls(fmt, [], [], np.array([vals.sum(dtype=np.float32) if len(vals) else 0.0]))
        sizes = fmt.level_sizes()
        bad = (lc < 0) | (lc >= np.array(sizes))
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(f"entry with level coordinates {lc[row].tolist()} outside level sizes {sizes}")
        if len(vals) and not ordered:
            order = np.lexsort(lc.T[::-1])
            lc, vals = lc[order], vals[order]
            first = np.r_[True, np.any(lc[1:] != lc[:-1], axis=1)]
            if not first.all():
                starts = np.flatnonzero(first)
                vals = np.add.reduceat(vals, starts, dtype=np.float32)
                lc = lc[starts]
        nnz = len(vals)
        node = np.zeros(nnz, dtype=np.int64)
        nodes = 1
        pos: list = [None] * nlev
        crd: list = [None] * nlev
        for l, lv in enumerate(fmt.levels):
            n, c = sizes[l], lc[:, l]
            if lv.format == "dense":
                node, nodes = node * n + c, nodes * n
            elif lv.format == "compressed":
                key = node * n + c
                new = np.r_[True, key[1:] != key[:-1]] if nnz else np.zeros(0, dtype=bool)
                parent = node[new]
                crd[l] = c[new]
                pos[l] = np.searchsorted(parent, np.arange(nodes + 1), side="left")
                node, nodes = np.cumsum(new) - 1, len(crd[l])
            elif lv.format == "compressed_nonunique":
                crd[l] = c.copy()
                pos[l] = np.searchsorted(node, np.arange(nodes + 1), side="left")
                node, nodes = np.arange(nnz), nnz
            else:
                crd[l] = c.copy()
        out = np.zeros(nodes, dtype=np.float32)
        out[node] = vals
        return cls(fmt, pos, crd, out)

    @classmethod
    def from_coords(cls, coords, vals, fmt: TensorFormat) -> "FiberTree":
        """Builds a tree from entries given as tensor coordinates ``(nnz, ndim)`` and values."""
        vals = np.asarray(vals, dtype=np.float32).reshape(-1)
        coords = np.asarray(coords, dtype=np.int64).reshape(len(vals), fmt.ndim)
        lc = np.stack([lv.level_coords(coords[:, lv.dim]) for lv in fmt.levels], axis=1) \
            if fmt.levels else np.zeros((len(vals), 0), dtype=np.int64)
        return cls.from_level_coords(fmt, lc, vals)

    @classmethod
    def from_dense(cls, array, fmt: TensorFormat | None = None) -> "FiberTree":
        """Stores the nonzeros of a dense array (all entries for dense-only formats)."""
        arr = np.asarray(array, dtype=np.float32)
        fmt = fmt or TensorFormat.dense(arr.shape)
        if tuple(arr.shape) != fmt.shape:
            raise ValueError(f"array of shape {arr.shape} does not match format shape {fmt.shape}")
        if arr.ndim == 0:
            return cls(fmt, [], [], arr.reshape(1))
        if all(lv.format == "dense" and lv.kind == "id" for lv in fmt.levels):
            # every entry stored, in level order: the array transposed, no coordinates
            perm = [lv.dim for lv in fmt.levels]
            return cls(fmt, [], [], np.ascontiguousarray(arr.transpose(perm)).reshape(-1))
        idx = np.nonzero(arr)
        if [lv.dim for lv in fmt.levels] == list(range(arr.ndim)) and all(
                lv.kind == "id" for lv in fmt.levels):
            # levels in dimension order: nonzero's row-major entries are already sorted
            return cls.from_level_coords(fmt, np.stack(idx, axis=1), arr[idx], ordered=True)
        return cls.from_coords(np.stack(idx, axis=1), arr[idx], fmt)

    def convert(self, fmt: TensorFormat) -> "FiberTree":
        """The tensor stored in ``fmt``: the one format conversion (host casts, bindings).

        As ``sparse_tensor.convert`` does, a conversion keeps the entries the source stores,
        explicit zeros included, so the work a kernel does on them does not depend on how the
        host moved them; only a source with no sparse level (all levels dense), whose zeros
        are fill rather than stored entries, keeps just its nonzeros. The same tree is
        returned when it already is in ``fmt``.
        """
        if fmt == self.fmt:
            return self
        if fmt.shape != self.fmt.shape:
            raise ValueError(f"cannot convert shape {self.fmt.shape} to {fmt.shape}")
        array = self._dense_array()
        if array is not None:   # its nonzeros, found in the array: no coordinate per entry
            return FiberTree.from_dense(array, fmt)
        coords, vals = self.entries()
        if all(lv.format == "dense" for lv in self.fmt.levels):
            stored = vals != 0
            coords, vals = coords[stored], vals[stored]
        return FiberTree.from_coords(coords, vals, fmt)

    def _dense_array(self) -> np.ndarray | None:
        """The tensor as an array view of the values when every level is dense, one per
        dimension in any order (the values are then the array in level order); else None."""
        levels = self.fmt.levels
        perm = [lv.dim for lv in levels]
        if not levels or sorted(perm) != list(range(self.fmt.ndim)) or not all(
                lv.format == "dense" and lv.kind == "id" for lv in levels):
            return None
        stored = np.asarray(self.vals, dtype=np.float32)
        return stored.reshape([self.fmt.shape[d] for d in perm]).transpose(np.argsort(perm))

    @classmethod
    def from_torch(cls, t, fmt: TensorFormat | None = None) -> "FiberTree":
        """Converts a torch tensor: its natural format when ``fmt`` is None, else ``fmt``.

        Natural formats: strided -> dense, sparse_csr -> csr, sparse_csc -> csc,
        sparse_coo -> coo (coalesced), sparse_bsr -> bsr with the tensor's block size.
        """
        import torch

        t = t.detach().cpu()
        shape = tuple(t.shape)
        if t.layout == torch.strided:
            return cls.from_dense(t.to(torch.float32).numpy(), fmt)
        if t.layout == torch.sparse_coo:
            t = t.coalesce()
            if t.dense_dim() != 0:
                raise ValueError("hybrid sparse COO tensors (dense_dim > 0) are not supported")
            tree = cls.from_coords(t.indices().numpy().T, t.values().to(torch.float32).numpy(),
                                   TensorFormat.coo(shape))
        elif t.layout == torch.sparse_csr:
            _need_2d(shape, "torch sparse_csr")
            tree = cls(TensorFormat.csr(shape), [None, t.crow_indices().numpy()],
                       [None, t.col_indices().numpy()], t.values().to(torch.float32).numpy())
        elif t.layout == torch.sparse_csc:
            _need_2d(shape, "torch sparse_csc")
            tree = cls(TensorFormat.csc(shape), [None, t.ccol_indices().numpy()],
                       [None, t.row_indices().numpy()], t.values().to(torch.float32).numpy())
        elif t.layout == torch.sparse_bsr:
            _need_2d(shape, "torch sparse_bsr")
            values = t.values().to(torch.float32).numpy()
            bh, bw = values.shape[1:]
            tree = cls(TensorFormat.bsr(shape, (bh, bw)), [None, t.crow_indices().numpy(), None, None],
                       [None, t.col_indices().numpy(), None, None], values.reshape(-1))
        else:
            return cls.from_dense(t.to_dense().to(torch.float32).numpy(), fmt)
        return tree if fmt is None else tree.convert(fmt)

    @classmethod
    def from_scipy(cls, m, fmt: TensorFormat | None = None) -> "FiberTree":
        """Converts a scipy sparse matrix/array (csr, csc, coo, bsr; others via csr) or ndarray."""
        import scipy.sparse as sp

        if not sp.issparse(m):
            return cls.from_dense(np.asarray(m), fmt)
        shape = tuple(m.shape)
        kind = m.format
        if kind not in ("csr", "csc", "coo", "bsr"):
            m, kind = m.tocsr(), "csr"
        m = m.copy()
        m.sum_duplicates()
        if kind == "csr":
            tree = cls(TensorFormat.csr(shape), [None, m.indptr], [None, m.indices], m.data)
        elif kind == "csc":
            tree = cls(TensorFormat.csc(shape), [None, m.indptr], [None, m.indices], m.data)
        elif kind == "coo":
            tree = cls.from_coords(np.stack([m.row, m.col], axis=1), m.data, TensorFormat.coo(shape))
        else:
            bh, bw = m.blocksize
            tree = cls(TensorFormat.bsr(shape, (bh, bw)), [None, m.indptr, None, None],
                       [None, m.indices, None, None], m.data.reshape(-1))
        return tree if fmt is None else tree.convert(fmt)

    # -- export -------------------------------------------------------------------------------

    def level_coords(self) -> np.ndarray:
        """Level coordinates ``(refs of the last level, levels)`` of every stored value."""
        paths = np.zeros((1, 0), dtype=np.int64)
        for l, lv in enumerate(self.fmt.levels):
            if lv.format == "dense":
                n = lv.size(self.fmt.shape)
                refs = np.arange(len(paths) * n)
                parent, c = refs // max(n, 1), refs % max(n, 1)
            elif lv.format == "singleton":
                parent, c = np.arange(len(self.crd[l])), self.crd[l]
            else:
                parent = np.searchsorted(self.pos[l], np.arange(len(self.crd[l])), side="right") - 1
                c = self.crd[l]
            paths = np.column_stack([paths[parent], c]).astype(np.int64)
        return paths

    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """Tensor coordinates ``(n, ndim)`` and values of every stored value."""
        lc = self.level_coords()
        coords = np.zeros((len(lc), self.fmt.ndim), dtype=np.int64)
        for l, lv in enumerate(self.fmt.levels):
            coords[:, lv.dim] += lc[:, l] * lv.block if lv.kind == "div" else lc[:, l]
        return coords, self.vals.copy()

    def to_dense(self) -> np.ndarray:
        """The tensor as a dense float32 array."""
        if not self.fmt.levels:
            return np.array(self.vals[0], dtype=np.float32)
        array = self._dense_array()
        if array is not None:   # the values are the array (row-major: no copy)
            return array if self.fmt.is_row_major_dense() else np.ascontiguousarray(array)
        out = np.zeros(self.fmt.shape, dtype=np.float32)
        coords, vals = self.entries()
        np.add.at(out, tuple(coords.T), vals)
        return out

    def to_torch(self):
        """The tensor as a dense float32 torch tensor."""
        import torch

        return torch.from_numpy(self.to_dense().copy())

    def __repr__(self) -> str:
        return f"FiberTree({self.fmt.describe()}, {len(self.vals)} values)"

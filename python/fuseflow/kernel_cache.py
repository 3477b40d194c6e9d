"""Kernel simulations kept on disk by content, so an identical kernel is simulated once.

Configurations of one model share kernels: GPT-3's partial and full fusion run the same
attention kernels, and its block sizes the same projections; candidate partitions of a
search differ in one group and share the rest. A simulation is a pure function of what the
engine reads, so :class:`KernelCache` keys each result by a hash of exactly that:

- the block graph (every block's kind, channels and attributes, and the outputs' formats; not
  the graph's name nor the blocks' source locations, which only name things in messages),
- every bound input's format, shape and arrays,
- the engine, the architecture (:class:`~fuseflow.sim.arch.Arch`), and
- the simulator's own source (every module of ``fuseflow.sim``), so a changed engine never
  reads an older engine's results.

Chunking settings are left out: they change no result (``fuseflow.sim.engines.run``).

Each result is one pickle file, written to a temporary name and renamed, so processes that
share a folder (a sweep's workers) never read half a file; two that simulate the same kernel
at once both write the same result. A file that cannot be read is a miss (and is replaced).
Traced runs are not cached (a trace is as large as the streams).
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fuseflow.errors import ArgumentError
from fuseflow.sim.arch import Arch

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 << 20
"""Largest pickled result a cache stores by default. What configurations share are GPT-3's
projections and attention (at most 50 MB at the published preset); the GNN intermediates of
ogbl-collab and ogbn-mag (0.2-1 GB each) are never shared, and storing them would fill
gigabytes of disk for nothing."""


@dataclass
class CacheStats:
    """Lookups of one cache object: results read, simulated and stored."""

    hits: int = 0
    misses: int = 0
    stored: int = 0
    too_large: int = 0


class KernelCache:
    """Simulation results under ``folder``, one file per content key (see the module doc)."""

    def __init__(self, folder, max_bytes: int = DEFAULT_MAX_BYTES):
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.stats = CacheStats()

    def key(self, graph, inputs, *, engine: str, arch) -> str:
        """The content key of simulating ``graph`` on ``inputs`` with ``engine`` and ``arch``."""
        h = hashlib.blake2b(digest_size=20)
        h.update(_FINGERPRINT.encode())
        h.update(repr((engine, arch if arch is not None else Arch())).encode())
        _hash_graph(h, graph)
        for tree in inputs:
            _hash_tree(h, tree)
        return h.hexdigest()

    def path(self, key: str) -> Path:
        """Where the result of ``key`` is kept."""
        return self.folder / key[:2] / f"{key}.pkl"

    def get(self, key: str):
        """The stored :class:`~fuseflow.sim.stats.KernelResult` of ``key``, or None."""
        path = self.path(key)
        try:
            with open(path, "rb") as f:
                result = pickle.load(f)
        except FileNotFoundError:
            self.stats.misses += 1
            return None
        except Exception as err:  # noqa: BLE001 - an unreadable entry is simulated again
            log.warning("kernel cache: ignoring unreadable %s (%s: %s)", path,
                        type(err).__name__, err)
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return result

    def put(self, key: str, result) -> bool:
        """Stores ``result`` under ``key`` (unless its pickle exceeds ``max_bytes``); whether
        it was stored."""
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > self.max_bytes:
            self.stats.too_large += 1
            log.info("kernel cache: not storing a %.1f MiB result (limit %.1f MiB)",
                     len(data) / 2**20, self.max_bytes / 2**20)
            return False
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pkl")
        except OSError as err:  # the result stands; only later runs lose it
            log.warning("kernel cache: cannot store in %s (%s)", self.folder, err)
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.stats.stored += 1
        return True


def cache_of(value) -> KernelCache | None:
    """``value`` as a cache: a :class:`KernelCache`, a folder (str or path), or None."""
    if value is None or isinstance(value, KernelCache):
        return value
    if isinstance(value, (str, os.PathLike)):
        return KernelCache(value)
    raise ArgumentError(f"kernel_cache must be a folder, a fuseflow.KernelCache or None, got "
                        f"{type(value).__name__}")


def _hash_graph(h, graph) -> None:
    blocks = [(b.name, b.kind, tuple(b.inputs), tuple(b.outputs), sorted(b.attrs.items()))
              for b in graph.blocks]
    h.update(pickle.dumps((blocks, graph.outputs), protocol=4))


def _hash_tree(h, tree) -> None:
    h.update(repr(tree.fmt).encode())
    for arrays in (tree.pos, tree.crd):
        for a in arrays:
            _hash_array(h, a)
    _hash_array(h, tree.vals)


def _hash_array(h, a) -> None:
    if a is None:
        h.update(b"none")
        return
    a = np.ascontiguousarray(a)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(memoryview(a).cast("B"))


def _fingerprint_sources() -> str:
    """A hash of every source file of ``fuseflow.sim`` (and of this module)."""
    import fuseflow.sim

    h = hashlib.blake2b(digest_size=16)
    files = sorted(p for root in fuseflow.sim.__path__ for p in Path(root).rglob("*.py"))
    for path in [*files, Path(__file__)]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


_FINGERPRINT = _fingerprint_sources()
"""Read when this module is imported, beside the engines (``fuseflow.runtime`` imports both):
a process that runs for hours keys its results by the code it loaded, not by files edited
on disk since."""

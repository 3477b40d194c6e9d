"""What the cost model predicts: per block, per kernel and per model.

Counters mirror :class:`fuseflow.sim.stats.BlockStats` field for field (``steps``, ``ops``,
``crd_reads`` ... ``val_writes``, ``tokens_out`` per output channel, ``cycles`` = the block's
final clock) so predictions and simulator statistics compare by name; they are floats
(expectations), not integers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fuseflow.sim.stats import COUNTERS, WORD_BYTES, Traffic

if TYPE_CHECKING:
    from fuseflow.explore.stats import TensorStats


@dataclass
class BlockPrediction(Traffic):
    """One block: steps, tokens per output channel, operations, memory traffic and clocks."""

    name: str
    kind: str
    steps: float = 0.0
    tokens_out: dict[str, float] = field(default_factory=dict)
    ops: float = 0.0
    crd_reads: float = 0.0
    ref_reads: float = 0.0
    val_reads: float = 0.0
    crd_writes: float = 0.0
    ref_writes: float = 0.0
    val_writes: float = 0.0
    start: float = 0.0
    """Clock of the block's first step (its first input's arrival)."""
    cycles: float = 0.0
    """The block's final clock."""
    burst: float = 1.0
    """Tokens each output sends at its last send time (a sparse accumulator's flush)."""


class KernelPrediction:
    """One kernel (``sam.graph``): its blocks (by the loaded block name), the statistics of
    its inputs and of its results, and totals.

    The fast path (:mod:`~fuseflow.explore.compiled`) gives ``totals`` only; ``blocks`` and
    ``critical_path`` are then rebuilt by ``detail(inputs)`` (the reference walk) on first
    access.
    """

    _blocks = _critical_path = _dict = None     # until set (:meth:`compiled` leaves them)

    def __init__(self, name: str, blocks: dict[str, BlockPrediction] | None,
                 inputs: list["TensorStats"], outputs: list["TensorStats"],
                 critical_path: list[str] | None = None, *, totals: dict | None = None,
                 detail=None, values: tuple | None = None, names: tuple | None = None):
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self._blocks = blocks
        self._critical_path = critical_path
        self._dict = totals
        self._values = values           # the totals as values of ``names`` (made a dict on use)
        self._names = names
        self._detail = detail

    @classmethod
    def compiled(cls, name: str, inputs: list["TensorStats"], values: tuple, names: tuple,
                 detail) -> "KernelPrediction":
        """The fast path's prediction: totals ``values`` of ``names`` (its last value the
        results' statistics), blocks from ``detail(inputs)`` (the same as ``__init__`` with
        ``blocks=None``, without the keyword handling: a small graph's prediction builds
        one per kernel; ``detail`` is one function per kernel, not one per prediction)."""
        self = object.__new__(cls)          # _blocks, _critical_path, _dict: None (class)
        self.name, self.inputs, self.outputs = name, inputs, values[-1]
        self._values, self._names, self._detail = values, names, detail
        return self

    @property
    def _totals(self) -> dict | None:
        """The totals of the fast path (None for the reference walk)."""
        if self._dict is None and self._values is not None:
            self._dict = dict(zip(self._names, self._values))
        return self._dict

    def _materialize(self) -> None:
        if self._blocks is None:
            full = self._detail(self.inputs)
            self._blocks, self._critical_path = full.blocks, full.critical_path

    @property
    def blocks(self) -> dict[str, BlockPrediction]:
        """Per block predictions, keyed by the loaded block name."""
        self._materialize()
        return self._blocks

    @property
    def critical_path(self) -> list[str]:
        """Block names from the root to the block that finishes last, each one's latest
        input."""
        if self._critical_path is None:
            self._materialize()
        return self._critical_path or []

    @critical_path.setter
    def critical_path(self, path: list[str]) -> None:
        self._critical_path = path

    @property
    def cycles(self) -> float:
        """The latest block clock."""
        if self._totals is not None:
            return self._totals["cycles"]
        return max((b.cycles for b in self.blocks.values()), default=0.0)

    def total(self, counter: str) -> float:
        """Sum of ``counter`` (one of :data:`COUNTERS`, ``steps``, ``bytes_read``,
        ``bytes_written``) over the blocks."""
        t = self._totals
        if t is not None:
            if counter == "bytes_read":
                return WORD_BYTES * (t["crd_reads"] + t["ref_reads"] + t["val_reads"])
            if counter == "bytes_written":
                return WORD_BYTES * (t["crd_writes"] + t["ref_writes"] + t["val_writes"])
            if counter in t:
                return t[counter]
        return sum(getattr(b, counter) for b in self.blocks.values())

    @property
    def tokens(self) -> float:
        """Tokens sent on every channel."""
        if self._totals is not None:
            return self._totals["tokens"]
        return sum(sum(b.tokens_out.values()) for b in self.blocks.values())

    @property
    def buffer_bytes(self) -> float:
        """On-chip state of the kernel: each sparse accumulator holds one reduced fiber's
        keys (its flush: coordinates of every level and a value per key)."""
        if self._totals is not None and "buffer_bytes" in self._totals:
            return self._totals["buffer_bytes"]
        total = 0.0
        for block in self.blocks.values():
            if block.kind == "spacc":
                levels = max(len(block.tokens_out) - 1, 1)
                total += block.burst * WORD_BYTES * (levels + 1)
        return total

    def summary(self) -> dict[str, Any]:
        """Totals, JSON-ready, named as in :meth:`fuseflow.sim.stats.KernelResult.summary`."""
        out = {"cycles": self.cycles, "tokens": self.tokens}
        out.update({k: self.total(k) for k in COUNTERS})
        out.update(bytes_read=self.total("bytes_read"), bytes_written=self.total("bytes_written"))
        out["bytes_moved"] = out["bytes_read"] + out["bytes_written"]
        return out


@dataclass
class Prediction:
    """A whole model: its kernels in execution order; totals add over kernels (kernels do
    not overlap, as in the simulator)."""

    kernels: list[KernelPrediction]

    @property
    def cycles(self) -> float:
        return sum(k.cycles for k in self.kernels)

    def total(self, counter: str) -> float:
        """Sum of a counter over every block of every kernel."""
        return sum(k.total(counter) for k in self.kernels)

    def summary(self) -> dict[str, Any]:
        """Model totals and per-kernel summaries, JSON-ready."""
        totals: dict[str, float] = {}
        for k in self.kernels:
            for key, value in k.summary().items():
                totals[key] = totals.get(key, 0.0) + value
        return {**totals, "kernels": {k.name: k.summary() for k in self.kernels}}

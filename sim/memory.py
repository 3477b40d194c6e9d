"""Off-chip memory model: the bytes a kernel moves to and from DRAM, and what they cost.

A kernel reads the parts of its input tensors that its blocks use (the ``crd``/``pos`` arrays
of every scanned level, the values if an array block loads them) and writes every result in
its declared format. Each stored array is moved once (ideal on-chip reuse); dense levels store
nothing. With ``B_r`` bytes read, ``B_w`` written, bandwidth ``W`` bytes per cycle and latency
``L`` (``docs/memory.md``):

    T_transfer = ceil((B_r + B_w) / W)
    T_kernel   = L·[B_r > 0] + max(T_compute, T_transfer) + L·[B_w > 0]     (overlap=True)
    T_kernel   = L·[B_r > 0] + ceil(B_r / W) + T_compute + L·[B_w > 0] + ceil(B_w / W)   (overlap=False)

``T_compute`` is the simulated cycle count (the maximum of the blocks' final clocks). The
functions here are pure: engines attach the result to ``KernelResult.memory`` when
``Arch.memory`` is set; the default (None) changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fuseflow.sim.stats import WORD_BYTES

if TYPE_CHECKING:
    from fuseflow.sim.formats import FiberTree
    from fuseflow.sim.graph import BlockGraph


@dataclass(frozen=True)
class MemoryModel:
    """Off-chip bandwidth and latency (an ``Arch`` option)."""

    bandwidth_bytes_per_cycle: float = 64.0
    """Bytes moved per cycle, reads and writes sharing one channel (> 0)."""
    latency_cycles: int = 100
    """Cycles before the first byte read arrives, and after the last byte written leaves (>= 0)."""
    overlap: bool = True
    """True: transfers stream while the kernel computes (the kernel takes the longer of the two);
    False: load everything, compute, then store (transfers add up)."""
    index_bytes: int = WORD_BYTES
    """Bytes per stored coordinate or position (int32)."""
    value_bytes: int = WORD_BYTES
    """Bytes per stored value (float32)."""

    def __post_init__(self):
        if not self.bandwidth_bytes_per_cycle > 0:
            raise ValueError(f"bandwidth_bytes_per_cycle must be > 0, got {self.bandwidth_bytes_per_cycle!r}")
        if self.latency_cycles < 0:
            raise ValueError(f"latency_cycles must be >= 0, got {self.latency_cycles!r}")
        if self.index_bytes < 1 or self.value_bytes < 1:
            raise ValueError("index_bytes and value_bytes must be >= 1")


@dataclass(frozen=True)
class TensorTraffic:
    """Bytes of one tensor moved off chip."""

    tensor: str
    """``input <i>`` or ``result <r>``."""
    format: str
    """The tensor's format (``TensorFormat.describe()``)."""
    crd_bytes: int
    """Coordinates of compressed and singleton levels."""
    pos_bytes: int
    """Segment (``pos``) arrays of compressed levels."""
    val_bytes: int
    """Values."""

    @property
    def total(self) -> int:
        return self.crd_bytes + self.pos_bytes + self.val_bytes

    def to_dict(self) -> dict[str, Any]:
        return {"tensor": self.tensor, "format": self.format, "crd_bytes": self.crd_bytes,
                "pos_bytes": self.pos_bytes, "val_bytes": self.val_bytes, "bytes": self.total}


@dataclass(frozen=True)
class MemoryStats:
    """A kernel's off-chip traffic and cycle cost."""

    reads: tuple[TensorTraffic, ...]
    writes: tuple[TensorTraffic, ...]
    compute_cycles: int
    """Simulated cycles without memory (``KernelResult.cycles``)."""
    transfer_cycles: int
    """``ceil((B_r + B_w) / bandwidth)``."""
    total_cycles: int
    """The kernel's cycles with the memory model."""

    @property
    def bytes_read(self) -> int:
        return sum(t.total for t in self.reads)

    @property
    def bytes_written(self) -> int:
        return sum(t.total for t in self.writes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready totals and the per-tensor breakdown."""
        return {"bytes_read": self.bytes_read, "bytes_written": self.bytes_written,
                "compute_cycles": self.compute_cycles, "transfer_cycles": self.transfer_cycles,
                "total_cycles": self.total_cycles, "reads": [t.to_dict() for t in self.reads],
                "writes": [t.to_dict() for t in self.writes]}


def tensor_traffic(tree: "FiberTree", name: str, model: MemoryModel, levels=None, values: bool = True) -> TensorTraffic:
    """Bytes of ``tree``'s stored arrays: the levels in ``levels`` (all if None), values if ``values``."""
    crd = pos = 0
    for lvl, spec in enumerate(tree.fmt.levels):
        if levels is not None and lvl not in levels:
            continue
        if tree.crd[lvl] is not None:
            crd += len(tree.crd[lvl])
        if tree.pos[lvl] is not None:
            pos += len(tree.pos[lvl])
    return TensorTraffic(name, tree.fmt.describe(), crd * model.index_bytes, pos * model.index_bytes,
                         len(tree.vals) * model.value_bytes if values else 0)


def kernel_traffic(graph: "BlockGraph", inputs: list["FiberTree"], outputs: list["FiberTree"],
                   model: MemoryModel) -> tuple[tuple[TensorTraffic, ...], tuple[TensorTraffic, ...]]:
    """``(reads, writes)``: what ``graph`` reads of each input it uses and every result it writes."""
    scanned: dict[int, set[int]] = {}
    loaded: set[int] = set()
    for b in graph.blocks:
        t = b.attrs.get("tensor")
        if not isinstance(t, int):
            continue
        if b.kind == "scan":
            scanned.setdefault(t, set()).add(int(b.attrs["level"]))
        elif b.kind == "array":
            loaded.add(t)
    reads = tuple(tensor_traffic(inputs[i], f"input {i}", model, scanned.get(i, set()), i in loaded)
                  for i in sorted(set(scanned) | loaded) if i < len(inputs))
    writes = tuple(tensor_traffic(tree, f"result {r}", model) for r, tree in enumerate(outputs))
    return reads, writes


def kernel_cycles(model: MemoryModel, compute_cycles: int, bytes_read: int, bytes_written: int) -> tuple[int, int]:
    """``(transfer cycles, total cycles)`` of a kernel under ``model`` (the module docstring's equations)."""
    bw = model.bandwidth_bytes_per_cycle
    lat = model.latency_cycles * (bytes_read > 0) + model.latency_cycles * (bytes_written > 0)
    transfer = math.ceil((bytes_read + bytes_written) / bw)
    if model.overlap:
        return transfer, lat + max(compute_cycles, transfer)
    return transfer, lat + math.ceil(bytes_read / bw) + compute_cycles + math.ceil(bytes_written / bw)


def account(model: MemoryModel, graph: "BlockGraph", inputs: list["FiberTree"], outputs: list["FiberTree"],
            compute_cycles: int) -> MemoryStats:
    """The memory statistics of one simulated kernel."""
    reads, writes = kernel_traffic(graph, inputs, outputs, model)
    transfer, total = kernel_cycles(model, compute_cycles, sum(t.total for t in reads), sum(t.total for t in writes))
    return MemoryStats(reads, writes, compute_cycles, transfer, total)

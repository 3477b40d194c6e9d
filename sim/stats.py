"""Simulation results and per-block statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuseflow.sim.formats import FiberTree
    from fuseflow.sim.memory import MemoryStats

WORD_BYTES = 4
"""Bytes per stored element: coordinates and segment entries are int32, values float32."""

COUNTERS = ("ops", "crd_reads", "ref_reads", "val_reads", "crd_writes", "ref_writes", "val_writes")
"""A block's arithmetic and memory-traffic counters (fields of :class:`BlockStats`)."""


class Traffic:
    """Bytes read and written from a block's counters (``crd_reads`` ... ``val_writes``): the
    simulator's :class:`BlockStats` and the cost model's prediction of them."""

    @property
    def bytes_read(self):
        return WORD_BYTES * (self.crd_reads + self.ref_reads + self.val_reads)

    @property
    def bytes_written(self):
        return WORD_BYTES * (self.crd_writes + self.ref_writes + self.val_writes)

    @property
    def bytes_moved(self):
        return self.bytes_read + self.bytes_written


@dataclass
class BlockStats(Traffic):
    """What one block did: its final clock, tokens per channel, arithmetic and memory traffic."""

    name: str
    kind: str
    cycles: int = 0
    """The block's final local clock."""
    steps: int = 0
    """Steps taken (each advances the clock by the block's initiation interval)."""
    tokens_in: dict[str, int] = field(default_factory=dict)
    """Tokens dequeued, per input channel."""
    tokens_out: dict[str, int] = field(default_factory=dict)
    """Tokens enqueued, per output channel."""
    ops: int = 0
    """Arithmetic operations: ALU results, reducer and accumulator additions (or max)."""
    crd_reads: int = 0
    """Coordinates read from a tensor's ``crd`` arrays (scanners)."""
    ref_reads: int = 0
    """Segment (``pos``) entries read (scanners of compressed levels)."""
    val_reads: int = 0
    """Values read (arrays)."""
    crd_writes: int = 0
    """Coordinates written (level writers)."""
    ref_writes: int = 0
    """Segment entries written (level writers, one per fiber)."""
    val_writes: int = 0
    """Values written (value writers)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field and the byte totals (Python integers, whatever
        integer type an engine counted in)."""
        d = {k: getattr(self, k) for k in ("name", "kind")}
        d.update({k: int(getattr(self, k)) for k in ("cycles", "steps", *COUNTERS)})
        d.update(tokens_in={c: int(n) for c, n in self.tokens_in.items()},
                 tokens_out={c: int(n) for c, n in self.tokens_out.items()},
                 bytes_read=int(self.bytes_read), bytes_written=int(self.bytes_written))
        return d


@dataclass
class KernelResult:
    """Outputs, cycle count and statistics of one simulated kernel."""

    outputs: list["FiberTree"]
    """One tree per graph result, in the declared output format."""
    cycles: int
    """Total cycles: the maximum over blocks of their final clock."""
    blocks: dict[str, BlockStats]
    """Per-block statistics by block name."""
    trace: dict[str, list[tuple[Any, int]]] | None = None
    """With ``trace=True``: every channel's ``(token, stamp)`` sequence."""
    memory: "MemoryStats | None" = None
    """With ``Arch(memory=...)``: off-chip bytes read and written per tensor, and the cycle cost."""

    @property
    def total_cycles(self) -> int:
        """Cycles including off-chip transfers (``cycles`` without a memory model)."""
        return self.cycles if self.memory is None else self.memory.total_cycles

    def summary(self) -> dict[str, Any]:
        """Totals over blocks, JSON-ready."""
        totals = {k: int(sum(getattr(b, k) for b in self.blocks.values())) for k in COUNTERS}
        tokens = int(sum(sum(b.tokens_out.values()) for b in self.blocks.values()))
        reads = totals["crd_reads"] + totals["ref_reads"] + totals["val_reads"]
        writes = totals["crd_writes"] + totals["ref_writes"] + totals["val_writes"]
        out = {"cycles": int(self.cycles), "blocks": len(self.blocks), "tokens": tokens, **totals,
               "reads": reads, "writes": writes, "bytes_read": WORD_BYTES * reads,
               "bytes_written": WORD_BYTES * writes, "bytes_moved": WORD_BYTES * (reads + writes)}
        if self.memory is not None:
            out.update(total_cycles=self.total_cycles, dram_bytes_read=self.memory.bytes_read,
                       dram_bytes_written=self.memory.bytes_written,
                       dram_transfer_cycles=self.memory.transfer_cycles)
        return out

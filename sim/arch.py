"""The simulated architecture's timing configuration.

Defaults reproduce the published simulator's scalar mode without memory model (see
``docs/timing.md``): every block emits with latency 1 and advances its clock by an initiation
interval of 1 per step, except broadcast (interval 0); channels are unbounded FIFOs; no
off-chip memory cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from fuseflow.sim.graph import BLOCK_KINDS
from fuseflow.sim.memory import MemoryModel

DEFAULT_BLOCK_COSTS: Mapping[str, tuple[int, int]] = {"broadcast": (1, 0)}
"""Per-kind ``(latency, initiation interval)`` that differ from the uniform defaults."""


@dataclass(frozen=True)
class BlockCost:
    """Timing of one block kind."""

    latency: int
    """Cycles from the step that emits a token to the token's stamp (>= 1)."""
    initiation_interval: int
    """Cycles a block's clock advances per step (>= 0)."""


@dataclass(frozen=True)
class Arch:
    """Timing parameters of the simulated machine."""

    fifo_depth: int | None = None
    """Depth of every channel; None = unbounded (the published configuration, depth 10,240,000,
    never applies backpressure). With depth d, element k of a channel cannot be enqueued before
    element k-d was dequeued, plus one cycle."""
    latency: int = 1
    """Default latency: a token sent at local time t is stamped t + latency."""
    initiation_interval: int = 1
    """Default initiation interval: cycles a block's clock advances after each step."""
    block_costs: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Per-kind ``(latency, initiation interval)`` overrides, keyed by block kind
    (``fuseflow.sim.graph.BLOCK_KINDS``), applied over ``DEFAULT_BLOCK_COSTS``; kinds not
    listed use ``latency`` and ``initiation_interval``. Stored as a sorted tuple of pairs."""
    memory: MemoryModel | None = None
    """Off-chip memory model (``fuseflow.sim.memory``, ``docs/memory.md``); None = no memory
    cost (the published configuration). When set, every kernel result carries its DRAM traffic
    and ``total_cycles``; ``cycles`` stays the simulated compute time."""

    def __post_init__(self):
        if self.fifo_depth is not None and (not isinstance(self.fifo_depth, int) or self.fifo_depth < 1):
            raise ValueError(f"fifo_depth must be None or an int >= 1, got {self.fifo_depth!r}")
        if self.latency < 1:
            raise ValueError(f"latency must be >= 1, got {self.latency}")
        if self.memory is not None and not isinstance(self.memory, MemoryModel):
            raise ValueError(f"memory must be None or a MemoryModel, got {self.memory!r}")
        if self.initiation_interval < 0:
            raise ValueError(f"initiation_interval must be >= 0, got {self.initiation_interval}")
        costs = {}
        for kind, (lat, ii) in {**DEFAULT_BLOCK_COSTS, **dict(self.block_costs)}.items():
            if kind not in BLOCK_KINDS:
                raise ValueError(f"unknown block kind '{kind}' in block_costs; valid kinds: {', '.join(BLOCK_KINDS)}")
            if lat < 1 or ii < 0:
                raise ValueError(f"block_costs['{kind}'] needs latency >= 1 and interval >= 0, got {(lat, ii)}")
            costs[kind] = (int(lat), int(ii))
        # A sorted tuple keeps the dataclass hashable and its repr stable.
        object.__setattr__(self, "block_costs", tuple(sorted(costs.items())))

    def cost(self, kind: str) -> BlockCost:
        """The latency and initiation interval of blocks of ``kind``."""
        if kind not in BLOCK_KINDS:
            raise ValueError(f"unknown block kind '{kind}'; valid kinds: {', '.join(BLOCK_KINDS)}")
        lat, ii = dict(self.block_costs).get(kind, (self.latency, self.initiation_interval))
        return BlockCost(lat, ii)

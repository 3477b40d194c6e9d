"""The simulated architecture's timing configuration.

Defaults reproduce the published simulator's scalar mode without memory model (see
``docs/timing.md``): every block emits with latency 1 and advances its clock by an initiation
interval of 1 per step, except broadcast (interval 0); channels are unbounded FIFOs; no
off-chip memory cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from fuseflow.errors import ArgumentError, check_int
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
class TileCosts:
    """Timing of blocks computing on ``N x N`` tiles (sparsity blocking: values are dense
    tiles; ``docs/timing.md``). ``N`` is a block's largest tile dimension and ``E`` the
    elements of its result tile (``N**2`` for square tiles). A tile block's latency replaces
    its kind's scalar one; blocks that only move tiles (scanners, repeaters, joiners,
    broadcasts, forks, joins, writers) keep their scalar costs."""

    load_latency_per_element: int = 1
    """Array (value load) latency per element: ``N**2`` cycles for a tile."""
    elementwise_latency_per_element: int = 1
    """ALU on tiles element by element (add, sub, mul, exp, ...): latency per element."""
    elementwise_interval: int = 1
    """ALU element by element: initiation interval."""
    product_latency_per_dim: int = 2
    """Tile product (an ALU summing axes, ``ik,kj->ij``): latency ``2N - 1`` by default, i.e.
    ``product_latency_per_dim * N + product_latency_offset``."""
    product_latency_offset: int = -1
    """See ``product_latency_per_dim``."""
    product_interval_per_dim: int = 1
    """Tile product: initiation interval ``N`` (per dimension)."""
    reduce_latency_per_element: int = 1
    """Reducer and sparse accumulator on tiles: value latency per element (``N**2``)."""

    def __post_init__(self):
        for name in ("load_latency_per_element", "elementwise_latency_per_element",
                     "product_latency_per_dim", "reduce_latency_per_element"):
            check_int(getattr(self, name), f"tile costs {name}", 0)
        check_int(self.elementwise_interval, "tile costs elementwise_interval", 0)
        check_int(self.product_interval_per_dim, "tile costs product_interval_per_dim", 0)
        if not isinstance(self.product_latency_offset, int):
            raise ArgumentError("tile costs product_latency_offset must be an int, got "
                                f"{self.product_latency_offset!r}")

    def cost(self, kind: str, attrs: Mapping) -> tuple[int, int] | None:
        """``(latency, interval)`` of a block of ``kind`` with ``attrs`` on tiles (the loader's
        ``tiles``: operand and result tile shapes), or None if it keeps its scalar costs."""
        ins, outs = attrs.get("tiles", ((), ()))
        shapes = [t for t in tuple(ins) + tuple(outs) if t]
        if not shapes or kind not in ("array", "alu", "reduce", "spacc"):
            return None
        n = max(max(t) for t in shapes)
        out = next((t for t in reversed(tuple(outs)) if t), shapes[-1])
        elements = 1
        for d in out:
            elements *= d
        if kind == "array":
            return max(1, self.load_latency_per_element * elements), None
        if kind in ("reduce", "spacc"):
            return max(1, self.reduce_latency_per_element * elements), None
        spec = attrs.get("tile")
        if spec and _sums_axes(spec):
            return (max(1, self.product_latency_per_dim * n + self.product_latency_offset),
                    self.product_interval_per_dim * n)
        return max(1, self.elementwise_latency_per_element * elements), self.elementwise_interval


def _sums_axes(spec: str) -> bool:
    lhs, result = spec.split("->")
    return bool(set(lhs.replace(",", "")) - set(result))


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
    lanes: int | None = None
    """Physical lanes per fork; None = as many as the graph's forks deal to. A fork of more
    lanes runs them folded round robin onto this many (``fuseflow.sim.lanes``: virtual lanes
    ``p, p + lanes, ...`` one after the other on lane ``p``, the same as a fork of ``lanes``)."""
    tile: TileCosts = field(default_factory=TileCosts)
    """Costs of blocks computing on tiles (sparsity blocking; :class:`TileCosts`)."""
    memory: MemoryModel | None = None
    """Off-chip memory model (``fuseflow.sim.memory``, ``docs/memory.md``); None = no memory
    cost (the published configuration). When set, every kernel result carries its DRAM traffic
    and ``total_cycles``; ``cycles`` stays the simulated compute time."""

    def __post_init__(self):
        if self.fifo_depth is not None:
            check_int(self.fifo_depth, "fifo_depth (None: unbounded)", 1)
        check_int(self.latency, "latency", 1)
        check_int(self.initiation_interval, "initiation_interval", 0)
        if self.lanes is not None:
            check_int(self.lanes, "lanes (None: unlimited)", 1)
        if not isinstance(self.tile, TileCosts):
            raise ArgumentError(f"tile must be a TileCosts, got {self.tile!r}")
        if self.memory is not None and not isinstance(self.memory, MemoryModel):
            raise ArgumentError(f"memory must be None or a MemoryModel, got {self.memory!r}")
        if not isinstance(self.block_costs, (Mapping, tuple, list)):
            raise ArgumentError("block_costs must map block kinds to (latency, interval), "
                                f"got {self.block_costs!r}")
        costs = {}
        for kind, cost in {**DEFAULT_BLOCK_COSTS, **dict(self.block_costs)}.items():
            if kind not in BLOCK_KINDS:
                raise ArgumentError(f"unknown block kind '{kind}' in block_costs; valid "
                                    f"kinds: {', '.join(BLOCK_KINDS)}")
            if not isinstance(cost, (tuple, list)) or len(cost) != 2:
                raise ArgumentError(f"block_costs['{kind}'] must be a pair (latency, "
                                    f"initiation interval), got {cost!r}")
            costs[kind] = (check_int(cost[0], f"block_costs['{kind}'] latency", 1),
                           check_int(cost[1], f"block_costs['{kind}'] interval", 0))
        # A sorted tuple keeps the dataclass hashable and its repr stable.
        object.__setattr__(self, "block_costs", tuple(sorted(costs.items())))

    @classmethod
    def of(cls, value) -> "Arch":
        """``value`` if it is an :class:`Arch`, the default for None; else an ArgumentError."""
        if value is None:
            return cls()
        if not isinstance(value, Arch):
            hint = " (build one with fuseflow.Arch(**fields))" if isinstance(value, Mapping) else ""
            raise ArgumentError(f"arch must be a fuseflow.Arch or None{hint}, got "
                                f"{type(value).__name__}")
        return value

    def cost(self, kind: str) -> BlockCost:
        """The latency and initiation interval of blocks of ``kind``."""
        if kind not in BLOCK_KINDS:
            raise ArgumentError(f"unknown block kind '{kind}'; valid kinds: "
                                f"{', '.join(BLOCK_KINDS)}")
        lat, ii = dict(self.block_costs).get(kind, (self.latency, self.initiation_interval))
        return BlockCost(lat, ii)

    def block_cost(self, kind: str, attrs: Mapping) -> BlockCost:
        """The latency and interval of one block: its kind's (:meth:`cost`), or on tiles the
        :class:`TileCosts` ones (an interval the tile costs leave open is the kind's)."""
        base = self.cost(kind)
        tiled = self.tile.cost(kind, attrs)
        if tiled is None:
            return base
        return BlockCost(tiled[0], base.initiation_interval if tiled[1] is None else tiled[1])

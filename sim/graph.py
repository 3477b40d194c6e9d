"""The block graph: the simulator's plain-data view of one ``sam.graph``.

Engines run a :class:`BlockGraph`; they never see MLIR. The loader
(:mod:`fuseflow.sim.loader`) builds one from a ``sam.graph`` op, giving every stream a
channel with exactly one producer and at most one consumer: an SSA stream with several
uses becomes a ``broadcast`` block, and a result nobody uses is a channel with no consumer
(its tokens are produced, counted, and dropped).

Block kinds are the ``sam`` primitives of :data:`fuseflow.dialects.primitives.PRIMITIVES`
(``docs/dialects.md`` documents their ports and attributes) plus ``broadcast`` (x -> x*n).
``attrs`` holds the primitive's declared attributes as plain values (an absent optional one
takes its default) and what the loader derives for the simulator:

============  ==============================================================================
kind          derived attrs
============  ==============================================================================
scan          ``tensor`` (input index, or None for a dense range), ``format`` ('dense' |
              'compressed' | 'compressed_nonunique' | 'singleton'), ``size`` (coordinates of
              a dense level)
locate        ``tensor``, ``format``, ``size``
array         ``tensor``
intersect     ``ref_groups``: streams travelling with each coordinate input, references then
union         values (the IR's ``ref_groups[i] + val_groups[i]``), ports reordered to match
fork, join    ``lanes``
============  ==============================================================================

Notes on the simulator's reading of these (``docs/timing.md`` has the full semantics): a scan
with a tensor takes its level format from the bound tensor (``format`` is checked against it);
the ``ref`` input of ``locate`` carries one parent reference per fiber of its ``crd`` input;
``spacc`` inputs are ``crds[0..n-1]`` outer to inner, then the values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fuseflow.dialects.primitives import PRIMITIVES

if TYPE_CHECKING:
    from fuseflow.sim.formats import TensorFormat

BLOCK_KINDS: tuple[str, ...] = tuple(p.kind for p in PRIMITIVES) + ("broadcast",)
"""Every block kind: one per primitive, and broadcast."""


@dataclass(frozen=True)
class Block:
    """One streaming primitive instance."""

    name: str
    kind: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    loc: str = ""

    def __post_init__(self):
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"unknown block kind '{self.kind}'; valid kinds: {', '.join(BLOCK_KINDS)}")


@dataclass
class BlockGraph:
    """A kernel's dataflow graph: blocks, channels, and its outputs' formats."""

    blocks: list[Block]
    outputs: list["TensorFormat"]     # declared format of each graph result (sim.formats)
    name: str = "kernel"

    def producers(self) -> dict[str, Block]:
        """Channel -> the block producing it."""
        return {ch: b for b in self.blocks for ch in b.outputs}

    def consumers(self) -> dict[str, Block]:
        """Channel -> the block consuming it (absent for dropped channels)."""
        return {ch: b for b in self.blocks for ch in b.inputs}

    def validate(self) -> None:
        """Checks one producer per channel, at most one consumer, and no dangling inputs."""
        produced: dict[str, str] = {}
        for b in self.blocks:
            for ch in b.outputs:
                if ch in produced:
                    raise ValueError(f"channel '{ch}' produced by both '{produced[ch]}' and '{b.name}'")
                produced[ch] = b.name
        consumed: dict[str, str] = {}
        for b in self.blocks:
            for ch in b.inputs:
                if ch not in produced:
                    raise ValueError(f"block '{b.name}' reads channel '{ch}' that no block produces")
                if ch in consumed:
                    raise ValueError(f"channel '{ch}' consumed by both '{consumed[ch]}' and '{b.name}'")
                consumed[ch] = b.name

"""The storage-level model: one level of a tensor's storage, shared by compiler and simulator.

A tensor is stored level by level (``shared/reference/sam-streams.md``, "Tensors as fiber
trees"). Each level indexes one tensor dimension, directly (``kind='id'``) or through a block
map (``'div'``: ``d // block``, ``'mod'``: ``d % block``; BSR uses one of each per dimension).
:func:`fuseflow.dialects.types.storage_levels` reads these from a ``#sparse_tensor.encoding``
and :class:`fuseflow.sim.formats.TensorFormat` stores tensors in them. Plain data: no MLIR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from fuseflow.errors import check_choice

LEVEL_FORMATS = ("dense", "compressed", "compressed_nonunique", "singleton")
LEVEL_KINDS = ("id", "div", "mod")


@dataclass(frozen=True)
class LevelSpec:
    """One storage level of a tensor format."""

    format: str
    """'dense' | 'compressed' | 'compressed_nonunique' | 'singleton'."""
    dim: int
    """The tensor dimension this level indexes."""
    kind: str = "id"
    """'id': the coordinate is d; 'div': d // block; 'mod': d % block."""
    block: int = 1
    """Block size of 'div'/'mod' levels."""

    def __post_init__(self):
        check_choice(self.format, LEVEL_FORMATS, "level format")
        check_choice(self.kind, LEVEL_KINDS, "level kind")
        if self.dim < 0:
            raise ValueError(f"level dim must be >= 0, got {self.dim}")
        if self.block < 1:
            raise ValueError(f"level block must be >= 1, got {self.block}")

    def size(self, shape: Sequence[int]) -> int:
        """Number of coordinates of this level for a tensor of ``shape``.

        A 'div' level has ``ceil(n / block)`` coordinates: every ``d // block`` for ``d < n``
        (formats that block a dimension require the block to divide it, where it is exact).
        """
        n = shape[self.dim]
        if self.kind == "id":
            return n
        if self.kind == "div":
            return -(-n // self.block)
        return self.block

    def level_coords(self, d):
        """Maps tensor coordinates (an int or numpy array) of this level's dimension to level
        coordinates."""
        if self.kind == "id":
            return d
        if self.kind == "div":
            return d // self.block
        return d % self.block

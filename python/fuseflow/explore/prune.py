"""Pruning before simulation: drop candidate configurations the cost model predicts dominated.

A candidate is dominated when another is predicted faster by more than ``margin`` (the cost
model's cycle error on the applications stays within about 10%, ``docs/costmodel.md``) and
moves no more bytes. Every decision carries its explanation: predicted cycles and bytes, the
recomputation factor (operations over the fewest operations of any candidate: the work fusion
repeats), and the candidate that dominates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from fuseflow.explore.prediction import Prediction

DEFAULT_MARGIN = 0.25
"""How much faster (relative cycles) a dominating candidate must be predicted."""


@dataclass(frozen=True)
class Decision:
    """Whether one candidate is kept for simulation, and why."""

    name: str
    kept: bool
    cycles: float
    """Predicted cycles."""
    bytes_moved: float
    """Predicted bytes read and written."""
    recomputation: float
    """Predicted operations over the fewest operations of any candidate."""
    dominated_by: str | None
    """The candidate predicted faster with no more bytes (None when kept)."""
    reason: str

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def prune(candidates: Mapping[str, Prediction], margin: float = DEFAULT_MARGIN) -> list[Decision]:
    """Decides, for every candidate (name -> prediction), whether to simulate it.

    ``X`` is pruned when some ``Y`` has ``cycles_Y · (1 + margin) < cycles_X`` and
    ``bytes_Y ≤ bytes_X``; the dominating ``Y`` reported is the fastest such one.
    """
    if not candidates:
        raise ValueError("prune needs at least one candidate")
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    summary = {name: (p.cycles, p.total("bytes_read") + p.total("bytes_written"),
                      p.total("ops")) for name, p in candidates.items()}
    fewest_ops = min(ops for _, _, ops in summary.values()) or 1.0
    decisions = []
    for name, (cycles, moved, ops) in summary.items():
        recomputation = ops / fewest_ops
        rivals = [(c, other) for other, (c, b, _) in summary.items()
                  if other != name and c * (1.0 + margin) < cycles and b <= moved]
        facts = (f"predicted {cycles:.4g} cycles, {moved:.4g} bytes, recomputation "
                 f"x{recomputation:.2f}")
        if rivals:
            best_cycles, best = min(rivals)
            reason = (f"pruned: {facts}; '{best}' is predicted {cycles / best_cycles:.2f}x "
                      f"faster with {summary[best][1]:.4g} bytes")
            decisions.append(Decision(name, False, cycles, moved, recomputation, best, reason))
        else:
            decisions.append(Decision(name, True, cycles, moved, recomputation, None,
                                      f"kept: {facts}; no candidate is predicted more than "
                                      f"{margin:.0%} faster with no more bytes"))
    return decisions

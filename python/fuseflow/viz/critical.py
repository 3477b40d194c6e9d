"""The critical path of a simulated kernel, from its blocks' final clocks.

The simulator records each block's final clock. Starting from the block that finishes last
(the kernel's cycle count), the path steps to the producer of the block's inputs that
finishes last, until it reaches a block without inputs. A block's *contribution* is the time
it adds to the path: its final clock minus that of its predecessor on the path (never
negative); contributions sum to the kernel's cycles, and a block's *share* is its
contribution divided by them. Blocks off the path contribute nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.sim.graph import BlockGraph


@dataclass(frozen=True)
class CriticalPath:
    """Blocks of the path from source to the last finisher, and each one's added cycles."""

    blocks: tuple[str, ...]
    contribution: dict[str, int]
    cycles: int

    def share(self, block: str) -> float:
        """The fraction of the kernel's cycles that ``block`` adds (0 off the path)."""
        return self.contribution.get(block, 0) / self.cycles if self.cycles else 0.0


def critical_path(graph: BlockGraph, clocks: dict[str, int]) -> CriticalPath:
    """The critical path of ``graph`` given each block's final clock (by block name)."""
    if not graph.blocks:
        return CriticalPath((), {}, 0)
    producers = graph.producers()
    order = {b.name: i for i, b in enumerate(graph.blocks)}
    # Ties go to the block listed first, so the path is deterministic.
    last = max(graph.blocks, key=lambda b: (clocks[b.name], -order[b.name]))
    path = [last]
    seen = {last.name}
    while True:
        preds = [producers[ch] for ch in path[-1].inputs if producers[ch].name not in seen]
        if not preds:
            break
        pred = max(preds, key=lambda b: (clocks[b.name], -order[b.name]))
        path.append(pred)
        seen.add(pred.name)
    path.reverse()
    contribution = {}
    before = 0
    for block in path:
        contribution[block.name] = max(clocks[block.name] - before, 0)
        before = max(before, clocks[block.name])
    return CriticalPath(tuple(b.name for b in path), contribution, clocks[last.name])

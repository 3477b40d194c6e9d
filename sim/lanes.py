"""Physical lanes: a block graph's forks folded onto at most ``Arch.lanes`` lanes each.

A fork deals its data tokens round robin with a counter that runs on across fibers, so the
tokens of virtual lanes ``p, p + L, p + 2L, ...`` of a ``P``-lane fork are exactly those lane
``p`` of an ``L``-lane fork receives. A machine with ``L < P`` physical lanes runs virtual
lanes ``p + kL`` one after the other on physical lane ``p``: the same token sequence, on the
same lane sub-graph (``sam-parallelize`` replicates one sub-graph per lane). Folding is
therefore the ``L``-lane graph: lanes ``L .. P-1`` and everything they feed up to the joins
are removed, and the forks and joins keep their first ``L`` lanes.
"""

from __future__ import annotations

from dataclasses import replace

from fuseflow.sim.graph import Block, BlockGraph


def fold_lanes(graph: BlockGraph, lanes: int) -> BlockGraph:
    """``graph`` with every fork of more than ``lanes`` lanes folded onto ``lanes`` (see the
    module doc); the graph itself if no fork has more."""
    forks = [b for b in graph.blocks if b.kind == "fork" and len(b.outputs) > lanes]
    if not forks:
        return graph
    consumers: dict[str, Block] = graph.consumers()
    dropped = [ch for b in forks for ch in b.outputs[lanes:]]
    gone: set[str] = set()          # removed blocks
    cut: set[str] = set()           # channels whose consumer keeps running without them
    while dropped:
        ch = dropped.pop()
        block = consumers.get(ch)
        if block is None or block.name in gone:
            continue
        if block.kind == "join":
            cut.add(ch)
            continue
        gone.add(block.name)
        dropped.extend(block.outputs)
    blocks = []
    for b in graph.blocks:
        if b.name in gone:
            continue
        if b.kind == "fork" and len(b.outputs) > lanes:
            b = replace(b, outputs=b.outputs[:lanes], attrs={**b.attrs, "lanes": lanes})
        elif b.kind == "join" and any(ch in cut for ch in b.inputs):
            b = replace(b, inputs=b.inputs[:lanes + 1], attrs={**b.attrs, "lanes": lanes})
        blocks.append(b)
    # a spine stream broadcast to removed lane blocks loses those outputs
    blocks = [replace(b, outputs=tuple(ch for ch in b.outputs
                                      if ch not in consumers or consumers[ch].name not in gone))
              if b.kind == "broadcast" else b for b in blocks]
    folded = BlockGraph(blocks, graph.outputs, graph.name)
    folded.validate()
    return folded


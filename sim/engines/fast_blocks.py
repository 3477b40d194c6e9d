"""The fast engine's block table and how one block is simulated over given streams.

The common primitives are vectorized (``VECTORIZED``): each takes the block's context and its
input streams (each ending in ``D``) and returns its output streams, or None when it declines
the input (malformed or unusual streams); every other kind, and every declined input, runs the
reference coroutine on the materialized tokens, which is exact by construction.
"""

from __future__ import annotations

from typing import Callable

from fuseflow.sim.blocks import IMPLEMENTATIONS
from fuseflow.sim.engines import (
    fast_joiner, fast_lanes, fast_scan, fast_spacc, fast_values, fast_write,
)
from fuseflow.sim.engines.fast_stream import Stream, from_pairs
from fuseflow.sim.engines.reference import BlockContext, Channel
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError

VECTORIZED: dict[str, Callable] = {
    "root": fast_values.root, "broadcast": fast_values.broadcast, "fork": fast_values.fork,
    "repsiggen": fast_values.repsiggen, "array": fast_values.array, "alu": fast_values.alu,
    "reduce": fast_values.reduce, "scan": fast_scan.scan, "repeat": fast_scan.repeat, "locate": fast_scan.locate,
    "intersect": fast_joiner.intersect, "union": fast_joiner.union, "spacc": fast_spacc.spacc,
    "level_write": fast_write.level_write, "value_write": fast_write.value_write,
    "join": fast_lanes.join,
}
"""Block kinds with a whole-stream implementation; the others run the reference coroutine."""


class FastContext(BlockContext):
    """A block's context in the fast engine: the reference's, plus what the fast engine carries."""

    def __init__(self, *args, token_limit: int | None = None):
        super().__init__(*args)
        self.token_limit = token_limit
        """Largest stream a scanner may emit before the run is redone in chunks (None: any)."""
        self.dealt = 0
        """Tokens a fork has dealt to its lanes so far (its round-robin counter runs on)."""


def topological_order(graph: BlockGraph) -> list[Block] | None:
    """Blocks ordered so that every producer precedes its consumers; None if the graph has a cycle."""
    producer = {ch: b.name for b in graph.blocks for ch in b.outputs}
    waiting = {b.name: len({producer[ch] for ch in b.inputs}) for b in graph.blocks}
    users: dict[str, set[str]] = {}
    for b in graph.blocks:
        for p in {producer[ch] for ch in b.inputs}:
            users.setdefault(p, set()).add(b.name)
    by_name = {b.name: b for b in graph.blocks}
    ready = [b.name for b in graph.blocks if waiting[b.name] == 0]
    order = []
    while ready:
        name = ready.pop()
        order.append(by_name[name])
        for u in sorted(users.get(name, ())):
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.append(u)
    return order if len(order) == len(graph.blocks) else None


def run_coroutine(ctx: BlockContext, ins: list[Channel], outs: list[Channel], streams: list[Stream]) -> list[Stream]:
    """Runs the reference implementation of ``ctx.block`` on whole input streams."""
    block = ctx.block
    for ch, s in zip(ins, streams):
        ch.queue.extend(s.pairs())
    for _kind, ch in IMPLEMENTATIONS[block.kind](ctx):
        raise DeadlockError(f"deadlock: '{block.name}' waits for a token on channel '{ch.name}' "
                            f"from '{ch.producer}' (its producer has finished: the stream ended early)",
                            {block.name: ch.name})
    left = [f"'{c.name}' ({len(c.queue)} tokens, consumer '{block.name}')" for c in ins if c.queue]
    if left:
        raise StreamError("blocks finished with unconsumed tokens on " + ", ".join(left))
    produced = [from_pairs(ch.trace) for ch in outs]
    for ch in outs:
        ch.trace = []
    return produced


def simulate(ctx: BlockContext, streams: list[Stream]) -> list[Stream]:
    """``ctx.block``'s output streams from whole input streams: vectorized, else the coroutine."""
    block = ctx.block
    impl = VECTORIZED.get(block.kind)
    try:
        result = impl(ctx, streams) if impl is not None else None
        return result if result is not None else run_coroutine(ctx, ctx._ins, ctx._outs, streams)
    except SimulationError:
        raise
    except Exception as exc:
        raise SimulationError(f"block '{block.name}' ({block.kind}): {exc!r}") from exc


def make_context(block: Block, producers: dict[str, Block], arch, inputs, outputs,
                 token_limit: int | None = None) -> FastContext:
    """A block's context with channels named as the graph names them (traced outputs: the
    coroutine fallback reads what it sent from there)."""
    ins = [Channel(ch, producers[ch].name, block.name, None, False) for ch in block.inputs]
    outs = [Channel(ch, block.name, None, None, True) for ch in block.outputs]
    return FastContext(block, ins, outs, arch, inputs, outputs, token_limit=token_limit)

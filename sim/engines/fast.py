"""The fast engine: each block simulated once, over whole streams, in topological order.

With unbounded FIFOs a block's output tokens and stamps are a function of its input tokens
and stamps alone (``docs/timing.md``), so an acyclic graph can be simulated block by block.
Streams are numpy arrays (:mod:`fuseflow.sim.engines.fast_stream`); the common primitives
are vectorized (``VECTORIZED``), their clocks computed with cumulative maxima. Every other
block kind, and any block whose input a vectorized implementation declines (malformed or
unusual streams, e.g. ``N`` coordinates at a joiner), runs the reference implementation on
the materialized tokens, which is exact by construction. A stream is freed once its consumer
has run (unless ``trace``).

Bounded FIFOs (``Arch.fifo_depth``) couple every block to its consumers' dequeue times, and
cyclic graphs cannot be ordered; both run on the reference engine, with its exact
backpressure and deadlock reports.
"""

from __future__ import annotations

from typing import Callable

from fuseflow.sim.arch import Arch
from fuseflow.sim.blocks import IMPLEMENTATIONS
from fuseflow.sim.engines import fast_joiner, fast_scan, fast_spacc, fast_values, fast_write, reference
from fuseflow.sim.engines.fast_stream import Stream, from_pairs
from fuseflow.sim.engines.reference import BlockContext, Channel, assemble_outputs
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.stats import KernelResult
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError

VECTORIZED: dict[str, Callable] = {
    "root": fast_values.root, "broadcast": fast_values.broadcast, "fork": fast_values.fork,
    "repsiggen": fast_values.repsiggen, "array": fast_values.array, "alu": fast_values.alu,
    "reduce": fast_values.reduce, "scan": fast_scan.scan, "repeat": fast_scan.repeat, "locate": fast_scan.locate,
    "intersect": fast_joiner.intersect, "union": fast_joiner.union, "spacc": fast_spacc.spacc,
    "level_write": fast_write.level_write, "value_write": fast_write.value_write,
}
"""Block kinds with a whole-stream implementation; the others run the reference coroutine."""


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


def _simulate(block: Block, ctx: BlockContext, ins, outs, streams: list[Stream]) -> list[Stream]:
    impl = VECTORIZED.get(block.kind)
    try:
        result = impl(ctx, streams) if impl is not None else None
        return result if result is not None else run_coroutine(ctx, ins, outs, streams)
    except SimulationError:
        raise
    except Exception as exc:
        raise SimulationError(f"block '{block.name}' ({block.kind}): {exc!r}") from exc


def run(graph: BlockGraph, inputs: list[FiberTree], arch: Arch, trace: bool = False) -> KernelResult:
    """Simulates ``graph`` on ``inputs``; same results, cycles and statistics as the reference."""
    graph.validate()
    order = topological_order(graph)
    if arch.fifo_depth is not None or order is None:
        return reference.run(graph, inputs, arch, trace=trace)
    for b in graph.blocks:
        if b.kind not in IMPLEMENTATIONS:
            raise SimulationError(f"block '{b.name}': no implementation of kind '{b.kind}'")
    consumers = graph.consumers()
    producers = graph.producers()
    live: dict[str, Stream] = {}
    traces: dict[str, list] = {}
    contexts: dict[str, BlockContext] = {}
    for block in order:
        ins = [Channel(ch, producers[ch].name, block.name, None, False) for ch in block.inputs]
        outs = [Channel(ch, block.name, None, None, True) for ch in block.outputs]
        ctx = BlockContext(block, ins, outs, arch, inputs, graph.outputs)
        produced = _simulate(block, ctx, ins, outs, [live.pop(ch) for ch in block.inputs])
        for ch, s in zip(block.outputs, produced):
            if trace:
                traces[ch] = s.pairs()
            if ch in consumers:
                live[ch] = s
        ctx.stats.cycles = ctx.clock
        contexts[block.name] = ctx
    return KernelResult(
        outputs=assemble_outputs(graph, contexts, fast_write.assemble_result),
        cycles=max((ctx.clock for ctx in contexts.values()), default=0),
        blocks={b.name: contexts[b.name].stats for b in graph.blocks},
        trace={ch: traces[ch] for b in graph.blocks for ch in b.outputs} if trace else None,
    )

"""The fast engine: each block simulated once, over whole streams, in topological order.

With unbounded FIFOs a block's output tokens and stamps are a function of its input tokens
and stamps alone (``docs/timing.md``), so an acyclic graph can be simulated block by block.
Streams are numpy arrays (:mod:`fuseflow.sim.engines.fast_stream`); the common primitives
are vectorized (:data:`~fuseflow.sim.engines.fast_blocks.VECTORIZED`), their clocks computed
with cumulative maxima; other kinds and declined inputs run the reference coroutine
(:mod:`fuseflow.sim.engines.fast_blocks`). A stream is freed once its consumer has run (unless
``trace``).

Memory. A run whose streams would outgrow ``memory_budget`` is redone in chunks of the
outermost loop (:mod:`fuseflow.sim.engines.fast_chunked`), with the same results.

Bounded FIFOs (``Arch.fifo_depth``) couple every block to its consumers' dequeue times, and
cyclic graphs cannot be ordered; both run on the reference engine, with its exact
backpressure and deadlock reports.
"""

from __future__ import annotations

import logging

from fuseflow.sim.arch import Arch
from fuseflow.sim.blocks import IMPLEMENTATIONS
from fuseflow.sim.engines import fast_chunked, fast_write, reference
from fuseflow.sim.engines.fast_blocks import (
    VECTORIZED,
    make_context,
    run_coroutine,
    simulate,
    topological_order,
)
from fuseflow.sim.engines.fast_chunked import Chunking
from fuseflow.sim.engines.fast_stream import (
    StampOverflow,
    Stream,
    StreamTooLong,
    held_bytes,
    wide_stamps,
)
from fuseflow.sim.engines.reference import assemble_outputs
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.graph import BlockGraph
from fuseflow.sim.stats import KernelResult
from fuseflow.sim.tokens import SimulationError

__all__ = ["VECTORIZED", "run", "run_coroutine", "topological_order"]

log = logging.getLogger(__name__)


def run(graph: BlockGraph, inputs: list[FiberTree], arch: Arch, trace: bool = False,
        chunking: Chunking | None = None) -> KernelResult:
    """Simulates ``graph`` on ``inputs``; same results, cycles and statistics as the reference.

    ``chunking`` (default :class:`Chunking`): whole streams while they fit its memory budget,
    else (or with ``chunk_tokens`` set) the outermost loop in chunks.
    """
    graph.validate()
    chunking = chunking or Chunking()
    order = topological_order(graph)
    if arch.fifo_depth is not None or order is None:
        return reference.run(graph, inputs, arch, trace=trace)
    for b in graph.blocks:
        if b.kind not in IMPLEMENTATIONS:
            raise SimulationError(f"block '{b.name}': no implementation of kind '{b.kind}'")
    try:
        return _run_fitting(graph, order, inputs, arch, trace, chunking)
    except StampOverflow as exc:
        log.info("%s: %s; simulating it again with int64 stamps", graph.name, exc)
        with wide_stamps():
            return _run_fitting(graph, order, inputs, arch, trace, chunking)


def _run_fitting(graph, order, inputs, arch, trace, chunking: Chunking) -> KernelResult:
    """Whole streams while they fit ``chunking``'s budget, else the outermost loop in chunks."""
    if chunking.chunk_tokens is not None:
        return fast_chunked.run(graph, order, inputs, arch, trace, chunking)
    try:
        return _run_whole(graph, order, inputs, arch, trace, chunking.stream_tokens(),
                          chunking.stream_bytes())
    except StreamTooLong as exc:
        log.info("%s: %s; simulating it in chunks of the outermost loop", graph.name, exc)
        return fast_chunked.run(graph, order, inputs, arch, trace, chunking)


def _run_whole(graph, order, inputs, arch, trace, token_limit, byte_limit=None) -> KernelResult:
    """Every block once over whole streams; :class:`StreamTooLong` if a scanner's output would
    exceed ``token_limit`` or the streams alive at once ``byte_limit`` bytes."""
    consumers = graph.consumers()
    producers = graph.producers()
    live: dict[str, Stream] = {}
    traces: dict[str, list] = {}
    contexts = {}
    for block in order:
        ctx = make_context(block, producers, arch, inputs, graph.outputs, token_limit)
        ins = [live.pop(ch) for ch in block.inputs]
        produced = simulate(ctx, ins)
        if byte_limit is not None and held_bytes([*live.values(), *ins, *produced]) > byte_limit:
            raise StreamTooLong(block.name, max(len(s) for s in [*live.values(), *ins, *produced]))
        del ins
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

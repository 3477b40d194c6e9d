"""The reference engine: a literal, readable execution of the timing model.

Every block runs as a coroutine (its implementation in :mod:`fuseflow.sim.blocks`) with a local
clock. Receiving a token advances the clock to ``max(clock, stamp)``; a token sent at local
time ``t`` is stamped ``t + latency``; each step adds the block's initiation interval. With a
FIFO depth ``d``, the k-th token of a channel cannot be enqueued before token ``k-d`` was
dequeued, plus one cycle: the sender's clock waits for it. Total cycles are the maximum of the
blocks' final clocks. The engine resumes blocks round-robin until all finish, and raises
:class:`DeadlockError` if none can progress. See ``docs/timing.md``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from fuseflow.sim.arch import Arch
from fuseflow.sim.blocks import IMPLEMENTATIONS
from fuseflow.sim.blocks.write import assemble
from fuseflow.sim.formats import FiberTree, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.stats import BlockStats, KernelResult
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError


class Channel:
    """A FIFO of ``(token, stamp)`` from one producer to at most one consumer."""

    __slots__ = ("name", "producer", "consumer", "depth", "queue", "sent", "dequeued", "trace")

    def __init__(self, name: str, producer: str, consumer: str | None, depth: int | None, trace: bool):
        self.name = name
        self.producer = producer
        self.consumer = consumer
        self.depth = depth if consumer is not None else None
        self.queue: deque = deque()
        self.sent = 0
        self.dequeued: list[int] = []  # dequeue time of every element so far (bounded FIFOs)
        self.trace: list | None = [] if trace else None

    def has_data(self) -> bool:
        return bool(self.queue)

    def has_space(self) -> bool:
        return self.depth is None or len(self.dequeued) > self.sent - self.depth


class BlockContext:
    """What a block implementation sees: its ports, clock, statistics and bound data."""

    def __init__(self, block: Block, ins: list[Channel], outs: list[Channel], arch: Arch,
                 tensors: list[FiberTree], outputs: list[TensorFormat]):
        self.block = block
        self._ins, self._outs = ins, outs
        cost = arch.block_cost(block.kind, block.attrs)
        self.latency, self.ii = cost.latency, cost.initiation_interval
        self.clock = 0
        self._tensors, self._outputs = tensors, outputs
        self.stats = BlockStats(block.name, block.kind, tokens_in={c.name: 0 for c in ins},
                                tokens_out={c.name: 0 for c in outs})
        self.sink: list = []
        self.wait: tuple[str, Channel] | None = None

    def recv(self, port: int):
        """Waits for and dequeues the next token of input ``port``."""
        ch = self._ins[port]
        while not ch.queue:
            yield ("data", ch)
        tok, stamp = ch.queue.popleft()
        if stamp > self.clock:
            self.clock = stamp
        if ch.depth is not None:
            ch.dequeued.append(self.clock)
        self.stats.tokens_in[ch.name] += 1
        return tok

    def peek(self, port: int):
        """Waits for the next token of input ``port`` and returns it without dequeuing."""
        ch = self._ins[port]
        while not ch.queue:
            yield ("data", ch)
        tok, stamp = ch.queue[0]
        if stamp > self.clock:
            self.clock = stamp
        return tok

    def send(self, port: int, tok: Any):
        """Enqueues ``tok`` on output ``port``, stamped clock + latency (after any FIFO stall)."""
        ch = self._outs[port]
        if ch.depth is not None and ch.sent >= ch.depth:
            while not ch.has_space():
                yield ("space", ch)
            free = ch.dequeued[ch.sent - ch.depth] + 1
            if free > self.clock:
                self.clock = free
        stamp = self.clock + self.latency
        if ch.consumer is not None:
            ch.queue.append((tok, stamp))
        if ch.trace is not None:
            ch.trace.append((tok, stamp))
        ch.sent += 1
        self.stats.tokens_out[ch.name] += 1

    def send_all(self, tok: Any):
        """Sends ``tok`` on every output, in port order."""
        for port in range(len(self._outs)):
            yield from self.send(port, tok)

    def step(self) -> None:
        """Ends a step: the clock advances by the initiation interval."""
        self.clock += self.ii
        self.stats.steps += 1

    def tensor(self) -> FiberTree:
        """The input tensor ``attrs['tensor']``."""
        idx = self.block.attrs.get("tensor")
        if not isinstance(idx, int) or not 0 <= idx < len(self._tensors):
            self.error(f"reads input tensor {idx!r} but {len(self._tensors)} inputs were given")
        return self._tensors[idx]

    def output_format(self) -> TensorFormat:
        """The declared format of graph result ``attrs['result']``."""
        idx = self.block.attrs.get("result")
        if not isinstance(idx, int) or not 0 <= idx < len(self._outputs):
            self.error(f"writes result {idx!r} but the graph declares {len(self._outputs)} outputs")
        return self._outputs[idx]

    def error(self, message: str):
        raise StreamError(f"block '{self.block.name}' ({self.block.kind}): {message}")


def _describe_wait(ctx: BlockContext, blocks: dict[str, BlockContext]) -> str:
    kind, ch = ctx.wait
    if kind == "space":
        return (f"'{ctx.block.name}' waits for space on channel '{ch.name}' "
                f"(depth {ch.depth}, consumer '{ch.consumer}')")
    note = " (its producer has finished: the stream ended early)" if blocks[ch.producer].wait == "finished" else ""
    return f"'{ctx.block.name}' waits for a token on channel '{ch.name}' from '{ch.producer}'{note}"


def run(graph: BlockGraph, inputs: list[FiberTree], arch: Arch, trace: bool = False) -> KernelResult:
    """Simulates ``graph`` on ``inputs``; returns outputs, cycles and per-block statistics."""
    graph.validate()
    consumers = graph.consumers()
    channels: dict[str, Channel] = {}
    for b in graph.blocks:
        if b.kind not in IMPLEMENTATIONS:
            raise SimulationError(f"block '{b.name}': no implementation of kind '{b.kind}'")
        for name in b.outputs:
            cons = consumers.get(name)
            channels[name] = Channel(name, b.name, cons.name if cons else None, arch.fifo_depth, trace)
    contexts = {b.name: BlockContext(b, [channels[c] for c in b.inputs], [channels[c] for c in b.outputs],
                                     arch, inputs, graph.outputs) for b in graph.blocks}
    active = [(ctx, IMPLEMENTATIONS[ctx.block.kind](ctx)) for ctx in contexts.values()]
    while active:
        progressed = False
        still = []
        for ctx, gen in active:
            if ctx.wait is not None:
                kind, ch = ctx.wait
                if not (ch.has_data() if kind == "data" else ch.has_space()):
                    still.append((ctx, gen))
                    continue
            progressed = True
            try:
                ctx.wait = gen.send(None)
            except StopIteration:
                ctx.wait = "finished"
                continue
            except SimulationError:
                raise
            except Exception as exc:
                raise SimulationError(f"block '{ctx.block.name}' ({ctx.block.kind}): {exc!r}") from exc
            still.append((ctx, gen))
        if not progressed:
            lines = [_describe_wait(ctx, contexts) for ctx, _ in still]
            raise DeadlockError("deadlock: no block can make progress; " + "; ".join(lines),
                                {ctx.block.name: ctx.wait[1].name for ctx, _ in still})
        active = still
    leftovers = [f"'{c.name}' ({len(c.queue)} tokens, consumer '{c.consumer}')" for c in channels.values() if c.queue]
    if leftovers:
        raise StreamError("blocks finished with unconsumed tokens on " + ", ".join(leftovers))
    return KernelResult(
        outputs=assemble_outputs(graph, contexts),
        cycles=max((ctx.clock for ctx in contexts.values()), default=0),
        blocks={name: _final_stats(ctx) for name, ctx in contexts.items()},
        trace={name: ch.trace for name, ch in channels.items()} if trace else None,
    )


def _final_stats(ctx: BlockContext) -> BlockStats:
    ctx.stats.cycles = ctx.clock
    return ctx.stats


def assemble_outputs(graph: BlockGraph, contexts: dict[str, BlockContext], assemble_result=assemble) -> list[FiberTree]:
    """The graph results, assembled by ``assemble_result`` from what the writers' contexts recorded."""
    levels: list[dict] = [{} for _ in graph.outputs]
    values: list = [None for _ in graph.outputs]
    for ctx in contexts.values():
        attrs = ctx.block.attrs
        if ctx.block.kind == "level_write":
            lv = levels[attrs["result"]]
            if attrs["level"] in lv:
                raise StreamError(f"result {attrs['result']} level {attrs['level']} has two level writers")
            lv[attrs["level"]] = ctx.sink
        elif ctx.block.kind == "value_write":
            if values[attrs["result"]] is not None:
                raise StreamError(f"result {attrs['result']} has two value writers")
            values[attrs["result"]] = ctx.sink
    return [assemble_result(fmt, levels[r], values[r], what=f"result {r}") for r, fmt in enumerate(graph.outputs)]


def run_block(block: Block, streams: list[list], tensors: list[FiberTree] = (), outputs: list[TensorFormat] = (),
              arch: Arch | None = None) -> tuple[list[list[tuple[Any, int]]], BlockContext]:
    """Runs one block on given input streams (for unit tests of primitives).

    ``streams[i]`` feeds ``block.inputs[i]``: a list of tokens (all stamped 0) or of
    ``(token, stamp)`` pairs. Returns each output's ``(token, stamp)`` list and the block's
    context (its ``clock``, ``stats`` and writer ``sink``). Raises :class:`StreamError` if the
    block waits on an exhausted input or leaves input tokens unconsumed.
    """
    ins = []
    for name, toks in zip(block.inputs, streams, strict=True):
        ch = Channel(name, "<input>", block.name, None, False)
        ch.queue.extend(t if isinstance(t, tuple) else (t, 0) for t in toks)
        ins.append(ch)
    outs = [Channel(name, block.name, None, None, True) for name in block.outputs]
    ctx = BlockContext(block, ins, outs, arch or Arch(), list(tensors), list(outputs))
    for wait in IMPLEMENTATIONS[block.kind](ctx):
        raise StreamError(f"block '{block.name}' waits on input '{wait[1].name}', which has no more tokens")
    left = [f"'{c.name}' ({len(c.queue)} tokens)" for c in ins if c.queue]
    if left:
        raise StreamError(f"block '{block.name}' finished with unconsumed tokens on " + ", ".join(left))
    ctx.stats.cycles = ctx.clock
    return [ch.trace for ch in outs], ctx

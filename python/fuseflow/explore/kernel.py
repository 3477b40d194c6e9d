"""The cost model of one kernel: token counts propagated block by block, then clocks.

Blocks are visited in topological order of the loaded :class:`~fuseflow.sim.graph.BlockGraph`
(the simulator's own view of a ``sam.graph``, so predictions are keyed by the same block and
channel names as the simulator's statistics). Each block's rule (:mod:`~fuseflow.explore.rules`)
gives its output stream profiles, steps and counters; its clocks follow from its steps and its
inputs' arrival times (:func:`block_clocks`).
"""

from __future__ import annotations

from fuseflow.explore.compiled import _TOTALS, CompiledKernel, Unsupported
from fuseflow.explore.prediction import KernelPrediction
from fuseflow.explore.rules import RuleContext, apply, written_level
from fuseflow.explore.stats import LevelStats, TensorStats
from fuseflow.explore.streams import Profile, own_empty
from fuseflow.sim.arch import Arch
from fuseflow.sim.graph import BLOCK_KINDS, Block, BlockGraph


def topological(graph: BlockGraph) -> list[Block]:
    """The blocks in an order where every producer precedes its consumers."""
    producer = graph.producers()
    pending = {b.name: sum(1 for ch in b.inputs if ch in producer) for b in graph.blocks}
    consumers = graph.consumers()
    ready = [b for b in graph.blocks if pending[b.name] == 0]
    order: list[Block] = []
    while ready:
        block = ready.pop()
        order.append(block)
        for ch in block.outputs:
            nxt = consumers.get(ch)
            if nxt is not None:
                pending[nxt.name] -= 1
                if pending[nxt.name] == 0:
                    ready.append(nxt)
    if len(order) != len(graph.blocks):
        cyclic = sorted(name for name, count in pending.items() if count)
        raise ValueError(f"graph '{graph.name}' has a cycle through {', '.join(cyclic)}; the "
                         "cost model needs an acyclic graph")
    return order


def cost_table(arch: Arch) -> dict[str, tuple[int, int]]:
    """Block kind -> ``(latency, initiation interval)`` under ``arch``."""
    return {kind: (arch.cost(kind).latency, arch.cost(kind).initiation_interval)
            for kind in BLOCK_KINDS}


def graph_costs(graph: BlockGraph, costs: dict, arch: Arch) -> dict:
    """``costs`` with each block kind's latency and interval raised to the largest tile costs
    of its blocks in ``graph`` (``arch.tile``, on the loader's ``tiles``: the simulator's
    per-block :meth:`~fuseflow.sim.arch.Arch.block_cost`, kept here as one pair per kind);
    ``costs`` itself when no block works on tiles."""
    out = None
    for block in graph.blocks:
        if not block.attrs.get("tiles"):
            continue
        if out is None:
            out = dict(costs)
        cost = arch.block_cost(block.kind, block.attrs)
        base = out[block.kind]
        out[block.kind] = (max(base[0], cost.latency), max(base[1], cost.initiation_interval))
    return costs if out is None else out


_DEFAULT_COSTS: dict | None = None


def default_costs() -> dict[str, tuple[int, int]]:
    """:func:`cost_table` of the default :class:`Arch` (computed once)."""
    global _DEFAULT_COSTS
    if _DEFAULT_COSTS is None:
        _DEFAULT_COSTS = cost_table(Arch())
    return _DEFAULT_COSTS


def predict_graph(graph: BlockGraph, inputs: list[TensorStats], arch: Arch | None = None,
                  order: list[Block] | None = None,
                  costs: dict[str, tuple[int, int]] | None = None,
                  reference: bool = False) -> KernelPrediction:
    """Predicts one kernel from the statistics of its inputs (in the graph's input formats).

    ``order`` is :func:`topological` of ``graph`` and ``costs`` :func:`cost_table` of
    ``arch`` (computed when not given; pass them to predict many times). The kernel is
    compiled once per graph, block costs and input formats (:mod:`.compiled`) and its
    totals and result statistics computed by the compiled code; its per-block predictions
    come from the reference walk (``reference=True``: everything does) when first read.
    """
    if costs is None:
        costs = cost_table(arch) if arch is not None else default_costs()
    if not reference:
        program = compiled_program(graph, costs, inputs, order)
        if program is not None:
            return run_compiled(program, graph, list(inputs), order, costs)
    return _reference(graph, inputs, order or topological(graph), costs)


def run_compiled(program: CompiledKernel, graph: BlockGraph, inputs: list[TensorStats],
                 order: list[Block] | None, costs: dict) -> KernelPrediction:
    """The prediction of ``program`` (:func:`compiled_program` of ``graph``) on ``inputs``
    (kept by the prediction: pass a list the caller does not change)."""
    return KernelPrediction.compiled(graph.name, inputs, program._fn(inputs), _TOTALS,
                                     detail_walk(graph, order, costs))


def detail_walk(graph: BlockGraph, order: list[Block] | None, costs: dict):
    """The reference walk of ``graph`` as a function of its inputs: a compiled kernel's
    per-block predictions, computed when first read (one function per kernel, made once
    by a caller that predicts the kernel many times)."""
    return lambda inputs: predict_graph(graph, inputs, order=order, costs=costs,
                                        reference=True)


COMPILE_AFTER = 2
"""Reference walks of a graph (under one block-cost table and input formats) before it is
compiled: compiling costs about ten walks, so a graph predicted once or twice (a search's
candidate kernels) is walked and one predicted many times (a model's kernels under
:class:`~fuseflow.explore.CostModel`, shared decoder layers) is compiled."""


def compiled_program(graph: BlockGraph, costs: dict, inputs: list[TensorStats],
                     order: list[Block] | None = None):
    """The :class:`~.compiled.CompiledKernel` of ``graph`` under ``costs`` for the formats of
    ``inputs`` (compiled after :data:`COMPILE_AFTER` walks and kept on the graph), or None
    (walk it: not yet, or the compiler does not handle the graph)."""
    entry = _entry(graph, costs, inputs)
    if entry[3] is not None:
        return entry[3] or None                   # False: the compiler does not handle it
    if entry[2] < COMPILE_AFTER:
        entry[2] += 1
        return None
    try:
        entry[3] = CompiledKernel(graph, order or topological(graph), costs, entry[1])
    except Unsupported:
        entry[3] = False
    return entry[3] or None


def ready_program(graph: BlockGraph, costs: dict, inputs: list[TensorStats]):
    """The :class:`~.compiled.CompiledKernel` of ``graph`` for ``costs`` and the formats of
    ``inputs`` if it is already compiled, else None (no walk is counted)."""
    return _entry(graph, costs, inputs)[3] or None


def _entry(graph: BlockGraph, costs: dict, inputs: list[TensorStats]) -> list:
    """``[costs, formats, walks, program]`` of ``graph`` for ``costs`` and the formats of
    ``inputs`` (program None: not compiled yet; False: the compiler does not handle it)."""
    entries = graph.__dict__.setdefault("_cost_programs", [])
    for entry in entries:
        if entry[0] is costs and _same_formats(entry[1], inputs):
            return entry
    entry = [costs, [s.fmt for s in inputs], 0, None]
    entries.append(entry)
    return entry


def _same_formats(formats: list, inputs: list[TensorStats]) -> bool:
    if len(formats) != len(inputs):
        return False
    return all(s.fmt is f or s.fmt == f for s, f in zip(inputs, formats))


def _reference(graph: BlockGraph, inputs: list[TensorStats], order: list[Block],
               costs: dict[str, tuple[int, int]]) -> KernelPrediction:
    """The reference walk: every block's rule on Level objects, clocks block by block."""
    ctx = RuleContext(list(inputs), list(graph.outputs))
    profiles: dict[str, Profile] = {}
    first: dict[str, float] = {}          # channel -> arrival of its first token
    last: dict[str, float] = {}           # channel -> arrival of its last token
    burst: dict[str, float] = {}          # channel -> tokens arriving at that time
    source: dict[str, str] = {}           # channel -> producing block
    latest: dict[str, str] = {}           # block -> the producer of its latest input
    blocks = {}
    for block in order:
        outs, pred = apply(block, [profiles[ch] for ch in block.inputs], ctx)
        latency, interval = costs[block.kind]
        start = max((first[ch] for ch in block.inputs), default=0.0)
        # After its inputs' last tokens arrive, a block still takes a step per token of
        # their final bursts.
        done = {ch: last[ch] + burst[ch] * interval for ch in block.inputs}
        pred.start = start
        pred.cycles = max(start + pred.steps * interval,
                          max(done.values(), default=0.0))
        if block.inputs:
            latest[block.name] = source[max(block.inputs, key=done.__getitem__)]
        for ch, profile in zip(block.outputs, outs):
            profiles[ch] = profile
            first[ch] = start + latency
            last[ch] = pred.cycles - interval + latency
            burst[ch] = (max((burst[c] for c in block.inputs), default=1.0)
                         if interval == 0 else pred.burst)
            source[ch] = block.name
        blocks[block.name] = pred
    result = KernelPrediction(graph.name, {b.name: blocks[b.name] for b in graph.blocks},
                              list(inputs), [_written(ctx, r) for r in range(len(graph.outputs))])
    path = [max(blocks.values(), key=lambda b: b.cycles).name] if blocks else []
    while path and path[-1] in latest:
        path.append(latest[path[-1]])
    result.critical_path = path[::-1]
    return result


def _written(ctx: RuleContext, result: int) -> TensorStats:
    """Statistics of graph result ``result`` from what its writers received: written levels
    give their coordinates and empty fibers; dense levels are filled."""
    fmt = ctx.outputs[result]
    levels = []
    refs = 1.0
    for lv, spec in enumerate(fmt.levels):
        size = spec.size(fmt.shape)
        profile = ctx.written.get((result, lv))
        if spec.format == "dense" or profile is None:
            items = refs * size
            levels.append(LevelStats(refs, items, 0.0, size))
        else:
            items = profile[-1].data
            parent = fmt.levels[lv - 1].size(fmt.shape) \
                if lv and fmt.levels[lv - 1].format == "dense" else 0
            levels.append(written_level(refs, items, own_empty(profile), size,
                                        profile[-1].hist, profile[-1].sizes, parent))
        refs = items
    values = ctx.written.get((result, None))
    written = values[-1].items if values is not None else refs
    nonzero = values[-1].nonzero if values is not None else 0.0
    return TensorStats(fmt, tuple(levels), refs, written * nonzero)

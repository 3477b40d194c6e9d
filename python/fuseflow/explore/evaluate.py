"""Candidate kernels scored by the cost model, each once: :class:`KernelEvaluator`.

A candidate kernel is a group of units (:mod:`fuseflow.explore.opgraph`) under one dataflow
order. The evaluator partitions the model into kernels without lowering them: many disjoint
candidate groups in one partition (one pass pipeline per *batch*, so the number of pipeline
runs depends on the group size bound, not on the model size), reads each kernel once
(:class:`~fuseflow.passes.lowering.plan.KernelAnalysis`), plans its legal orders (no IR
built), builds each plan's block graph (:func:`~fuseflow.explore.plangraph.plan_graph`) and
predicts it (:func:`~fuseflow.explore.kernel.predict_graph`).

A kernel's cost must not depend on the rest of the partition, so every tensor has one set
of statistics: model inputs and parameters are measured from the data; an intermediate's
statistics are those the cost model predicts for it in the unfused model (one kernel per
unit, predicted once, :meth:`KernelEvaluator.baseline`), whichever kernel computes it.
Structurally identical kernels (the same ops and types, e.g. one per decoder layer) share
their analysis and plans; only their inputs' statistics differ.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import numpy as np

from fuseflow import mlir
from fuseflow.explore.axes import (
    Choice,
    KernelContext,
    choices,
    default_axes,
    forked_plan,
)
from fuseflow.explore.costmodel import Density, Measured, _Estimated, layout_stats, source
from fuseflow.explore.kernel import cost_table, graph_costs, predict_graph, topological
from fuseflow.explore.plangraph import graph_input_types, plan_graph
from fuseflow.explore.stats import TensorStats
from fuseflow.frontend import NODE_ATTR, declare_formats, tag_groups
from fuseflow.grouping import assign_kernels, kernel_label
from fuseflow.layout import LAYOUT_OPS
from fuseflow.passes.ir_utils import defining_op, op_of
from fuseflow.passes.lowering.einsum import LoweringError
from fuseflow.passes.lowering.plan import (
    ORDER_ATTEMPTS,
    KernelAnalysis,
    KernelPlan,
    legal_orders,
    shared_analyses,
)
from fuseflow.passes.sam_parallelize import ParallelizeError
from fuseflow.passes.schedule import SchedulePass, kernel_name, kernels
from fuseflow.pipeline import Pipeline
from fuseflow.sim.arch import Arch
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.loader import tensor_format

log = logging.getLogger(__name__)

KERNEL_PHASE = "fuseflow-to-kernels"


@dataclass(frozen=True)
class Cost:
    """What the search minimizes for one kernel or a whole partition."""

    cycles: float
    buffer: float
    """On-chip buffer bytes: the largest sparse-accumulator state of any kernel (kernels run
    one after the other, so buffers are reused: a partition's buffer is the max)."""
    materialized: float
    """Bytes written off chip (kernel results: intermediates and outputs), summed."""
    lanes: float = 1.0
    """Lanes (area): the most any kernel forks into (kernels run one after the other on the
    same lanes: a partition's lanes are the max; :mod:`fuseflow.explore.axes`)."""

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.cycles + other.cycles, max(self.buffer, other.buffer),
                    self.materialized + other.materialized, max(self.lanes, other.lanes))

    def dominates(self, other: "Cost") -> bool:
        """No worse in every objective and better in one."""
        return (self.cycles <= other.cycles and self.buffer <= other.buffer
                and self.materialized <= other.materialized and self.lanes <= other.lanes
                and self != other)

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.cycles, self.buffer, self.materialized, self.lanes)


OBJECTIVES = ("cycles", "buffer_bytes", "materialized_bytes", "lanes")
"""The names of :meth:`Cost.as_tuple`'s fields (as JSON keys)."""

ZERO = Cost(0.0, 0.0, 0.0, 1.0)


@dataclass(frozen=True)
class Option:
    """One evaluated candidate kernel: a group under one schedule choice (order, forked
    levels, tile shape; :class:`~fuseflow.explore.axes.Choice`), and its predicted cost."""

    group: frozenset
    order: tuple[str, ...]
    cost: Cost
    ops: float = 0.0
    bytes_read: float = 0.0
    parallel: tuple[tuple[str, int], ...] = ()
    block: tuple[int, ...] = ()

    @property
    def choice(self) -> Choice:
        return Choice(self.order, self.parallel, self.block)


def pareto(items, key=lambda x: x.cost) -> list:
    """The items whose cost no other item's dominates (one per distinct cost), by cycles.

    Items are ranked by their costs' tuples, so an item can only be dominated by (or equal
    to) one ranked before it: it is kept unless a kept item is no worse in every objective
    (once many are kept, checked on an array of their costs: fronts of four objectives grow
    wide)."""
    ranked = sorted(items, key=lambda x: key(x).as_tuple())
    kept: list = []
    costs: list = []
    front = None
    for item in ranked:
        c = key(item).as_tuple()
        n = len(kept)
        if n < _SMALL_FRONT:
            if any(all(a <= b for a, b in zip(k, c)) for k in costs):
                continue
        else:
            if front is None:
                front = np.empty((len(ranked), len(c)))
                front[:n] = costs
            if (front[:n] <= c).all(axis=1).any():
                continue
            front[n] = c
        costs.append(c)
        kept.append(item)
    return kept


_SMALL_FRONT = 48
"""Fronts smaller than this are checked in Python (an array costs more per item)."""


def buffer_bytes(prediction) -> float:
    """On-chip state of a kernel: each sparse accumulator holds one reduced fiber's keys
    (its flush: coordinates of every level and a value per key)."""
    return prediction.buffer_bytes


@dataclass
class KernelEvaluator:
    """Scores candidate kernels of one model (see the module doc).

    ``program``: a :class:`fuseflow.Program`; ``inputs``: the forward's inputs (data, or
    :class:`~fuseflow.explore.Density`); ``module``: the linalg module to partition (default
    the program's import; a rewritten one for reassociation); ``orders``: legal orders
    evaluated per group (best first); ``arch``: the architecture; ``formats``: declared
    input formats (``Schedule.formats``, e.g. a plan's pruned weights as CSR).
    """

    program: object
    inputs: tuple
    module: object = None
    orders: int = 3
    arch: Arch | None = None
    formats: dict = field(default_factory=dict)
    """Declared input formats (``Schedule.formats``), beside the program's own."""
    evaluated: int = 0
    """Candidate kernels (group x order) predicted so far."""
    batches: int = 0
    """Partitions run through the kernel pipeline so far."""
    _options: dict = field(default_factory=dict, repr=False)
    _table: dict = field(default_factory=dict, repr=False)
    _plans: dict = field(default_factory=dict, repr=False)
    _sources: list = field(default_factory=list, repr=False)
    _analyses: dict = field(default_factory=dict, repr=False)
    _products: dict = field(default_factory=dict, repr=False)
    _baselined: bool = field(default=False, repr=False)
    _predictions: dict = field(default_factory=dict, repr=False)
    _fingerprints: dict = field(default_factory=dict, repr=False)
    reused: int = 0
    """Candidate predictions taken from an isomorphic kernel with the same input statistics
    (``share``), not predicted again."""
    read: int = 0
    """Candidate kernels read (:class:`KernelAnalysis`): those whose text (up to the order
    of their ops and value names) matches no kernel read before."""
    analyzed: int = 0
    """Distinct kernel structures analysed and planned (the rest reuse their plans)."""
    share: bool = True
    """Share analyses and plans between structurally identical kernels (False: plan every
    kernel itself; for checking)."""

    axes: list | None = None
    """The per-kernel candidate generators (:mod:`fuseflow.explore.axes`; default: the
    ``orders`` best legal orders only)."""

    def __post_init__(self):
        self.module = self.module if self.module is not None else self.program.module
        if self.axes is None:
            self.axes = default_axes(self.orders)
        self._costs = cost_table(self.arch or Arch())
        self._sources = [source(v) for v in list(self.inputs) + list(self.program.param_values)]

    def share_with(self, other: "KernelEvaluator") -> None:
        """Uses ``other``'s statistics of tensors, plans and analyses (an evaluator of another
        reassociation variant of the same model: its tensors keep their statistics, the
        reassociated chain's result those of the original's, and structurally identical
        kernels are planned once)."""
        self._table = other._table
        self._plans = other._plans
        self._analyses = other._analyses
        self._products = other._products
        self._predictions = other._predictions
        self._fingerprints = other._fingerprints

    # -- partitions ------------------------------------------------------------------------

    def kernel_module(self, groups: list[tuple[str, ...]]):
        """The module partitioned into ``groups`` (unit names; every unit in one group),
        up to scheduling: ``(module, {kernel name: group index})``."""
        program = self.program
        fusion = tuple(tuple(g) for g in groups)
        kernel_of = assign_kernels(program.exported, fusion, program.plan)
        module = _clone(self.module)
        with module.context:
            formats = {**program.formats, **self.formats}
            if formats:
                declare_formats(module, program.input_names, formats)
            tag_groups(module, kernel_of)
            phase = Pipeline.phase(KERNEL_PHASE, {"fuseflow-partition": {"mode": "groups"}})
            before, _ = phase.split(SchedulePass.ARGUMENT)
            before.run(module)
        self.batches += 1
        names = {kernel_label(i, g): i for i, g in enumerate(fusion)}
        return module, names

    def baseline(self, units: list[str]) -> None:
        """Predicts the unfused model (one kernel per unit, default orders) once: the
        statistics of every intermediate tensor."""
        if self._baselined:
            return
        self._baselined = True
        module, _ = self.kernel_module([(u,) for u in units])
        with module.context, shared_analyses():
            self._walk(module, predict_missing=True)

    def evaluate(self, groups: list[frozenset], unit_order: list[str]) -> None:
        """Evaluates every group of ``groups`` not evaluated yet (batched; see the module
        doc); :meth:`options` then gives each one's evaluated orders. A batch the kernel
        pipeline rejects is split in halves until the rejected group is alone (it gets no
        options: it cannot form a kernel)."""
        pending = [g for g in groups if g not in self._options]
        batches: list[list[frozenset]] = []
        while pending or batches:
            if batches:
                batch = batches.pop()
            else:
                batch, rest, used = [], [], set()
                for g in pending:
                    if used.isdisjoint(g) and self._fits(batch + [g]):
                        batch.append(g)
                        used |= g
                    else:
                        rest.append(g)
                pending = rest
            if not self._run_batch(batch, unit_order):
                if len(batch) == 1:
                    self._options[batch[0]] = []
                else:
                    batches += [batch[:len(batch) // 2], batch[len(batch) // 2:]]

    def _run_batch(self, batch: list[frozenset], unit_order: list[str]) -> bool:
        used = set().union(*batch)
        partition = [tuple(sorted(g, key=unit_order.index)) for g in batch]
        partition += [(u,) for u in unit_order if u not in used]
        try:
            module, names = self.kernel_module(partition)
        except mlir.MLIRError as err:
            log.debug("batch of %d groups rejected: %s", len(batch), err)
            return False
        with module.context, shared_analyses():
            env = self._walk(module, predict_missing=False)
            for op in kernels(module):
                group = frozenset(partition[names[kernel_name(op)]])
                if group in self._options:
                    continue
                try:
                    self._options[group] = self._score(op, group, env)
                except LoweringError as err:
                    log.debug("group %s not lowerable: %s", sorted(group), err.message)
                    self._options[group] = []
        return True

    def _fits(self, batch: list[frozenset]) -> bool:
        return self.graph.is_acyclic(batch)

    def options(self, group: frozenset) -> list[Option]:
        """The evaluated orders of ``group`` (empty if it cannot be lowered)."""
        return self._options.get(group, [])

    # -- statistics ------------------------------------------------------------------------

    def _walk(self, module, predict_missing: bool) -> dict:
        """Statistics of every value of ``@main`` (kernel results from the table; with
        ``predict_missing`` predicted in program order and added to it)."""
        fn = next(op.operation for op in module.body.operations
                  if op.operation.name == "func.func")
        entry = fn.regions[0].blocks[0]
        env: dict = {arg: src for arg, src in zip(entry.arguments, self._sources)}
        for op in entry.operations:
            op = op.operation
            if op.name == "fuse.kernel":
                keys = _result_keys(op, self._products)
                missing = [k for k in keys if k not in self._table]
                if missing:
                    if not predict_missing:
                        raise ValueError(f"kernel {kernel_name(op)} computes a tensor the "
                                         "unfused model does not; call baseline() first")
                    analysis = KernelAnalysis.of(op)
                    order = next(iter(legal_orders(analysis, 1, ORDER_ATTEMPTS)))
                    pred = self._predict(op, analysis.attempt(order), env)
                    for key, out in zip(keys, pred.outputs):
                        self._table[key] = _Estimated(out)
                for value, key in zip(op.results, keys):
                    env[value] = self._table[key]
            elif op.name in LAYOUT_OPS:
                env[op.results[0]] = layout_stats(op, tensor_format(op.results[0].type),
                                                  env[op.operands[0]])
        return env

    def _graph_stats(self, op, plan: KernelPlan, env: dict) -> list[TensorStats]:
        types = graph_input_types(plan, [v.type for v in op.operands])
        values: dict = {}

        def stats_of(graph_input):
            if isinstance(graph_input, int):
                return env[op.operands[graph_input]]
            if id(graph_input) not in values:
                values[id(graph_input)] = _view(graph_input, stats_of(graph_input.source))
            return values[id(graph_input)]

        return [stats_of(i).stats(tensor_format(t)) for i, t in zip(plan.inputs, types)]

    def _predict(self, op, plan: KernelPlan, env: dict, structure=None,
                 choice: Choice | None = None):
        """The cost model's prediction of ``op`` under ``plan`` (the plan of ``choice``'s
        order and block; ``choice``'s forks are applied to its block graph)."""
        parallel = choice.parallel if choice is not None else ()
        block = choice.block if choice is not None else ()
        key = (structure or _structure(op), plan.order, parallel, block)
        if key not in self._plans or not self.share:
            types = graph_input_types(plan, [v.type for v in op.operands])
            arch = self.arch or Arch()
            shaped = forked_plan(plan, parallel, arch.lanes) if parallel else plan
            graph = plan_graph(shaped, types)
            costs = graph_costs(graph, self._costs, arch)
            self._plans[key] = (graph, topological(graph), costs)
        graph, order, costs = self._plans[key]
        stats = self._graph_stats(op, plan, env)
        if self.share:
            # The prediction is a function of the graph (the key) and of its inputs'
            # statistics: a kernel whose inputs have the same statistics as an isomorphic
            # kernel's (a later decoder layer's) takes its prediction.
            key = (key, tuple(self._fingerprint(s) for s in stats))
            known = self._predictions.get(key)
            if known is not None:
                self.reused += 1
                return known
        # A forked graph is walked by the reference rules: their fork deals round robin
        # (lanes beyond a level's coordinates idle), the compiled one evenly.
        pred = predict_graph(graph, stats, order=order, costs=costs, reference=bool(parallel))
        if self.share:
            self._predictions[key] = pred
        return pred

    def _fingerprint(self, stats: TensorStats) -> tuple:
        """Everything the cost model reads of ``stats``, exactly (floats by their bits,
        measured arrays by their bytes), computed once per statistics object."""
        known = self._fingerprints.get(id(stats))
        if known is None or known[0] is not stats:
            known = self._fingerprints[id(stats)] = (stats, stats_key(stats))
        return known[1]

    def _plans_of(self, op) -> tuple[object, KernelContext]:
        """A key of the kernel's structure and its :class:`~fuseflow.explore.axes.
        KernelContext` (its analysis and plans under its ``orders`` best legal orders), read
        and planned once per structure (the kernels of every decoder layer share them).
        Kernels are the same when their text is, up to the order of their ops and value
        names (:func:`_structure`, cheap), or when their expressions and operand and result
        types are (after reading the kernel). A kernel the lowering rejects is rejected
        again, unread, for the same text."""
        text = _structure(op)
        if self.share and text in self._analyses:
            known = self._analyses[text]
            if isinstance(known, LoweringError):
                raise known
            return known
        self.read += 1
        try:
            analysis = KernelAnalysis.of(op)
            key = (tuple(str(v.expr) for v in analysis.variants),
                   tuple(str(t) for t in analysis.input_types),
                   tuple(str(t) for t in analysis.result_types))
            if not self.share or key not in self._analyses:
                plans = {}
                for order in legal_orders(analysis, self.orders, ORDER_ATTEMPTS):
                    plans[tuple(order)] = analysis.attempt(order)
                self._analyses[key] = (key, KernelContext(analysis, plans))
                self.analyzed += 1
        except LoweringError as err:
            self._analyses[text] = err
            raise
        self._analyses[text] = self._analyses[key]
        return self._analyses[key]

    def _score(self, op, group: frozenset, env: dict) -> list[Option]:
        """Every choice the axes generate for the kernel, predicted (a choice the lowering
        or ``sam-parallelize`` rejects is left out)."""
        structure, kernel = self._plans_of(op)
        options = []
        for choice in choices(self.axes, kernel):
            try:
                plan = kernel.plan(choice)
                pred = self._predict(op, plan, env, structure, choice)
            except (LoweringError, ParallelizeError) as err:
                log.debug("group %s: %s not lowerable: %s", sorted(group), choice, err)
                continue
            self.evaluated += 1
            lanes = choice.lanes
            physical = (self.arch or Arch()).lanes
            lanes = min(lanes, physical) if physical else lanes
            cost = Cost(pred.cycles, buffer_bytes(pred), pred.total("bytes_written"),
                        float(lanes))
            options.append(Option(group, tuple(choice.order), cost, pred.total("ops"),
                                  pred.total("bytes_read"), choice.parallel, choice.block))
        return options

    graph: object = None
    """The :class:`~fuseflow.explore.opgraph.OpGraph` batches are checked against."""


def stats_key(stats: TensorStats) -> tuple:
    """A hashable key of everything in ``stats`` (equal keys: equal statistics, bit for bit:
    floats by their hex form, so 0.0 and -0.0 differ; arrays by dtype, shape and bytes)."""
    levels = tuple((_float_key(lv.fibers),
                    _float_key(lv.items), _float_key(lv.empty), lv.size,
                    _array_key(lv.coords), _array_key(lv.by_parent),
                    _array_key(lv.empty_by_parent),
                    None if lv.size_groups is None
                    else tuple(_array_key(a) for a in lv.size_groups))
                   for lv in stats.levels)
    return (stats.fmt, levels, _float_key(stats.values), _float_key(stats.nonzeros),
            stats.measured)


def _float_key(x):
    return float(x).hex() if isinstance(x, float) else (type(x).__name__, x)


def _array_key(a):
    if a is None:
        return None
    a = np.asarray(a)
    return (a.dtype.str, a.shape, a.tobytes())


def _clone(module):
    from fuseflow.compiler import clone_module

    return clone_module(module)


_NAMES = re.compile(r'(name = |fuseflow\.(?:node|group|module) = )"[^"]*"')
_VALUES = re.compile(r"%[\w$.-]+")
_DEFS = re.compile(r"  (%[\w$.-]+(?::\d+)?(?:, %[\w$.-]+(?::\d+)?)*) = ")


def _structure(op) -> str:
    """A kernel's ops and types without its name and its ops' FX nodes, groups and modules,
    in a canonical order with canonical value names (:func:`canonical_body`): equal for
    structurally identical kernels (planning reads none of them), e.g. the same group in
    two decoder layers, whose ops the partition may place in another order."""
    text = op_of(op).get_asm(use_local_scope=True)
    text = _NAMES.sub(r'\1""', text[text.index("\n"):])  # without its operands' names
    canonical = canonical_body(text)
    if canonical is not None:
        return canonical
    names: dict[str, str] = {}      # unexpected text: values renamed by first occurrence
    return "raw" + _VALUES.sub(lambda m: names.setdefault(m.group(), f"%v{len(names)}"), text)


def canonical_body(text: str) -> str | None:
    """A serialization of a kernel's body (its printed text from its entry block on)
    independent of the order of its ops and of the printer's value numbers: the entry
    block's arguments by position, then the top-level ops in a canonical topological order
    (of the ops whose operands are placed, the one whose text is least), each naming its
    operands by the position of their op (``%s3``, ``%s3#1``) and its own region's values
    by first occurrence. It is a serialization of the kernel (its ops and their operands),
    so equal texts are equal kernels up to the order of independent ops; isomorphic kernels
    may still differ on a tie between equal texts (a miss, not a wrong match). None: text
    not of the expected shape."""
    lines = text.split("\n")
    if len(lines) < 3 or lines[0] or not lines[1].startswith("^bb0(") \
            or not lines[-1].startswith("})"):
        return None
    head, tail = lines[1], lines[-1]
    args = {name: f"%a{i}" for i, name in enumerate(_VALUES.findall(head))}
    blocks: list[list[str]] = []
    for line in lines[2:-1]:
        if line.startswith("  ") and line[2:3] not in (" ", "}", "^", ""):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
        else:
            return None
    defs: dict[str, int] = {}
    ops: list[tuple[str, list[str]]] = []
    for index, block in enumerate(blocks):
        m = _DEFS.match(block[0])
        own = [d.split(":")[0] for d in m.group(1).split(", ")] if m else []
        for d in own:
            if d in defs or d in args:
                return None
            defs[d] = index
        ops.append(("\n".join(block), own))
    users: dict[int, list[int]] = {}
    waiting = []
    for index, (body, own) in enumerate(ops):
        deps = {defs[t] for t in _VALUES.findall(body) if t in defs and t not in own}
        waiting.append(len(deps))
        for d in deps:
            users.setdefault(d, []).append(index)
    placed: dict[int, int] = {}

    def render(index: int) -> str:
        body, own = ops[index]
        mine = {d: f"%r{k}" for k, d in enumerate(own)}
        local: dict[str, str] = {}

        def name(m):
            t = m.group()
            if t in mine:
                return mine[t]
            if t in args:
                return args[t]
            if t in defs:
                return f"%s{placed[defs[t]]}"
            return local.setdefault(t, f"%l{len(local)}")

        return _VALUES.sub(name, body)

    ready = {i: render(i) for i, n in enumerate(waiting) if n == 0}
    out = [_VALUES.sub(lambda m: args[m.group()], head)]
    while ready:
        best = min(ready, key=ready.__getitem__)
        out.append(ready.pop(best))
        placed[best] = len(placed)
        for user in users.get(best, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready[user] = render(user)
    if len(placed) != len(ops):
        return None
    out.append(tail)
    return "\n".join(out)


def _result_keys(kernel, products: dict | None = None) -> list[tuple]:
    """What each result of a ``fuse.kernel`` is, independent of the partition: the FX node
    of the compute op yielding it, that op's rank among the node's ops, the result number.
    A product :func:`~fuseflow.explore.reassociate.reassociate` made is its own tensor, but
    the outer one of a chain computes the value the original outer product did: it takes
    that product's key from ``products`` (FX node -> key of a product's result, filled here
    from the products of the original association)."""
    from fuseflow.explore.reassociate import REASSOCIATED_ATTR

    body = kernel.regions[0].blocks[0]
    ops = [op_of(o) for o in body.operations]
    rank: dict = {}
    counts: dict = {}
    for o in ops:
        if NODE_ATTR in o.attributes:
            node = mlir.StringAttr(o.attributes[NODE_ATTR]).value
            rank[o] = (node, counts.get(node, 0))
            counts[node] = counts.get(node, 0) + 1
    keys = []
    for value in ops[-1].operands:
        producer = defining_op(value)
        while producer is not None and producer.name == "tensor.cast":
            value = producer.operands[0]
            producer = defining_op(value)
        number = next(i for i, r in enumerate(producer.results) if r == value)
        if REASSOCIATED_ATTR in producer.attributes:
            role = mlir.StringAttr(producer.attributes[REASSOCIATED_ATTR]).value
            key = ("reassociated", role, number)
            if products is not None and role.startswith("outer:"):
                key = products.get(role[len("outer:"):], key)
        else:
            key = rank.get(producer, (str(producer.name), 0)) + (number,)
            if products is not None and producer.name == "linalg.matmul" and key[0]:
                products.setdefault(key[0], key)
        keys.append(key)
    return keys


def _view(view, src):
    """The statistics source of a host view (expand or transpose of a dense operand)."""
    if isinstance(src, Measured):
        array = src.tree.to_dense()
        if view.kind == "transpose":
            array = np.transpose(array, list(view.permutation))
        else:
            array = array.reshape(mlir.RankedTensorType(view.result_type).shape)
        return Measured(FiberTree.from_dense(np.ascontiguousarray(array),
                                             tensor_format(view.result_type)))
    if isinstance(src, Density):
        return src
    fmt = tensor_format(view.result_type)
    return _Estimated(TensorStats.from_density(fmt, min(src.known.density, 1.0)))


__all__ = ["Cost", "KernelEvaluator", "LoweringError", "Option", "ZERO", "buffer_bytes",
           "pareto"]

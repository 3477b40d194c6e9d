"""The static cost model of a compiled model: ``predict(compiled, *inputs) -> Prediction``.

It walks ``@main`` of the lowered module as the runtime does (:mod:`fuseflow.runtime`), but
binds *statistics* instead of tensors: each ``sam.graph`` is predicted from the statistics of
its inputs (:func:`fuseflow.explore.kernel.predict_graph`) and its results' statistics are
estimated from what its writers receive, so the next kernel reads estimated intermediates.
Host layout ops (views, format casts) are applied to data where the data is known (model
inputs and parameters) and to statistics otherwise.

An input is given as data (a torch tensor, numpy array or :class:`FiberTree`: statistics
measured exactly, in whatever format a kernel binds it), as a :class:`Density` (the density
model), or as :class:`TensorStats` (converted by the density model when a kernel binds it in
another format).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from fuseflow.errors import FuseFlowError
from fuseflow.explore.compiled import _TOTALS
from fuseflow.explore.kernel import (
    cost_table,
    detail_walk,
    graph_costs,
    predict_graph,
    ready_program,
    topological,
)
from fuseflow.explore.prediction import KernelPrediction, Prediction
from fuseflow.explore.stats import DensityModel, TensorStats
from fuseflow.layout import LAYOUT_OPS, apply
from fuseflow.sim.arch import Arch
from fuseflow.sim.formats import FiberTree, TensorFormat
from fuseflow.sim.loader import input_formats, load_graph, tensor_format


class CostModelError(FuseFlowError, ValueError):
    """A module or input the cost model cannot handle; names the op or input."""


@dataclass(frozen=True)
class Density:
    """An input known only by its density: every entry nonzero independently with
    probability ``density`` (the shape comes from the compiled model)."""

    density: float

    def stats(self, fmt: TensorFormat) -> TensorStats:
        return TensorStats.from_density(fmt, self.density)


@dataclass(eq=False)
class Measured:
    """An input known by its data; statistics are measured once per format."""

    tree: FiberTree
    _by_format: dict = field(default_factory=dict, repr=False)
    derived: dict = field(default_factory=dict, repr=False)
    """:func:`layout_key` of a host layout op -> the Measured result of applying it to this
    data."""

    def stats(self, fmt: TensorFormat) -> TensorStats:
        known = self._by_format.get(id(fmt))       # the same format object: no hashing
        if known is not None and known[0] is fmt:
            return known[1]
        stats = next((known for other, known in self._by_format.values() if other == fmt),
                     None) or TensorStats.measure(self.tree, fmt)
        if stats.fmt is not fmt:                   # the same format, as the caller's object
            stats = replace(stats, fmt=fmt)
        self._by_format[id(fmt)] = (fmt, stats)
        return stats


class _Estimated:
    """A value known by statistics only (a kernel result, or given as TensorStats)."""

    __slots__ = ("known",)

    def __init__(self, known: TensorStats):
        self.known = known

    def __eq__(self, other) -> bool:
        return isinstance(other, _Estimated) and self.known == other.known

    def __hash__(self) -> int:
        return hash(self.known)

    def __repr__(self) -> str:
        return f"_Estimated({self.known!r})"

    def stats(self, fmt: TensorFormat) -> TensorStats:
        known = self.known
        return known if known.fmt is fmt else known.convert(fmt)


def source(value):
    """The statistics source of one input: ``Measured`` data, a ``Density``, or estimated
    ``TensorStats``."""
    if isinstance(value, (Density, Measured, _Estimated)):
        return value
    if isinstance(value, TensorStats):
        return _Estimated(value)
    if isinstance(value, FiberTree):
        return Measured(value)
    if isinstance(value, torch.Tensor):
        return Measured(FiberTree.from_torch(value.detach()))
    if isinstance(value, np.ndarray):
        return Measured(FiberTree.from_dense(value))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Density(float(value))
    raise CostModelError(f"cannot predict from an input of type {type(value).__name__}; valid: "
                         "a torch tensor, numpy array, FiberTree, TensorStats, Density or a "
                         "density (float)")


class MeasuredCache:
    """The :class:`Measured` sources of tensors, to share between cost models: every compile
    of one :class:`fuseflow.Program` binds the same parameter tensors, so cost models of its
    configurations given one cache (``CostModel(compiled, cache=cache)``) measure each
    parameter's statistics once per format for all of them (and apply a host layout op to
    it once).

    A tensor's entry is used while the tensor is the same object at the same version (torch
    counts in-place changes in ``Tensor._version``; a change made through ``.data`` is not
    counted): a new or changed tensor is measured again. Other values are not cached."""

    def __init__(self):
        self._entries: dict[int, tuple] = {}

    def source(self, value):
        """The statistics source of ``value`` (:func:`source`), measured once per tensor."""
        if not isinstance(value, torch.Tensor):
            return source(value)
        known = self._entries.get(id(value))
        if known is not None and known[0] is value and known[1] == value._version:
            return known[2]
        measured = source(value)
        # The tensor is kept so that its id is not reused by another while cached.
        self._entries[id(value)] = (value, value._version, measured)
        return measured


class CostModel:
    """The cost model of one compiled model; reads its module once, predicts many times.

    Reuse :class:`Measured` inputs across calls to measure each input's statistics once,
    and a :class:`MeasuredCache` across the cost models of one program's compiles
    (``cache``) to measure its parameters' once. A compiled kernel whose input statistics
    are the very objects of the previous call (statistics are immutable) is not predicted
    again: its prediction is reused (``reuse=False`` predicts every kernel). With the same
    :class:`Measured` inputs, a repeated call reuses every kernel; with one input changed,
    the kernels that do not depend on it.
    """

    def __init__(self, compiled, arch: Arch | None = None, cache: MeasuredCache | None = None):
        self.arch = arch or Arch()
        self._costs = cost_table(self.arch)
        self.params = [(cache.source if cache is not None else source)(p)
                       for p in compiled.params]
        self.input_names = list(compiled.input_names)
        fn = next(op.operation for op in compiled.module.body.operations
                  if op.operation.name == "func.func")
        entry = fn.regions[0].blocks[0]
        slot = {arg: i for i, arg in enumerate(entry.arguments)}
        self._steps: list[tuple] = []       # the walk of @main, without MLIR objects

        def read(value, op):
            if value not in slot:
                raise CostModelError(f"{op.location}: '{op.name}' reads a value no kernel or "
                                     "host layout op computes")
            return slot[value]

        # One object per distinct format, so that a kernel result read by the next kernel
        # in its own format is recognized by identity (no conversion, no comparison).
        canonical: dict[TensorFormat, TensorFormat] = {}

        def intern(fmt: TensorFormat) -> TensorFormat:
            return canonical.setdefault(fmt, fmt)

        # Slots holding a kernel's result hold its TensorStats itself (no _Estimated
        # wrapper per prediction); which slots they are is known here.
        produced: set[int] = set()
        for op in entry.operations:
            op = op.operation
            if op.name == "sam.graph":
                graph = load_graph(op)
                graph.outputs = [intern(f) for f in graph.outputs]
                args = [read(v, op) for v in op.operands]
                formats = [intern(f) for f in input_formats(op)]
                # Per input: its slot, format, whether a kernel's result, and the source
                # and statistics bound last (a Measured source's are the same objects).
                plan = [(a, f, a in produced, [None, None]) for a, f in zip(args, formats)]
                results = _results(op, slot)
                produced.update(results)
                # The program field holds the kernel's compiled program once it exists (the
                # inputs' formats equal the graph's, so it is the same at every prediction),
                # its function and the reference walk of its blocks (detail_walk).
                self._steps.append(("graph", graph, topological(graph), formats, plan,
                                    results, [None, None, None], [None, None],
                                    graph_costs(graph, self._costs, self.arch)))
            elif op.name in LAYOUT_OPS:
                args = [read(list(op.operands)[0], op)]
                fmt = intern(tensor_format(op.results[0].type))
                self._steps.append(("layout", op, (fmt, DensityModel(fmt), layout_key(op)),
                                    args, _results(op, slot), [None, None], args[0] in produced))
            elif op.name not in ("func.return", "tensor.empty", "arith.constant"):
                raise CostModelError(f"{op.location}: op '{op.name}' outside a sam.graph; the "
                                     "cost model needs a module lowered with fuseflow-to-dataflow")
        self._slots = len(slot)
        self._arguments = len(entry.arguments)
        self._shapes = [tensor_format(arg.type).shape for arg in entry.arguments]

    def predict(self, *inputs, reuse: bool = True, reference: bool = False) -> Prediction:
        """Predicts every kernel of the model on ``inputs`` (the forward's inputs; parameters
        come from the compiled model). ``reuse``: take a kernel's prediction from the
        previous call when its input statistics are the same objects (see the class doc);
        ``reference``: predict every kernel by the reference walk (nothing reused,
        nothing compiled)."""
        values = [source(v) for v in inputs] + self.params
        if len(values) != self._arguments:
            raise CostModelError(f"expected {self._arguments - len(self.params)} inputs, "
                                 f"got {len(inputs)}")
        env = values + [None] * (self._slots - len(values))
        kernels = []
        compiled = KernelPrediction.compiled
        for step in self._steps:
            if step[0] == "graph":
                _, graph, order, formats, plan, results, program, last, costs = step
                stats = []
                for a, fmt, produced, bound in plan:
                    src = env[a]
                    if produced:                # a kernel's result: its statistics
                        stats.append(src if src.fmt is fmt else src.convert(fmt))
                    elif src is bound[0]:       # the same Measured source: its statistics
                        stats.append(bound[1])
                    else:
                        if a < self._arguments:
                            self._check_shape(a, src)
                        known = src.stats(fmt)
                        stats.append(known)
                        # Measured statistics are kept per format: the same objects next time.
                        bound[0], bound[1] = (src, known) if type(src) is Measured \
                            else (None, None)
                if reference:
                    kernel = predict_graph(graph, stats, order=order, costs=costs,
                                           reference=True)
                elif program[0] is not None:
                    if reuse and last[0] is not None and all(map(operator.is_, stats, last[0])):
                        kernel = last[1]
                    else:
                        # kernel.run_compiled, its function and detail made once
                        kernel = compiled(graph.name, stats, program[1](stats), _TOTALS,
                                          program[2])
                    last[0], last[1] = stats, kernel
                else:       # walked until compiled (kernel.COMPILE_AFTER counts the walks)
                    kernel = predict_graph(graph, stats, order=order, costs=costs)
                    if kernel._totals is not None:
                        ready = ready_program(graph, costs, stats)
                        if ready is not None:
                            program[:] = ready, ready._fn, detail_walk(graph, order, costs)
                        last[0], last[1] = stats, kernel
                kernels.append(kernel)
                for r, out in zip(results, kernel.outputs):
                    env[r] = out
            else:
                _, op, (fmt, model, derived), (a,), (r,), last, produced = step
                src = env[a]
                # An estimated source is a new wrapper per call: its statistics decide.
                key = src if produced or not isinstance(src, _Estimated) else src.known
                if a < self._arguments and last[0] is not key:
                    self._check_shape(a, src)
                if not (reuse and not reference and last[0] is key):
                    last[0], last[1] = key, layout_stats(
                        op, fmt, _Estimated(src) if produced else src, model, derived)
                env[r] = last[1]
        return Prediction(kernels)

    def _check_shape(self, a: int, src) -> None:
        """A CostModelError naming argument ``a`` (``input_names`` names the parameters
        too) when ``src`` (data or statistics) has another shape than the compiled model's
        (a density has none)."""
        fmt = src.tree.fmt if isinstance(src, Measured) else \
            src.known.fmt if isinstance(src, _Estimated) else None
        if fmt is not None and tuple(fmt.shape) != tuple(self._shapes[a]):
            raise CostModelError(f"input '{self.input_names[a]}' has shape "
                                 f"{tuple(fmt.shape)}; the compiled model takes "
                                 f"{tuple(self._shapes[a])}")


def _results(op, slot: dict) -> list[int]:
    """Numbers the results of ``op`` as new environment slots."""
    out = []
    for value in op.results:
        slot[value] = len(slot)
        out.append(slot[value])
    return out


def predict(compiled, *inputs, arch: Arch | None = None) -> Prediction:
    """Predicts tokens, operations, bytes and cycles of every kernel of ``compiled`` (a
    :class:`fuseflow.CompiledModel`) on ``inputs``, without simulating."""
    return CostModel(compiled, arch).predict(*inputs)


def layout_key(op) -> tuple:
    """What a host layout op computes from its source: its name, result type and attributes
    (the same for the op in every compile of one program: a :class:`Measured` parameter
    shared by their cost models, :class:`MeasuredCache`, applies it once)."""
    return (op.name, str(op.results[0].type),
            tuple(sorted((name, str(op.attributes[name])) for name in op.attributes)))


def layout_stats(op, fmt: TensorFormat, src, model: DensityModel | None = None,
                 key: tuple | None = None):
    """A host layout op on known data (memoized per source and :func:`layout_key`, ``key``
    when known), or on statistics (density preserved; ``model``: :class:`DensityModel` of
    ``fmt``, to predict many times)."""
    if isinstance(src, Measured):
        key = key if key is not None else layout_key(op)
        if key not in src.derived:
            src.derived[key] = Measured(apply(op, src.tree))
        return src.derived[key]
    if isinstance(src, Density):
        return src
    density = min(src.known.density, 1.0)
    return _Estimated(model(density) if model is not None
                      else TensorStats.from_density(fmt, density))

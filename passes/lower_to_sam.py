"""``fuseflow-lower-to-sam``: replaces each ``fuse.kernel`` by a ``sam.graph``.

Before::

    %k = "fuse.kernel"(%A, %x) ({
    ^bb0(%a: tensor<4x5xf32, #CSR>, %v: tensor<5xf32>):
      %r = linalg.generic {..., iterator_types = ["parallel", "reduction"]}
             ins(%a, %v : ...) outs(%fill : tensor<4xf32>) { mulf; addf }
      gpu.yield %r : tensor<4xf32>
    }) {name = "k0", fuseflow.schedule = {block = array<i64>, formats = ["dense"],
        order = ["d0", "d1"], parallel = []}} : (...) -> tensor<4xf32>

After (SpMV, order d0,d1)::

    %g = "sam.graph"(%A, %x) ({
    ^bb0(%a: ..., %v: ...):
      %root = "sam.root"() : () -> !sam.ref
      %i, %ri = "sam.scan"(%root, %a) {level = 0} ...
      ... scanners, repeaters, sam.intersect, sam.array, sam.alu {op = "mul"}, sam.reduce ...
      "sam.level_write"(%i) {result = 0, level = 0} : (!sam.crd) -> ()
      "sam.value_write"(%y) {result = 0} : (!sam.val<f32, array<i64>>) -> ()
      gpu.yield
    }) {name = "k0", fuseflow.einsum = "...", fuseflow.schedule = {...}} : (...) -> tensor<4xf32>

The pass reads each kernel's ``fuseflow.schedule`` (:mod:`fuseflow.passes.schedule`) and
nothing else: a kernel without one is an error (run ``fuseflow-schedule`` first). The schedule
is copied onto the graph. Every sam op is located ``loc("<name>"(<origin>))``: its stable name
(:mod:`fuseflow.dialects.naming`: kind and per-kind index, ``scan0``, ``alu3``) around the
location of the linalg op it came from.

The lowering plans, then emits (:mod:`fuseflow.passes.lowering.plan`): planning (fused
expression + order -> :class:`KernelPlan`) builds no IR; :func:`emit_kernel` builds the plan.

Kernels with blocked (BSR) levels first have their blocked dimensions split into block and
offset variables (:mod:`fuseflow.passes.lowering.blocking`): other operands are then read
through host-side ``tensor.expand_shape`` views placed before the graph, and results written
expanded are turned back into the kernel's result types after it (``linalg.transpose``,
``tensor.collapse_shape``), e.g. for BSR SpMM::

    %bx = tensor.expand_shape %B [[0, 1], [2]] ... : tensor<6x3xf32> into tensor<3x2x3xf32>
    %g = "sam.graph"(%A, %bx) ({ ... four scans of %A's levels ... })
        {fuseflow.schedule = {..., order = ["d0", "d2", "d3", "d4", "d1"], ...}} : ...
    %c = tensor.collapse_shape %g [[0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>

Public API (also used outside the pass): :class:`KernelAnalysis` ``.of(kernel)``,
:func:`legal_orders`, :func:`default_order`, :func:`plan_kernel`, :class:`KernelPlan`
(``.size``), :func:`emit_kernel`, :func:`lower_module`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, create_container
from fuseflow.passes.base import Pass, PassFailure, emit_error
from fuseflow.passes.ir_utils import build_transpose, op_of
from fuseflow.passes.lowering.builder import emit_ops
from fuseflow.passes.lowering.einsum import LoweringError
from fuseflow.passes.lowering.plan import (
    ORDER_ATTEMPTS,
    HostView,
    KernelAnalysis,
    KernelPlan,
    default_order,
    legal_orders,
    plan_kernel,
)
from fuseflow.passes.schedule import (
    SCHEDULE_ATTR,
    KernelSchedule,
    ScheduleError,
    SchedulePass,
    kernel_name,
    kernels,
    read_schedule,
)

__all__ = [
    "ORDER_ATTEMPTS", "KernelAnalysis", "KernelPlan", "KernelSchedule", "LowerToSamPass",
    "LoweringError", "default_order", "emit_kernel", "legal_orders", "lower_module",
    "plan_kernel",
]


@dataclass(frozen=True)
class LowerToSamPass(Pass):
    """Lowers fuse.kernel regions of linalg.generic ops to sam.graph dataflow graphs."""

    ARGUMENT = "fuseflow-lower-to-sam"
    plans: dict | None = field(default=None, compare=False, repr=False,
                               metadata={"option": False})
    """Python only: a plan cache (kernel name -> KernelPlan) reused by :func:`lower_module`
    and left holding the plans this run used."""

    def run(self, module) -> None:
        used = lower_module(module, self.plans)
        if self.plans is not None:
            self.plans.clear()
            self.plans.update(used)


def lower_module(module, plans: dict[str, KernelPlan] | None = None) -> dict[str, KernelPlan]:
    """Replaces every ``fuse.kernel`` of ``module`` by its ``sam.graph`` in the order of its
    schedule. ``plans`` (kernel name -> plan, from an earlier lowering of the same IR in the
    same context) are reused for the kernels whose order they match; the others are planned.
    Returns the plans used. Errors are emitted at their locations, then PassFailure."""
    plans = plans or {}
    used: dict[str, KernelPlan] = {}
    failed = False
    for op in kernels(module):
        name = kernel_name(op)
        try:
            schedule = read_schedule(op)
            if schedule is None:
                raise ScheduleError(f"kernel '{name}' has no '{SCHEDULE_ATTR}' attribute; run "
                                    f"{SchedulePass.ARGUMENT} before {LowerToSamPass.ARGUMENT}",
                                    op.location)
            plan = plans.get(name)
            if plan is None or plan.order != schedule.order or plan.block != schedule.block:
                plan = plan_kernel(KernelAnalysis.of(op), schedule.order, schedule.block)
            emit_kernel(op, plan, schedule)
            used[name] = plan
        except (LoweringError, ScheduleError) as err:
            emit_error(err.loc or op.location, err.message)
            failed = True
    if failed:
        raise PassFailure(f"{LowerToSamPass.ARGUMENT}: see the located errors")
    return used


def emit_kernel(kernel_op, plan: KernelPlan, schedule: KernelSchedule | None = None):
    """Replaces ``kernel_op`` by the host views, ``sam.graph`` and result views of ``plan``;
    the graph carries ``schedule`` (default: the kernel's). Returns the graph op."""
    kernel = op_of(kernel_op)
    schedule = schedule if schedule is not None else read_schedule(kernel)
    values: dict[int, object] = {}

    def value(graph_input):
        if isinstance(graph_input, HostView):
            return values[id(graph_input)]
        return kernel.operands[graph_input]

    with mlir.InsertionPoint(kernel), kernel.location:
        for view in plan.views:
            values[id(view)] = _build_view(view, value(view.source))
        attrs = {"name": kernel.attributes["name"] if "name" in kernel.attributes
                 else mlir.StringAttr.get("graph"),
                 "fuseflow.einsum": mlir.StringAttr.get(plan.einsum)}
        if schedule is not None:
            attrs[SCHEDULE_ATTR] = schedule.to_attr()
        graph, block = create_container("sam.graph", [value(i) for i in plan.inputs],
                                        list(plan.result_types), attrs, loc=kernel.location)
    with mlir.InsertionPoint(block):
        emit_ops(plan.ops, list(block.arguments), kernel.location,
                 indices=schedule is not None and bool(schedule.parallel))
        mlir.Operation.create(TERMINATOR, operands=[], loc=kernel.location)
    for old, new in zip(kernel.results, _kernel_results(kernel, graph, plan)):
        old.replace_all_uses_with(new)
    kernel.erase()
    return graph


def _build_view(view: HostView, source):
    """The host op of ``view`` reading ``source``, at the current insertion point."""
    if view.kind == "transpose":
        return build_transpose(source, view.result_type, list(view.permutation)).results[0]
    if view.kind == "convert":
        return mlir.tensor.CastOp(view.result_type, source).result
    shape = list(mlir.RankedTensorType(view.result_type).shape)
    return mlir.tensor.ExpandShapeOp(view.result_type, source,
                                     [list(g) for g in view.reassociation], [], shape).result


def _kernel_results(kernel, graph, plan: KernelPlan) -> list:
    """The values that replace ``kernel``'s results: the graph's, with results written
    transposed or over split dimensions transposed and collapsed back to the kernel's types on
    the host."""
    values = list(graph.results)
    for index, view in plan.result_views.items():
        with mlir.InsertionPoint(kernel), kernel.location:
            value = values[index]
            if view.permutation is not None:
                value = build_transpose(value, view.expanded_type,
                                        list(view.permutation)).results[0]
            if view.reassociation is not None:
                value = mlir.tensor.CollapseShapeOp(kernel.results[index].type, value,
                                                    [list(g) for g in view.reassociation]).result
            values[index] = value
    return values

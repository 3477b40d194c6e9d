"""A :class:`~fuseflow.compiler.Schedule` applied to a module's kernels, and the kernels listed.

After partitioning, every ``fuse.kernel`` gets its ``fuseflow.schedule``
(:mod:`fuseflow.passes.schedule`): the fields a per-kernel setting gives
(``Schedule(kernels={key: settings})``, keys resolved by :mod:`fuseflow.kernel_settings`),
else the model-wide ``Schedule.order``, else the default rules. Each kernel is read and planned
once per compile (:func:`~fuseflow.passes.lowering.plan.shared_analyses`): the schedule pass,
both schedule verifications and the lowering share its analysis and plans.

:class:`KernelInfo` describes one compiled kernel: name, index, schedule, legal orders, size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.dialects.ir import walk
from fuseflow.frontend import MODULE_ATTR, NODE_ATTR
from fuseflow.kernel_settings import KernelSettings, resolve_kernel
from fuseflow.passes.lowering.plan import KernelAnalysis, KernelPlan, legal_orders, plan_kernel
from fuseflow.passes.schedule import KernelSchedule, SchedulePass, kernel_name, kernels
from fuseflow.pipeline import Pipeline


def kernel_entries(module, groups: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Kernel name -> the names a per-kernel setting may use for it besides its own: the group
    entries it was formed from (``groups``), the FX nodes and submodules of its ops."""
    entries = {}
    for op in kernels(module):
        name = kernel_name(op)
        found = list(groups.get(name, ()))
        for inner in walk(op):
            for attr in (NODE_ATTR, MODULE_ATTR):
                if attr in inner.attributes:
                    value = mlir.StringAttr(inner.attributes[attr]).value
                    if value and value not in found:
                        found.append(value)
        entries[name] = tuple(found)
    return entries


def settings_by_kernel(module, kernel_settings: dict, groups: dict) -> dict[str, KernelSettings]:
    """Kernel name -> its settings (``kernel_settings``: key -> :class:`KernelSettings`)."""
    if not kernel_settings:
        return {}
    names = [kernel_name(op) for op in kernels(module)]
    entries = kernel_entries(module, groups)
    resolved: dict[str, KernelSettings] = {}
    for key, settings in kernel_settings.items():
        name = resolve_kernel(key, names, entries)
        previous = resolved.get(name, KernelSettings())
        resolved[name] = KernelSettings(settings.order or previous.order,
                                        settings.parallel or previous.parallel,
                                        settings.block or previous.block)
    return resolved


def schedule_pass_steps(order: tuple[str, ...], per_kernel: dict[str, KernelSettings],
                        names: list[str]) -> list[SchedulePass]:
    """The ``fuseflow-schedule`` passes that give each kernel its settings, the model-wide
    ``order`` where a kernel sets none, and the defaults to the rest."""
    if not per_kernel:
        return [SchedulePass(order=tuple(order))]
    steps = []
    for name in names:
        settings = per_kernel.get(name, KernelSettings())
        options = settings.pass_options()
        if order and "order" not in options:
            options["order"] = ",".join(order)
        if options:
            steps.append(SchedulePass.from_options({"kernel": name, **options}))
    steps.append(SchedulePass())
    return steps


def schedule_kernels(module, order: tuple[str, ...], kernel_settings: dict,
                     groups: dict[str, tuple[str, ...]]) -> Pipeline:
    """The passes that set every kernel's ``fuseflow.schedule`` (see the module doc); key
    errors are raised here."""
    per_kernel = settings_by_kernel(module, kernel_settings, groups)
    names = [kernel_name(op) for op in kernels(module)]
    return Pipeline.of(*schedule_pass_steps(order, per_kernel, names))


@dataclass
class KernelInfo:
    """One compiled kernel: its name, index in program order, schedule, fused expression and
    size (planned ``sam`` ops); :meth:`legal_orders` lists the orders it can be lowered in."""

    name: str
    index: int
    schedule: KernelSchedule
    einsum: str
    size: int
    _kernel_op: object = field(repr=False, compare=False)

    def legal_orders(self, limit: int | None = None) -> list[tuple[str, ...]]:
        """The kernel's legal dataflow orders, best first (at most ``limit``)."""
        return list(legal_orders(KernelAnalysis.of(self._kernel_op), limit))

    def parallel_variables(self, order=None) -> tuple[str, ...]:
        """The loop names whose level ``sam-parallelize`` can fork into lanes under ``order``
        (default: the kernel's), outermost first."""
        from fuseflow.passes.sam_parallelize import parallel_variables

        analysis = KernelAnalysis.of(self._kernel_op)
        return parallel_variables(plan_kernel(analysis, order or self.schedule.order))


def kernel_infos(module, plans: dict[str, KernelPlan]) -> list[KernelInfo]:
    """The :class:`KernelInfo` of each scheduled kernel of ``module`` (before lowering), with
    the plans its lowering used."""
    from fuseflow.passes.schedule import read_schedule

    infos = []
    for index, op in enumerate(kernels(module)):
        name = kernel_name(op)
        plan = plans[name]
        infos.append(KernelInfo(name, index, read_schedule(op), str(plan.einsum),
                                plan.size, op))
    return infos

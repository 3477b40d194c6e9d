"""Fusion groups expressed against the PyTorch model, mapped to its exported compute nodes.

A fusion configuration other than ``unfused``/``full`` names the kernels of a model:

* a configuration name of a fusion plan (an application's
  :class:`~fuseflow.apps.base.FusionPlan`, or any object with its ``stages``,
  ``fusion_groups`` and ``assign``), ``"partial"``, whose kernels list stage names;
* or explicit groups, a sequence of kernels, each a sequence of names; a name is a stage of
  the plan (when one is given), a submodule's qualified name (``"layer1"`` takes every op
  executed inside ``model.layer1``; ``""`` is the root module's own ops) or an FX node name.

:func:`assign_kernels` maps every compute node of the exported program to its kernel name;
reshapes and other data movement take the kernel of their first user. Compute nodes no
group names get a kernel of their own. The frontend turns the map into ``fuseflow.group``
attributes on the imported ops (:func:`fuseflow.frontend.tag_groups`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fuseflow.errors import FuseFlowError
from fuseflow.tracing import TracedOp, model_relative, node_modules, program_ops

if TYPE_CHECKING:
    from fuseflow.apps.base import FusionPlan


class GroupingError(FuseFlowError, ValueError):
    """A fusion configuration that does not fit the model; the message names the problem."""


def traced_ops(program) -> list[TracedOp]:
    """The compute nodes of an exported (wrapped) program, with their model-relative module."""
    return program_ops(program, model_relative)


def _groups_of(fusion, plan: FusionPlan | None) -> tuple[tuple[str, ...], ...]:
    if isinstance(fusion, str):
        if plan is None:
            raise GroupingError(f"fusion configuration {fusion!r} needs an application's fusion "
                                "plan; valid without one: 'unfused', 'full' or explicit groups")
        if fusion not in plan.fusion_groups:
            raise GroupingError(f"unknown fusion configuration {fusion!r}; valid: "
                                f"{', '.join(plan.fusion_groups)} or explicit groups")
        return tuple(plan.fusion_groups[fusion])
    groups = tuple(tuple(g) if not isinstance(g, str) else (g,) for g in fusion)
    if not groups or any(not g for g in groups):
        raise GroupingError("explicit fusion groups must be a non-empty sequence of non-empty "
                            "sequences of names")
    return groups


def kernel_label(index: int, group: tuple[str, ...]) -> str:
    """The name of the kernel formed from fusion group ``index`` (``g1:layer2+softmax``)."""
    names = "+".join(group) if len(group) <= 3 else f"{group[0]}+...+{group[-1]}"
    return f"g{index}:{names}"


def group_entries(fusion, plan: FusionPlan | None = None) -> dict[str, tuple[str, ...]]:
    """Kernel name -> the group entries (stage, submodule or node names) it is formed from."""
    return {kernel_label(i, g): g for i, g in enumerate(_groups_of(fusion, plan))}


def assign_kernels(program, fusion, plan: FusionPlan | None = None) -> dict[str, str]:
    """FX node name -> kernel name for every node of ``program`` that computes or moves data."""
    trace = traced_ops(program)
    stage_of = plan.assign(trace) if plan is not None else {}
    stages = {s.name for s in plan.stages} if plan is not None else set()
    groups = _groups_of(fusion, plan)
    movement = node_modules(program, model_relative)
    kernel_of: dict[str, str] = {}
    for index, group in enumerate(groups):
        name = kernel_label(index, group)
        for entry in group:
            matched = [t.node for t in trace if _matches(entry, t, stage_of, stages)]
            if not matched and _moves_data(entry, movement):
                continue        # a submodule or node that only moves data (a transpose, a view)
            if not matched:
                valid = sorted(stages | {t.module for t in trace} | {t.node for t in trace})
                raise GroupingError(f"fusion group entry {entry!r} matches no op of the model; "
                                    f"valid names: {', '.join(repr(v) for v in valid)}")
            for node in matched:
                if node in kernel_of and kernel_of[node] != name:
                    raise GroupingError(f"node {node} is in two fusion groups: "
                                        f"{kernel_of[node]} and {name}")
                kernel_of[node] = name
    for t in trace:
        kernel_of.setdefault(t.node, f"single:{t.node}")
    _assign_data_movement(program, kernel_of)
    return kernel_of


def _matches(entry: str, traced: TracedOp, stage_of: dict, stages: set) -> bool:
    if entry in stages:
        return stage_of.get(traced.node) == entry
    if entry == traced.node:
        return True
    module = traced.module
    return module == entry or (entry != "" and module.startswith(entry + "."))


def _moves_data(entry: str, movement: dict[str, str]) -> bool:
    """Whether ``entry`` names a data-movement node, or a submodule whose nodes all move data
    (nothing to fuse: they follow their users' kernels)."""
    return entry in movement or any(
        module == entry or (entry != "" and module.startswith(entry + "."))
        for module in movement.values())


def _assign_data_movement(program, kernel_of: dict[str, str]) -> None:
    for node in reversed(list(program.graph.nodes)):
        if node.op != "call_function" or node.name in kernel_of:
            continue
        users = [u.name for u in node.users if u.name in kernel_of]
        if users:
            kernel_of[node.name] = kernel_of[users[0]]

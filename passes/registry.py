"""The one registry of FuseFlow passes and named pipelines.

Maps each command-line argument to a lazy factory (module path, class name) so that listing
passes imports nothing heavy. Named phase pipelines are registered beside the passes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from fuseflow.passes.base import Pass, PipelineError


@dataclass(frozen=True)
class PassEntry:
    """A registered pass: its argument and where its class lives."""

    argument: str
    module: str
    class_name: str

    def load(self) -> type[Pass]:
        cls = getattr(importlib.import_module(self.module), self.class_name)
        assert cls.ARGUMENT == self.argument, f"{self.class_name}.ARGUMENT != {self.argument}"
        return cls


def _entry(argument: str, stem: str, class_name: str) -> PassEntry:
    return PassEntry(argument, f"fuseflow.passes.{stem}", class_name)


PASSES: dict[str, PassEntry] = {
    e.argument: e
    for e in (
        _entry("fuseflow-partition", "partition", "PartitionPass"),
        _entry("fuseflow-hoist-views", "hoist_views", "HoistViewsPass"),
        _entry("fuseflow-schedule", "schedule", "SchedulePass"),
        _entry("fuseflow-verify-schedule", "verify_schedule", "VerifySchedulePass"),
        _entry("fuseflow-lower-to-sam", "lower_to_sam", "LowerToSamPass"),
        _entry("fuseflow-verify-kernels", "verify_kernels", "VerifyKernelsPass"),
        _entry("sam-parallelize", "sam_parallelize", "SamParallelizePass"),
        _entry("sam-verify", "sam_verify", "SamVerifyPass"),
    )
}

# Named phase pipelines, each closed by a verify pass.
PIPELINES: dict[str, str] = {
    # Upstream clean-up that puts every linalg op in generic form.
    "fuseflow-normalize": "func.func(linalg-generalize-named-ops),canonicalize,cse",
    # Linalg to scheduled fuse.kernel regions.
    "fuseflow-to-kernels": "fuseflow-normalize,fuseflow-partition,fuseflow-hoist-views,"
                           "fuseflow-verify-kernels,fuseflow-schedule,fuseflow-verify-schedule",
    # Scheduled kernels (possibly edited by hand) to sam.graph dataflow graphs.
    "fuseflow-kernels-to-dataflow": "fuseflow-verify-schedule,fuseflow-lower-to-sam,"
                                    "sam-parallelize,sam-verify",
    "fuseflow-to-dataflow": "fuseflow-to-kernels,fuseflow-kernels-to-dataflow",
}


def is_registered(argument: str) -> bool:
    """Whether ``argument`` names a FuseFlow pass or named pipeline."""
    return argument in PASSES or argument in PIPELINES


def pass_class(argument: str) -> type[Pass]:
    """The class of the registered pass ``argument``; error lists the registered passes."""
    entry = PASSES.get(argument)
    if entry is None:
        raise PipelineError(f"unknown pass '{argument}'; registered passes: {', '.join(sorted(PASSES))}")
    return entry.load()


def create(argument: str, options: dict[str, str] | None = None) -> Pass:
    """Instantiates the pass ``argument`` from textual options."""
    return pass_class(argument).from_options(options or {})

"""``fuseflow-verify-schedule``: every ``fuse.kernel`` has a legal ``fuseflow.schedule``.

Closes the kernel phase (``fuseflow-to-kernels``) and opens the dataflow phase
(``fuseflow-kernels-to-dataflow``), so a schedule edited by hand is checked before it is
lowered. A schedule is legal when it is well formed (:class:`~.schedule.KernelSchedule`), the
lowering can realize its order (planning answers; the error lists at most 20 legal orders,
best first), its parallel variables are index variables of the kernel with factors >= 1, its
block sizes are positive and its formats are those of the kernel's results. Errors are located
at the kernel. The IR is not changed.

Rejected (``error: schedule of kernel 'k0': order (d0, d1, d2) visits the levels of
T1[d2,d1] out of storage order; legal orders: d0,d2,d1``)::

    %k = "fuse.kernel"(%A, %B) ({ ... }) {name = "k0", fuseflow.schedule = {block = array<i64>,
        formats = ["dense"], order = ["d0", "d1", "d2"], parallel = []}} : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.passes.base import Pass, PassFailure, emit_error
from fuseflow.passes.lowering.einsum import LoweringError
from fuseflow.passes.lowering.plan import KernelAnalysis
from fuseflow.passes.schedule import (
    SCHEDULE_ATTR,
    ScheduleError,
    SchedulePass,
    kernel_name,
    kernels,
    read_schedule,
    schedule_errors,
)


def kernel_errors(op) -> list[tuple[object, str]]:
    """(location, message) of each reason ``op``'s schedule is missing or illegal."""
    name = kernel_name(op)
    try:
        schedule = read_schedule(op)
        if schedule is None:
            return [(op.location, f"kernel '{name}' has no '{SCHEDULE_ATTR}' attribute; run "
                                  f"{SchedulePass.ARGUMENT} first")]
        analysis = KernelAnalysis.of(op)
    except (LoweringError, ScheduleError) as err:
        return [(err.loc or op.location, err.message)]
    return [(op.location, f"schedule of kernel '{name}': {message}")
            for message in schedule_errors(analysis, schedule, op)]


@dataclass(frozen=True)
class VerifySchedulePass(Pass):
    """Checks that every fuse.kernel has a legal fuseflow.schedule."""

    ARGUMENT = "fuseflow-verify-schedule"

    def run(self, module) -> None:
        errors = [e for op in kernels(module) for e in kernel_errors(op)]
        for loc, message in errors:
            emit_error(loc, message)
        if errors:
            raise PassFailure(f"{self.ARGUMENT} found {len(errors)} errors")

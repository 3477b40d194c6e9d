"""The container ops ``fuse.kernel`` and ``sam.graph``: how their operands and results are
declared (plain data; no MLIR).

A container takes any number of tensors of any types and returns any number. IRDL binds each
constraint variable to one type per op, also across the elements of a ``variadic`` operand, so
a single ``variadic`` list would force every input to one type. A container therefore declares
:data:`INPUT_SLOTS` variadic operand slots and :data:`RESULT_SLOTS` variadic result slots, each
with a variable of its own: slot ``k`` holds the ``k``-th *run* of the operand list, a maximal
sequence of consecutive operands of one type, and ``operandSegmentSizes`` /
``resultSegmentSizes`` give the run lengths (then zeros). IRDL checks that every run is of one
type; ``dialects/verify.py`` checks the runs are maximal, so the segment sizes are a function
of the types and each container has one spelling.

The caps are on runs, not on values: ``fuseflow-partition`` orders a kernel's inputs and
results by type (so a kernel has a run per distinct type: about ten for a whole GPT-3 fused
into one kernel), and a kernel of any size fits. More runs than slots raise
:class:`CapacityError` naming the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fuseflow.errors import FuseFlowError

INPUT_SLOTS = 64
"""Variadic operand slots of a container: the most runs of equal consecutive input types."""
RESULT_SLOTS = 16
"""Variadic result slots of a container: the most runs of equal consecutive result types."""
TERMINATOR = "gpu.yield"
"""The op container bodies end in (IRDL cannot declare a terminator; see docs/dialects.md)."""


class CapacityError(FuseFlowError, ValueError):
    """A container whose inputs or results form more runs of one type than it has slots."""


@dataclass(frozen=True)
class Container:
    """A container op's IRDL declaration."""

    dialect: str
    name: str
    summary: str

    @property
    def op_name(self) -> str:
        return f"{self.dialect}.{self.name}"


CONTAINERS = (
    Container("fuse", "kernel", "A kernel: inputs are tensors captured from outside, results "
              "are the tensors its body yields. The body is one block whose arguments match the "
              "inputs."),
    Container("sam", "graph", "One kernel's dataflow graph: inputs are tensors, results are "
              "filled by the level and value writers (attribute `result`). The body is one "
              "block whose arguments match the inputs."),
)


def type_runs(types: Sequence) -> list[int]:
    """Lengths of the maximal runs of equal consecutive items of ``types``."""
    runs: list[int] = []
    for index, item in enumerate(types):
        if index and item == types[index - 1]:
            runs[-1] += 1
        else:
            runs.append(1)
    return runs


def segment_sizes(types: Sequence, slots: int, what: str, noun: str) -> list[int]:
    """The segment sizes of ``types`` in ``slots`` slots: run lengths, then zeros.

    ``what`` names the op and ``noun`` the values ('inputs', 'results') in the error."""
    runs = type_runs(types)
    if len(runs) > slots:
        raise CapacityError(
            f"{what} has {len(types)} {noun} in {len(runs)} runs of equal consecutive types; "
            f"a container holds at most {slots} runs of {noun} (fuseflow.dialects.containers)")
    return runs + [0] * (slots - len(runs))


def input_segments(types: Sequence, what: str) -> list[int]:
    """``operandSegmentSizes`` of a container ``what`` whose inputs have ``types``."""
    return segment_sizes(types, INPUT_SLOTS, what, "inputs")


def result_segments(types: Sequence, what: str) -> list[int]:
    """``resultSegmentSizes`` of a container ``what`` whose results have ``types``."""
    return segment_sizes(types, RESULT_SLOTS, what, "results")


def by_type(values: Sequence, type_of) -> list:
    """``values`` ordered so that equal types are adjacent: types in order of first
    appearance, values of one type in their order (fewest runs, stable)."""
    groups: dict = {}
    for value in values:
        groups.setdefault(type_of(value), []).append(value)
    return [v for group in groups.values() for v in group]

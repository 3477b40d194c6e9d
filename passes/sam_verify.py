"""``sam-verify``: closes the dataflow phase (``fuseflow-to-dataflow``).

Reports, at its location, every op that must not survive lowering to dataflow graphs — any
``fuse.kernel`` and any ``linalg.*`` op — runs the ``fuse`` and ``sam`` dialect verifiers
of :mod:`fuseflow.dialects.verify` and, on graphs those accept, the stream-control check of
:mod:`fuseflow.passes.stream_control` (streams a block combines carry the same stop levels).
The IR is not changed.

Accepted::

    %g = "sam.graph"(%A, %x) ({ ... gpu.yield }) {...} : (...) -> tensor<4xf32>

Rejected (``error: 'fuse.kernel' op was not lowered to a 'sam.graph'``)::

    %k = "fuse.kernel"(%A, %x) ({ ... linalg.generic ... gpu.yield %r }) {...}
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.dialects import verify
from fuseflow.dialects.ir import find_ops
from fuseflow.passes.base import Pass, PassFailure
from fuseflow.passes.ir_utils import LAYOUT_OPS, is_kernel_op
from fuseflow.passes.stream_control import check_graph


def _leftover_message(op) -> str | None:
    """Why ``op`` must not survive the dataflow phase, or None if it may."""
    if op.name == "fuse.kernel":
        return "was not lowered to a 'sam.graph'"
    if is_kernel_op(op):
        return "is left after lowering to dataflow; every linalg op must become a 'sam.graph'"
    return None


@dataclass(frozen=True)
class SamVerifyPass(Pass):
    """Checks that only dataflow graphs are left: no fuse.kernel or linalg op, valid sam IR."""

    ARGUMENT = "sam-verify"

    def run(self, module) -> None:
        diagnostics = [
            verify.Diagnostic(op.location, f"'{op.name}' op {_leftover_message(op)}")
            for op in find_ops(module, lambda op: _leftover_message(op) is not None,
                               prune=lambda op: op.name in LAYOUT_OPS)
        ]
        diagnostics += verify.check_module(module)
        if not diagnostics:             # stream structure is only defined on valid graphs
            for graph in find_ops(module, lambda op: op.name == "sam.graph"):
                diagnostics += check_graph(graph)
        if not verify.emit(diagnostics):
            raise PassFailure(f"sam-verify found {len(diagnostics)} errors")

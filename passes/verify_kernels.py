"""``fuseflow-verify-kernels``: closes the kernel phase (``fuseflow-to-kernels``).

Reports, at its location, every ``linalg.*`` op that partitioning left outside a
``fuse.kernel`` (except ``linalg.transpose``, a host layout op of dense tensors that
``fuseflow-hoist-views`` puts there; see :mod:`fuseflow.layout`), and runs the ``fuse`` dialect verifiers of :mod:`fuseflow.dialects.verify`
(bodies match inputs, end in the terminator, yield the result types). The IR is not changed.

Accepted::

    %k = "fuse.kernel"(%A, %B) ({
    ^bb0(%a: ..., %b: ...):
      %r = linalg.generic {...} ins(%a, %b : ...) outs(...)
      gpu.yield %r : tensor<4x3xf32>
    }) {...} : (...) -> tensor<4x3xf32>

Rejected (``error: 'linalg.generic' op is outside every 'fuse.kernel' ...``)::

    %r = linalg.generic {...} ins(%A, %B : ...) outs(...)
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.dialects import verify
from fuseflow.dialects.ir import find_ops
from fuseflow.passes.base import Pass, PassFailure
from fuseflow.passes.ir_utils import LAYOUT_OPS, is_kernel_op


@dataclass(frozen=True)
class VerifyKernelsPass(Pass):
    """Checks that every linalg op is inside a fuse.kernel and that kernels are well formed."""

    ARGUMENT = "fuseflow-verify-kernels"

    def run(self, module) -> None:
        diagnostics = [
            verify.Diagnostic(op.location, f"'{op.name}' op is outside every 'fuse.kernel' after "
                                           "partitioning")
            for op in find_ops(module, is_kernel_op,
                               prune=lambda op: op.name in ("fuse.kernel",) + LAYOUT_OPS)
        ]
        diagnostics += verify.check_module(module, dialects=("fuse",))
        if not verify.emit(diagnostics):
            raise PassFailure(f"fuseflow-verify-kernels found {len(diagnostics)} errors")

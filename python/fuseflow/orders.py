"""Every legal dataflow order of a compiled model's kernels, sized and optionally simulated.

>>> compiled = fuseflow.Program(model, inputs).compile()
>>> for row in fuseflow.orders.kernel_orders(compiled, inputs, simulate=True):
...     print(row.kernel, row.order, row.tokens, row.cycles)

For each kernel (or the one ``kernel`` names: its name, a unique part of it, or its index),
each order of :meth:`~fuseflow.scheduling.KernelInfo.legal_orders`
(best first, as the lowering ranks them) is applied to that kernel alone
(:meth:`~fuseflow.CompiledModel.reschedule`: the other kernels keep their plans) and sized:

* ``ops``: the ``sam`` ops of its graph (its plan's size);
* ``tokens`` and ``predicted_cycles``: the static cost model's prediction for that kernel on
  the inputs (:mod:`fuseflow.explore.costmodel`; None where it cannot predict);
* with ``simulate``: the kernel's simulated ``cycles``, the model's ``total_cycles``, and
  whether the output matches ``expected`` (when given).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Callable

log = logging.getLogger(__name__)


@dataclass
class OrderResult:
    """One legal order of one kernel (see the module doc)."""

    kernel: str
    index: int
    """The kernel's index in program order."""
    rank: int
    """Position among the kernel's legal orders, best first (0: the lowering's default)."""
    order: tuple[str, ...]
    scheduled: bool
    """The order the compiled model was scheduled with."""
    ops: int
    tokens: float | None = None
    predicted_cycles: float | None = None
    cycles: int | None = None
    total_cycles: int | None = None
    matches: bool | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        out = asdict(self)
        out["order"] = list(self.order)
        return out


def kernel_orders(compiled, inputs, kernel=None, *, simulate: bool = False,
                  engine: str = "fast", arch=None, limit: int | None = None, expected=None,
                  rtol: float = 1e-4, atol: float = 1e-5,
                  progress: Callable[[str], None] | None = None) -> list[OrderResult]:
    """The legal orders of ``compiled``'s kernels on ``inputs`` (see the module doc).

    ``limit``: at most this many orders per kernel; ``expected``: PyTorch's output, to check
    simulated ones against; ``progress(description)`` is called before each order."""
    from fuseflow.explore.costmodel import CostModelError, predict

    infos = compiled.kernels
    if kernel is not None:
        infos = [select_kernel(infos, kernel)]
    rows = []
    for info in infos:
        for rank, order in enumerate(info.legal_orders(limit)):
            if progress is not None:
                progress(f"{info.name}: {','.join(order)}")
            scheduled = tuple(order) == tuple(info.schedule.order)
            variant = compiled if scheduled else compiled.reschedule(info.index, order=order)
            row = OrderResult(info.name, info.index, rank, tuple(order), scheduled,
                              variant.kernels[info.index].size)
            try:
                predicted = predict(variant, *inputs, arch=arch).kernels[info.index]
                row.tokens, row.predicted_cycles = predicted.tokens, predicted.cycles
            except CostModelError as err:
                log.info("no prediction for %s order %s: %s", info.name, order, err)
            if simulate:
                result = variant.simulate(*inputs, engine=engine, arch=arch)
                row.cycles = result.run.kernels[info.index].result.cycles
                row.total_cycles = result.cycles
                if expected is not None:
                    from fuseflow.tools.execute import compare

                    row.matches = compare(result.output, expected, rtol, atol)[0]
            rows.append(row)
    return rows


def select_kernel(infos: list, key):
    """The :class:`~fuseflow.scheduling.KernelInfo` ``key`` names: an index, a kernel name,
    or a part of exactly one name (``"layer2"`` for ``g1:layer2.aggregate``)."""
    from fuseflow.errors import ArgumentError

    names = [k.name for k in infos]
    if isinstance(key, int) or (isinstance(key, str) and key.lstrip("-").isdigit()):
        index = int(key)
        if -len(infos) <= index < len(infos):
            return infos[index]
        raise ArgumentError(f"kernel index {index} is out of range; the model has "
                            f"{len(infos)} kernels: {', '.join(names)}")
    exact = [k for k in infos if k.name == key]
    partial = exact or [k for k in infos if key in k.name]
    if len(partial) == 1:
        return partial[0]
    what = "names several kernels" if partial else "names no kernel"
    raise ArgumentError(f"kernel {key!r} {what}; kernels: {', '.join(names)} (or an index "
                        f"0..{len(infos) - 1})")

"""Simulation engines, selected by name from one table.

``reference`` is the literal cycle-by-cycle engine (the executable specification); ``fast``
simulates each block once over whole streams (numpy), with the same results. Engines
share the signature ``run(graph, inputs, arch, trace) -> KernelResult`` and must agree on
outputs, cycles and statistics.
"""

from __future__ import annotations

from typing import Callable

from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import fast, reference
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.graph import BlockGraph
from fuseflow.sim.memory import account
from fuseflow.sim.stats import KernelResult
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError

ENGINES: dict[str, Callable[..., KernelResult]] = {
    "reference": reference.run,
    "fast": fast.run,
}

__all__ = ["ENGINES", "run", "DeadlockError", "SimulationError", "StreamError"]


def run(graph: BlockGraph, inputs: list[FiberTree], arch: Arch | None = None,
        engine: str = "reference", trace: bool = False) -> KernelResult:
    """Simulates ``graph`` on ``inputs`` (``inputs[i]`` binds ``attrs['tensor'] == i``).

    With ``arch.memory`` set, the result also carries the kernel's off-chip traffic and cost
    (:func:`fuseflow.sim.memory.account`).
    """
    impl = ENGINES.get(engine)
    if impl is None:
        raise ValueError(f"unknown engine '{engine}'; valid engines: {', '.join(ENGINES)}")
    arch = arch or Arch()
    result = impl(graph, list(inputs), arch, trace=trace)
    if arch.memory is not None:
        result.memory = account(arch.memory, graph, list(inputs), result.outputs, result.cycles)
    return result

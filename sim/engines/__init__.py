"""Simulation engines, selected by name from one table.

``reference`` is the literal cycle-by-cycle engine (the executable specification); ``fast``
simulates each block once over whole streams (numpy), or over chunks of them when they would
outgrow its memory budget, with the same results. Engines share the signature
``run(graph, inputs, arch, trace, chunking) -> KernelResult`` and must agree on outputs,
cycles and statistics.
"""

from __future__ import annotations

from typing import Callable

from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import fast, reference
from fuseflow.sim.engines.fast_chunked import DEFAULT_MEMORY_BUDGET, Chunking
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.graph import BlockGraph
from fuseflow.sim.lanes import fold_lanes
from fuseflow.sim.memory import account
from fuseflow.sim.stats import KernelResult
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError


def _reference(graph, inputs, arch, trace, chunking):
    """The reference engine keeps token queues, not arrays: ``chunking`` does not apply."""
    return reference.run(graph, inputs, arch, trace=trace)


ENGINES: dict[str, Callable[..., KernelResult]] = {
    "reference": _reference,
    "fast": fast.run,
}

__all__ = ["DEFAULT_MEMORY_BUDGET", "ENGINES", "Chunking", "run", "DeadlockError", "SimulationError", "StreamError"]


def run(graph: BlockGraph, inputs: list[FiberTree], arch: Arch | None = None,
        engine: str = "reference", trace: bool = False, memory_budget: int | None = DEFAULT_MEMORY_BUDGET,
        chunk_tokens: int | None = None) -> KernelResult:
    """Simulates ``graph`` on ``inputs`` (``inputs[i]`` binds ``attrs['tensor'] == i``).

    ``memory_budget`` (bytes; None: no limit) and ``chunk_tokens`` bound the fast engine's
    memory (:class:`~fuseflow.sim.engines.fast_chunked.Chunking`); they change no result.
    Forks of more than ``arch.lanes`` lanes are folded onto that many
    (:func:`~fuseflow.sim.lanes.fold_lanes`). With ``arch.memory`` set, the result also carries the kernel's off-chip traffic and cost
    (:func:`fuseflow.sim.memory.account`).
    """
    impl = ENGINES.get(engine)
    if impl is None:
        raise ValueError(f"unknown engine '{engine}'; valid engines: {', '.join(ENGINES)}")
    chunking = Chunking(memory_budget=memory_budget, chunk_tokens=chunk_tokens)
    arch = arch or Arch()
    if arch.lanes is not None:
        graph = fold_lanes(graph, arch.lanes)
    result = impl(graph, list(inputs), arch, trace=trace, chunking=chunking)
    if arch.memory is not None:
        result.memory = account(arch.memory, graph, list(inputs), result.outputs, result.cycles)
    return result

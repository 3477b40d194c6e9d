"""The one JSON form of every ``fuseflow`` command's results (``docs/results-json.md``).

A document records what produced it (version, command, seed, engine, architecture) and one
:class:`Run` per compiled-and-simulated configuration: its schedule, totals, the check against
PyTorch, and per kernel its schedule, cycles, totals and per-block statistics. The JSON Schema
is ``results.schema.json`` beside this module (:data:`SCHEMA_PATH`); the test suite validates
every command's output against it.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_ID = "fuseflow-results/1"
"""The value of every document's ``schema`` key; bumped when the form changes incompatibly."""

SCHEMA_PATH = Path(__file__).with_name("results.schema.json")

BASELINE = "unfused"
"""The configuration speedups are relative to."""


@dataclass
class Run:
    """One target in one configuration: compiled, simulated and checked (or failed)."""

    target: str
    """Kernel or application name."""
    kind: str
    """``kernel`` or ``application``."""
    configuration: str
    """Fusion configuration of an application; ``default`` for a kernel."""
    schedule: dict[str, Any]
    """The :class:`fuseflow.Schedule` compiled: ``fusion``, ``order``, ``formats``."""
    dataset: str | None = None
    preset: str | None = None
    provenance: str | None = None
    """What an application's data set is made of: ``real``, ``real graph, synthetic features``,
    ``synthetic`` or ``graph file`` (``Application.provenance``)."""
    dense_weights: bool | None = None
    """For an application: whether it ran the dense variant (nothing declared sparse) rather
    than the published workload (pruned weights and masks declared sparse)."""
    extrapolation: dict[str, Any] | None = None
    """Set when the totals are extrapolated from simulations of fewer stacked units (GPT-3
    decoders): ``unit``, ``layers``, ``simulated`` depths, their ``cycles`` and the
    ``formula``; ``kernels`` are then those of the deepest simulated model."""
    sparsity: float | None = None
    scale: int | None = None
    status: str = "error"
    """``ok`` (matches PyTorch), ``mismatch`` or ``error`` (see :attr:`error`)."""
    error: str | None = None
    cycles: int | None = None
    """Total cycles: the sum over kernels (including memory time when modelled)."""
    matches_pytorch: bool | None = None
    max_abs_error: float | None = None
    compile_seconds: float | None = None
    simulate_seconds: float | None = None
    totals: dict[str, int] = field(default_factory=dict)
    """Sums over kernels of the counters of :meth:`KernelResult.summary`."""
    kernels: list[dict[str, Any]] = field(default_factory=list)
    """Per kernel, in execution order: see :func:`kernel_record`."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def schedule_dict(schedule) -> dict[str, Any]:
    """A :class:`fuseflow.Schedule` as JSON (explicit fusion groups as lists of names)."""
    fusion = schedule.fusion
    if not isinstance(fusion, str):
        fusion = [list(group) for group in fusion]
    return {"fusion": fusion, "order": list(schedule.order), "formats": dict(schedule.formats)}


def arch_dict(arch) -> dict[str, Any]:
    """An :class:`fuseflow.Arch` as JSON."""
    return {"fifo_depth": arch.fifo_depth, "latency": arch.latency,
            "initiation_interval": arch.initiation_interval,
            "block_costs": {kind: list(cost) for kind, cost in arch.block_costs},
            "memory": None if arch.memory is None else dataclasses.asdict(arch.memory)}


def kernel_record(name: str, result, schedule: dict[str, Any] | None,
                  cached: bool = False) -> dict[str, Any]:
    """One kernel's statistics: cycles, totals over its blocks, memory traffic, every block;
    whether the result came from a kernel cache."""
    return {"name": name, "schedule": schedule, "cycles": result.cycles,
            "total_cycles": result.total_cycles, "cached": cached, "summary": result.summary(),
            "memory": None if result.memory is None else result.memory.to_dict(),
            "blocks": [b.to_dict() for b in result.blocks.values()]}


def kernel_schedules(compiled) -> dict[str, dict[str, Any]]:
    """Per-kernel schedules of a compiled model, by kernel name (``compiled.kernels``, where
    the compiler provides it; empty otherwise)."""
    return {k.name: k.schedule.to_dict() for k in getattr(compiled, "kernels", None) or ()}


def fill_statistics(run: Run, compiled, result) -> None:
    """Records ``result``'s cycles, per-kernel statistics and totals in ``run``."""
    schedules = kernel_schedules(compiled)
    run.cycles = result.cycles
    run.kernels = [kernel_record(k.name, k.result, schedules.get(k.name), k.cached)
                   for k in result.run.kernels]
    run.totals = kernel_totals(run.kernels)


def kernel_totals(kernels: list[dict[str, Any]]) -> dict[str, int]:
    """The sum of the kernel records' summary counters (cycles excepted)."""
    totals: dict[str, int] = {}
    for kernel in kernels:
        for key, value in kernel["summary"].items():
            if key != "cycles":
                totals[key] = totals.get(key, 0) + value
    return totals


def speedups(runs: list[Run]) -> dict[str, dict[str, float]]:
    """Per target with a successful ``unfused`` run, its cycles over each configuration's."""
    out: dict[str, dict[str, float]] = {}
    for run in runs:
        base = next((r for r in runs if r.target == run.target and r.configuration == BASELINE
                     and r.cycles), None)
        if base is not None and run.cycles:
            out.setdefault(run.target, {})[run.configuration] = round(base.cycles / run.cycles, 4)
    return out


def document(runs: list[Run], *, command: list[str], seed: int, engine: str, arch) -> dict:
    """The results document of one command."""
    import torch

    import fuseflow

    return {
        "schema": SCHEMA_ID,
        "fuseflow_version": fuseflow.__version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": list(command),
        "environment": {"python": platform.python_version(), "torch": torch.__version__,
                        "platform": platform.platform()},
        "seed": seed,
        "engine": engine,
        "arch": arch_dict(arch),
        "runs": [r.to_dict() for r in runs],
        "speedups": speedups(runs),
    }


def write(doc: dict, path) -> Path:
    """Writes ``doc`` to ``path`` (its folder must exist); returns the path."""
    path = Path(path)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def load(path) -> dict:
    """Reads a results document; a file of another form is a ``ValueError`` naming it."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except OSError as err:
        raise ValueError(f"cannot read '{path}': {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"'{path}' is not JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_ID:
        raise ValueError(f"'{path}' is not a FuseFlow results file (expected \"schema\": "
                         f"\"{SCHEMA_ID}\"; write one with 'fuseflow run ... --json FILE')")
    return doc

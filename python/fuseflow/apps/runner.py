"""Runs an application in its fusion configurations: compile, simulate, check against PyTorch.

Each configuration's kernels run in order, each kernel's simulated output feeding the next
(the runtime binds real outputs, never PyTorch's). The published workload's sparse
declarations (``FusionPlan.sparse_formats``) apply unless ``dense_weights``. A record per
configuration gives total and per-kernel cycles, arithmetic operations (ALU + reducer, the
recomputation measure), value reads, wall times and the comparison with PyTorch. The model is
imported once (:class:`fuseflow.Program`): ``import_seconds`` is that import,
``compile_seconds`` each configuration's compile from it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from fuseflow.apps.base import FUSION_LEVELS


@dataclass
class ConfigRecord:
    """The outcome of one fusion configuration."""

    application: str
    preset: str
    dataset: str
    fusion: str
    engine: str
    provenance: str = ""
    dense_weights: bool = False
    cycles: int = 0
    kernels: dict[str, int] = field(default_factory=dict)
    ops: int = 0
    val_reads: int = 0
    matches_pytorch: bool = False
    max_abs_error: float = 0.0
    import_seconds: float = 0.0
    """The one import all configurations share."""
    compile_seconds: float = 0.0
    simulate_seconds: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def run_application(name: str, preset: str = "tiny", dataset: str | None = None,
                    fusion: tuple[str, ...] = FUSION_LEVELS, engine: str = "reference",
                    seed: int = 0, rtol: float = 1e-4, atol: float = 1e-5,
                    dense_weights: bool = False) -> list[ConfigRecord]:
    """Builds and imports ``name`` once and runs it in each configuration of ``fusion``."""
    import torch

    import fuseflow
    from fuseflow.apps import get_application

    app = get_application(name)
    model, inputs = app.build(preset, dataset, seed)
    dataset = dataset or app.default_datasets[preset]
    plan = app.plan(model)
    with torch.no_grad():
        expected = model(*inputs)
    records = []
    start = time.perf_counter()
    try:
        program, import_error = fuseflow.Program(model, inputs, plan), None
    except Exception as err:  # noqa: BLE001 - reported by every configuration
        program, import_error = None, err
    import_seconds = round(time.perf_counter() - start, 3)
    for level in fusion:
        rec = ConfigRecord(name, preset, dataset, level, engine, app.provenance(dataset),
                           dense_weights, import_seconds=import_seconds)
        try:
            if import_error is not None:
                raise import_error
            start = time.perf_counter()
            compiled = program.compile(plan.schedule(level, dense_weights))
            rec.compile_seconds = round(time.perf_counter() - start, 3)
            start = time.perf_counter()
            result = compiled.simulate(*inputs, engine=engine)
            rec.simulate_seconds = round(time.perf_counter() - start, 3)
        except Exception as err:  # noqa: BLE001 - reported per configuration, run continues
            rec.error = f"{type(err).__name__}: {err}".strip()
            records.append(rec)
            continue
        rec.cycles = result.cycles
        rec.kernels = {k: r.cycles for k, r in result.stats.items()}
        blocks = [b for r in result.stats.values() for b in r.blocks.values()]
        rec.ops = sum(b.ops for b in blocks)
        rec.val_reads = sum(b.val_reads for b in blocks)
        output = result.output
        rec.matches_pytorch = bool(torch.allclose(output, expected, rtol=rtol, atol=atol))
        rec.max_abs_error = float((output - expected).abs().max()) if output.numel() else 0.0
        records.append(rec)
    return records


def speedups(records: list[ConfigRecord], baseline: str = "unfused") -> dict[str, float]:
    """Cycles of ``baseline`` divided by each configuration's cycles (runs that succeeded)."""
    base = next((r for r in records if r.fusion == baseline and r.error is None), None)
    if base is None:
        return {}
    return {r.fusion: round(base.cycles / r.cycles, 3) for r in records
            if r.error is None and r.cycles}

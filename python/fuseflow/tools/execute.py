"""Compiles, simulates and checks the targets of ``fuseflow run``, one :class:`Run` each.

Every step reports to a :class:`fuseflow.tools.console.Steps` progress bar and logs at INFO
(shown with ``-v``). Failures of one configuration are recorded in its run (``status:
error``) and the others still run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from fuseflow.tools.results import Run, fill_statistics, kernel_totals, schedule_dict

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """What every run of one command shares."""

    engine: str
    arch: Any
    seed: int
    rtol: float
    atol: float
    workers: int = 1
    """Independent kernels simulated at once, in forked processes (same results)."""
    kernel_cache: Any = None
    """A folder (or :class:`fuseflow.KernelCache`) of kernel results: kernels simulated before
    on the same inputs are read from it (same results)."""


@dataclass
class Outcome:
    """A finished run, and the compiled model and simulation behind it (None on failure)."""

    run: Run
    compiled: Any = None
    result: Any = None


def compare(simulated, expected, rtol: float, atol: float) -> tuple[bool, float]:
    """Whether ``simulated`` matches PyTorch's ``expected`` (NaN equal to NaN), and the largest
    absolute difference."""
    import torch

    expected = expected.to_dense() if expected.layout != torch.strided else expected
    expected = expected.detach().to(simulated.dtype)
    ok = simulated.shape == expected.shape and torch.allclose(
        simulated, expected, rtol=rtol, atol=atol, equal_nan=True)
    if not ok and simulated.shape != expected.shape:
        return False, float("inf")
    err = (simulated - expected).abs().nan_to_num(0.0).max().item() if simulated.numel() else 0.0
    return ok, err


def execute(run: Run, model, inputs, schedule, settings: Settings, steps,
            program: "SharedImport | None" = None) -> Outcome:
    """Compiles ``model`` with ``schedule`` (from ``program``'s import when given), simulates
    it on ``inputs`` and checks it against PyTorch, advancing ``steps`` three times (compile,
    simulate, check)."""
    import torch

    import fuseflow

    label = f"{run.target} {run.configuration}" if run.kind == "application" else run.target
    outcome = Outcome(run)
    stage = "compile"
    try:
        steps.start(f"compiling {label}")
        start = time.perf_counter()
        compiled = program.compile(schedule) if program is not None else \
            fuseflow.compile(model, inputs, schedule)
        run.compile_seconds = round(time.perf_counter() - start, 3)
        steps.done()
        log.info("compiled %s in %.2f s", label, run.compile_seconds)
        stage = "simulate"
        steps.start(f"simulating {label} ({settings.engine} engine)")
        start = time.perf_counter()
        result = compiled.simulate(*inputs, arch=settings.arch, engine=settings.engine,
                                   workers=settings.workers, keep_intermediates=False,
                                   kernel_cache=settings.kernel_cache)
        run.simulate_seconds = round(time.perf_counter() - start, 3)
        steps.done()
        log.info("simulated %s in %.2f s: %d cycles", label, run.simulate_seconds, result.cycles)
    except Exception as err:  # noqa: BLE001 - recorded per run; the other runs still go
        run.error = f"{stage} failed: {type(err).__name__}: {err}".strip()
        log.debug("%s", run.error, exc_info=True)
        steps.done(3 if stage == "compile" else 2)
        return outcome
    steps.start(f"checking {label} against PyTorch")
    with torch.no_grad():
        expected = model(*inputs)
    run.matches_pytorch, run.max_abs_error = compare(result.output, expected, settings.rtol,
                                                     settings.atol)
    run.status = "ok" if run.matches_pytorch else "mismatch"
    fill_statistics(run, compiled, result)
    steps.done()
    outcome.compiled, outcome.result = compiled, result
    return outcome


class SharedImport:
    """One model's import, made at its first compile (whose ``compile_seconds`` count it) and
    shared by the later ones (:class:`fuseflow.Program`)."""

    def __init__(self, model, inputs, plan=None):
        self.model, self.inputs, self.plan = model, inputs, plan
        self._program = None

    def compile(self, schedule):
        """The model compiled with ``schedule``, importing it first if no compile did yet."""
        import fuseflow

        if self._program is None:
            self._program = fuseflow.Program(self.model, self.inputs, self.plan)
        return self._program.compile(schedule)


def run_kernel(name: str, sparsity: float, scale: int, formats: dict[str, str],
               settings: Settings, steps) -> Outcome:
    """One built-in kernel (:mod:`fuseflow.kernels`) at ``sparsity`` and ``scale``."""
    import fuseflow
    from fuseflow.kernels import get_kernel

    kernel = get_kernel(name)
    inputs = kernel.inputs(sparsity, seed=settings.seed, scale=scale)
    schedule = fuseflow.Schedule(formats={**kernel.declared, **formats})
    run = Run(name, "kernel", "default", schedule_dict(schedule), sparsity=sparsity, scale=scale)
    return execute(run, kernel.module(), inputs, schedule, settings, steps)


def run_application(app, model, inputs, dataset: str, preset: str, levels: tuple[str, ...],
                    formats: dict[str, str], settings: Settings, steps, *,
                    dense_weights: bool = False, provenance: str | None = None,
                    extrapolation=None, deeper=None) -> list[Outcome]:
    """An application's built ``model`` in each fusion configuration of ``levels``, imported
    once (:class:`SharedImport`).

    The published workload's sparse declarations (``FusionPlan.sparse_formats``) apply unless
    ``dense_weights``; ``formats`` adds to them. With an ``extrapolation``
    (:mod:`fuseflow.apps.layers`), ``model`` has 1 stacked unit and ``deeper`` is the
    ``(model, inputs)`` with 2: each configuration runs on both and its totals are
    extrapolated (the outcome keeps the 2-unit model's kernels and check). Where the 1-unit
    model's kernels are the 2-unit model's first ones (every configuration that fuses nothing
    across units: :func:`fuseflow.apps.layers.first_unit_kernels`), ``t(1)`` is read from
    those kernels of the 2-unit simulation instead of simulating the 1-unit model."""
    from fuseflow.apps.layers import first_unit_kernels

    plan = app.plan(model)
    program = SharedImport(model, inputs, plan)
    if extrapolation is not None:
        deep_model, deep_inputs = deeper
        deep_plan = app.plan(deep_model)
        deep_program = SharedImport(deep_model, deep_inputs, deep_plan)
    outcomes = []
    for level in levels:
        schedule = plan.schedule(level, dense_weights, formats)
        run = Run(app.name, "application", level, schedule_dict(schedule), dataset=dataset,
                  preset=preset, provenance=provenance, dense_weights=dense_weights)
        if extrapolation is None:
            outcomes.append(execute(run, model, inputs, schedule, settings, steps, program))
            continue
        deep_schedule = deep_plan.schedule(level, dense_weights, formats)
        deep_run = Run(app.name, "application", level, schedule_dict(deep_schedule),
                       dataset=dataset, preset=preset, provenance=provenance,
                       dense_weights=dense_weights)
        deep = execute(deep_run, deep_model, deep_inputs, deep_schedule, settings, steps,
                       deep_program)
        if deep.run.status == "error":          # nothing to extrapolate: reported as it is
            steps.done(3)
            outcomes.append(deep)
            continue
        start = time.perf_counter()
        compiled = _compile_or_none(program, schedule)
        count = None
        if compiled is not None:
            count = first_unit_kernels(compiled, deep.compiled, inputs, deep_inputs)
        if count is None:
            one = execute(run, model, inputs, schedule, settings, steps,
                          program if compiled is None else _Compiled(compiled))
        else:
            one = _read_first_unit(run, deep, count, time.perf_counter() - start)
            steps.done(3)
        outcomes.append(_extrapolated(one, deep, extrapolation, count))
    return outcomes


class _Compiled:
    """A model compiled already, in the place of a :class:`SharedImport`."""

    def __init__(self, compiled):
        self.compiled = compiled

    def compile(self, _schedule):
        return self.compiled


def _compile_or_none(program: SharedImport, schedule):
    """``program`` compiled with ``schedule``, or None if that fails (the failure is then
    reported by :func:`execute`, which compiles again)."""
    try:
        return program.compile(schedule)
    except Exception:  # noqa: BLE001 - execute() records the error
        return None


def _read_first_unit(run: Run, deep: Outcome, count: int, compile_seconds: float) -> Outcome:
    """The 1-unit ``run`` read from the first ``count`` kernels of the 2-unit ``deep`` (see
    :func:`fuseflow.apps.layers.first_unit_kernels`); its check is the 2-unit model's."""
    run.compile_seconds = round(compile_seconds, 3)
    run.simulate_seconds = 0.0
    run.kernels = deep.run.kernels[:count]
    run.cycles = sum(k["total_cycles"] for k in run.kernels)
    run.totals = kernel_totals(run.kernels)
    run.status, run.matches_pytorch = deep.run.status, deep.run.matches_pytorch
    run.max_abs_error = deep.run.max_abs_error
    return Outcome(run)


def _extrapolated(one: Outcome, two: Outcome, extrapolation, read: int | None = None
                  ) -> Outcome:
    """The 2-unit outcome with totals extrapolated from both (an error in either is kept);
    ``read``: the 1-unit totals are the 2-unit model's first ``read`` kernels'."""
    run = two.run
    if one.run.status == "error" or run.status == "error":
        run.error = run.error or f"1-{extrapolation.unit} model: {one.run.error}"
        run.status = "error"
        return two
    if one.run.status != "ok":
        run.status = "mismatch"
        run.matches_pytorch = False
    run.max_abs_error = max(one.run.max_abs_error, run.max_abs_error)
    run.extrapolation = {"unit": extrapolation.unit, "layers": extrapolation.layers,
                         "simulated": [2] if read else [1, 2],
                         "cycles": [one.run.cycles, run.cycles],
                         "formula": extrapolation.formula}
    if read:
        run.extrapolation["first_unit"] = (f"t(1): the first {read} kernels of the "
                                           f"2-{extrapolation.unit} simulation")
    simulated = run.kernels if read else one.run.kernels + run.kernels
    cached = [k["summary"]["tokens"] for k in simulated if k.get("cached")]
    if cached:
        run.extrapolation["cached_tokens"] = sum(cached)
    run.cycles = extrapolation.apply(one.run.cycles, run.cycles)
    run.totals = {key: extrapolation.apply(one.run.totals.get(key, 0), value)
                  for key, value in run.totals.items()}
    run.compile_seconds = round(one.run.compile_seconds + run.compile_seconds, 3)
    run.simulate_seconds = round(one.run.simulate_seconds + run.simulate_seconds, 3)
    return two

"""What a sweep will cost before it runs: every point compiled (not simulated) and predicted by
the static cost model (:mod:`fuseflow.explore`, ``docs/costmodel.md``), its simulation time
estimated from a tokens-per-second rate.

A point's *work* is the tokens its simulation processes (``simulated_tokens``): the model's
tokens, or for an extrapolated point (GPT-3 at the published preset) the tokens of the models of
1 and 2 decoders that are simulated. Its estimated seconds are its preparation (building the
workload, importing and compiling it, as measured while planning) plus ``work / rate``. The
rate is measured from the simulated points already in the folder's ``points.json`` (total
simulated tokens over total simulate seconds) or, before any, :data:`DEFAULT_TOKENS_PER_SECOND`.

Predictions are written to ``plan.json`` and reused by later sweeps of the same folder (same
seed and FuseFlow version) to run points cheapest first and to decide which points
``--simulate-up-to`` leaves to the model.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import time
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable

from fuseflow.reproduce.sweep import Point, current_key

log = logging.getLogger(__name__)

PLAN_NAME = "plan.json"
PLAN_SCHEMA = "fuseflow-reproduce-plan/1"

DEFAULT_TOKENS_PER_SECOND = 90e6
"""Simulated tokens per second of the fast engine on one free core, used before a folder has
simulated points to measure the rate from. On the shared 2-core development machine the
published GNN points ran at 28-100 million (``docs/reproduce.md``)."""

PREDICTED_FIELDS = ("tokens", "cycles", "ops", "bytes_moved")
"""The totals a prediction gives, named as in a simulated point's record."""


def predict_group(app_name: str, dataset: str, preset: str, levels: tuple[str, ...],
                  dense_weights: bool, seed: int) -> list[dict[str, Any]]:
    """Predictions of ``app_name`` on ``dataset`` in each fusion configuration of ``levels``
    (one build and import shared by them), as :func:`predict_points` records."""
    import warnings

    from fuseflow.apps import get_application
    from fuseflow.apps.layers import extrapolation as extrapolation_of

    warnings.filterwarnings("ignore")
    app = get_application(app_name)
    extrapolation = extrapolation_of(app, preset)
    depths = (1, 2) if extrapolation else (None,)
    models = [_Prepared(app, preset, dataset, seed, depth) for depth in depths]
    records = []
    for level in levels:
        point = Point(app_name, dataset, level, preset, dense_weights)
        record: dict[str, Any] = {"key": point.key, "app": app_name, "dataset": dataset,
                                  "fusion": level, "preset": preset,
                                  "dense_weights": dense_weights,
                                  "provenance": app.provenance(dataset), "status": "ok",
                                  "error": None}
        try:
            parts = [m.predict(level, dense_weights) for m in models]
        except Exception as err:  # noqa: BLE001 - recorded; the sweep then simulates the point
            record.update(status="error", error=_message(err))
        if record["status"] == "error":
            records.append(record)
            continue
        if extrapolation is None:
            [totals] = parts
            record["extrapolation"] = None
        else:
            one, two = parts
            totals = {k: extrapolation.apply(one[k], two[k]) for k in PREDICTED_FIELDS}
            totals["kernels"] = two["kernels"]
            record["extrapolation"] = {"unit": extrapolation.unit,
                                       "layers": extrapolation.layers, "simulated": [1, 2],
                                       "formula": extrapolation.formula}
        record.update({k: totals[k] for k in PREDICTED_FIELDS + ("kernels",)})
        record["simulated_tokens"] = sum(p["tokens"] for p in parts)
        if extrapolation is not None and _first_unit_read(*models):
            record["simulated_tokens"] = parts[1]["tokens"]   # t(1) is not simulated
        record["prepare_seconds"] = round(sum(p["prepare_seconds"] for p in parts), 2)
        record["predict_seconds"] = round(sum(p["predict_seconds"] for p in parts), 3)
        records.append(record)
    return records


class _Prepared:
    """One built and imported model of a point group, compiled and predicted per level."""

    def __init__(self, app, preset: str, dataset: str, seed: int, layers: int | None):
        import fuseflow
        from fuseflow.explore import Measured, MeasuredCache
        from fuseflow.sim.formats import FiberTree

        start = time.perf_counter()
        self.model, self.inputs = app.build(preset, dataset, seed, layers)
        self.plan = app.plan(self.model)
        self.program = fuseflow.Program(self.model, self.inputs, self.plan)
        self.measured = [Measured(FiberTree.from_torch(t.detach())) for t in self.inputs]
        self.cache = MeasuredCache()
        """The parameters' statistics, measured by the first level predicted, shared by all."""
        self.compiled = None
        """The last configuration predicted."""
        self.shared_seconds = time.perf_counter() - start
        """Building and importing, paid by every point of the group in a sweep."""

    def predict(self, level: str, dense_weights: bool) -> dict[str, Any]:
        from fuseflow.explore import CostModel

        start = time.perf_counter()
        compiled = self.program.compile(self.plan.schedule(level, dense_weights, {}))
        compiled_at = time.perf_counter()
        self.compiled = compiled
        summary = CostModel(compiled, cache=self.cache).predict(*self.measured)
        totals = {k: round(summary.total(k)) if k != "cycles" else round(summary.cycles)
                  for k in ("ops", "cycles")}
        totals["tokens"] = round(sum(k.tokens for k in summary.kernels))
        totals["bytes_moved"] = round(summary.total("bytes_read")
                                      + summary.total("bytes_written"))
        totals["kernels"] = len(summary.kernels)
        totals["prepare_seconds"] = self.shared_seconds + compiled_at - start
        totals["predict_seconds"] = time.perf_counter() - compiled_at
        return totals


def _first_unit_read(one: _Prepared, two: _Prepared) -> bool:
    """Whether the sweep reads ``t(1)`` of the configuration just predicted from the 2-unit
    simulation instead of simulating the 1-unit model (as :func:`run_point` does)."""
    from fuseflow.apps.layers import first_unit_kernels

    return first_unit_kernels(one.compiled, two.compiled, one.inputs, two.inputs) is not None


def predict_points(points: list[Point], seed: int = 0, workers: int = 1,
                   report: Callable[[list[dict[str, Any]]], None] | None = None,
                   memory: int | None = None) -> dict[str, dict[str, Any]]:
    """Predicts ``points`` (without simulating), one forked process per application × data set
    (its build and import shared by its configurations), ``workers`` at once; returns the
    records by point key. ``report(records)`` is called as each group finishes. Each process
    may use ``memory`` bytes of address space (default: :func:`memory_budget`); a group whose
    process runs out of it or dies gives ``error`` records."""
    from fuseflow.reproduce.sweep import _preload

    groups: dict[tuple, list[Point]] = {}
    for point in points:
        groups.setdefault((point.app, point.dataset, point.preset, point.dense_weights),
                          []).append(point)
    pending = list(groups.items())
    if pending:
        _preload()
    budget = memory or memory_budget(workers)
    context = multiprocessing.get_context("fork")
    running: list[tuple] = []
    out: dict[str, dict[str, Any]] = {}
    try:
        while pending or running:
            while pending and len(running) < max(1, workers):
                (app, dataset, preset, dense), group = pending.pop(0)
                receive, send = context.Pipe(duplex=False)
                process = context.Process(
                    target=_group_worker, name=f"fuseflow-plan {app}/{dataset}", daemon=True,
                    args=(send, app, dataset, preset, tuple(p.fusion for p in group), dense,
                          seed, budget))
                process.start()
                send.close()
                running.append((group, process, receive))
            ready = wait([r[2] for r in running] + [r[1].sentinel for r in running])
            for item in list(running):
                group, process, conn = item
                records = None
                if conn in ready:
                    try:
                        records = conn.recv()
                    except EOFError:
                        records = None
                elif process.is_alive():
                    continue
                process.join()
                running.remove(item)
                if records is None:
                    why = f"prediction process died (exit code {process.exitcode})"
                    records = [{"key": p.key, "app": p.app, "dataset": p.dataset,
                                "fusion": p.fusion, "preset": p.preset,
                                "dense_weights": p.dense_weights, "status": "error",
                                "error": why} for p in group]
                for record in records:
                    out[record["key"]] = record
                if report is not None:
                    report(records)
    finally:
        for _, process, _ in running:          # interrupted: stop what this plan started
            process.kill()
            process.join()
    return out


MEMORY_FRACTION = 0.8
"""Share of the memory available when a plan starts that its prediction processes may use
together (an address-space limit: past it a prediction fails with ``MemoryError`` instead of
drawing the kernel's out-of-memory killer onto other processes)."""


def memory_budget(workers: int) -> int | None:
    """Bytes of address space each of ``workers`` prediction processes may use (None where
    the available memory is unknown)."""
    try:
        with open("/proc/meminfo") as info:
            fields = dict(line.split(":", 1) for line in info)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None
    return int(MEMORY_FRACTION * available / max(1, workers))


def _group_worker(conn, app, dataset, preset, levels, dense_weights, seed,
                  budget: int | None = None) -> None:
    import resource

    import torch

    torch.set_num_threads(1)
    logging.getLogger().handlers[:] = [logging.NullHandler()]
    if budget is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > budget:
            resource.setrlimit(resource.RLIMIT_AS, (budget, hard))
    try:
        records = predict_group(app, dataset, preset, levels, dense_weights, seed)
    except Exception as err:  # noqa: BLE001 - the build failed: every level records it
        records = [{"key": Point(app, dataset, level, preset, dense_weights).key, "app": app,
                    "dataset": dataset, "fusion": level, "preset": preset,
                    "dense_weights": dense_weights, "status": "error",
                    "error": _message(err)} for level in levels]
    conn.send(records)
    conn.close()


def _message(err: Exception) -> str:
    if isinstance(err, MemoryError):
        return ("out of memory: the prediction needs more than the plan's memory budget "
                "(plan.MEMORY_FRACTION of the memory available)")
    return f"{type(err).__name__}: {err}"


def work(record: dict[str, Any] | None) -> float | None:
    """The tokens a point's simulation processes, from its prediction (None if unknown)."""
    if not record or record.get("status") != "ok":
        return None
    return record.get("simulated_tokens")


def measured_rate(points: list[dict[str, Any]]) -> float | None:
    """Simulated tokens per second over the simulated records of a ``points.json``: total
    tokens over total simulate seconds (None when there are none)."""
    tokens = seconds = 0.0
    for record in points:
        simulated = record.get("simulated_tokens")
        if simulated is None and not record.get("extrapolation"):
            simulated = record.get("tokens")
        if (record.get("status") in ("ok", "mismatch") and simulated
                and (record.get("simulate_seconds") or 0) > 0):
            tokens += simulated
            seconds += record["simulate_seconds"]
    return tokens / seconds if seconds > 0 else None


def estimated_seconds(record: dict[str, Any] | None, rate: float) -> float | None:
    """A point's estimated wall seconds in a sweep: preparation plus its work at ``rate``."""
    tokens = work(record)
    if tokens is None:
        return None
    return record.get("prepare_seconds", 0.0) + tokens / rate


def makespan(seconds: list[float], workers: int) -> float:
    """The wall time of jobs of ``seconds`` run in this order, each on the first free of
    ``workers`` workers."""
    free = [0.0] * max(1, workers)
    for s in seconds:
        free.sort()
        free[0] += s
    return max(free)


def cheapest_first(points: list[Point], predictions: dict[str, dict[str, Any]]) -> list[Point]:
    """``points`` by predicted work, smallest first (so an interrupted sweep has finished as
    many points as it could); points without a prediction last, in their order."""
    known = [p for p in points if work(predictions.get(p.key)) is not None]
    unknown = [p for p in points if work(predictions.get(p.key)) is None]
    return sorted(known, key=lambda p: work(predictions[p.key])) + unknown


def _version() -> str:
    import fuseflow

    return getattr(fuseflow, "__version__", "unknown")


def load(folder, seed: int) -> dict[str, dict[str, Any]]:
    """The predictions of ``folder``'s ``plan.json`` when it was made with ``seed`` by this
    FuseFlow version (empty otherwise)."""
    path = Path(folder) / PLAN_NAME
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    if doc.get("schema") != PLAN_SCHEMA:
        raise ValueError(f"'{path}' is not a reproduce plan (expected \"schema\": "
                         f"\"{PLAN_SCHEMA}\")")
    if doc.get("seed") != seed or doc.get("fuseflow_version") != _version():
        log.info("ignoring %s: made with seed %s by FuseFlow %s", path, doc.get("seed"),
                 doc.get("fuseflow_version"))
        return {}
    records = (dict(record, key=current_key(record["key"])) for record in doc["points"])
    return {record["key"]: record for record in records}


def save(folder, seed: int, predictions: dict[str, dict[str, Any]],
         extra: dict[str, Any] | None = None) -> Path:
    """Writes ``plan.json``: ``predictions`` merged into those already there (same seed and
    version), and ``extra`` fields (the table's rate and totals)."""
    path = Path(folder) / PLAN_NAME
    merged = {**load(folder, seed), **predictions} if path.exists() else dict(predictions)
    doc = {"schema": PLAN_SCHEMA, "fuseflow_version": _version(), "seed": seed,
           **(extra or {}), "points": list(merged.values())}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
    return path


def rate_of(cache) -> tuple[float, str]:
    """The tokens-per-second rate of estimates, and where it comes from: measured from the
    simulated points of ``cache`` (a :class:`~fuseflow.reproduce.sweep.Cache`) when it has
    any, else :data:`DEFAULT_TOKENS_PER_SECOND`."""
    records = list(cache.points.values())
    rate = measured_rate(records)
    if rate is None:
        return DEFAULT_TOKENS_PER_SECOND, "default: no simulated point in points.json yet"
    count = sum(r.get("status") in ("ok", "mismatch") and (r.get("simulate_seconds") or 0) > 0
                for r in records)
    return rate, f"measured from the {count} simulated points in points.json"


def duration(seconds: float | None) -> str:
    """``42 s``, ``17 min``, ``1.6 h`` or ``-``."""
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _count(value) -> str:
    return "-" if value is None else f"{value:.3g}"


class Table:
    """The plan of a sweep: per point its prediction, what a sweep would do with it
    (``simulated``, ``predicted`` or ``error``/``timeout``/``killed`` when finished; ``to
    simulate`` or, over ``simulate_up_to``, ``to predict``) and its estimated seconds."""

    def __init__(self, points: list[Point], predictions: dict[str, dict[str, Any]], cache,
                 settings):
        self.settings = settings
        self.rate, self.rate_source = rate_of(cache)
        limit = settings.simulate_up_to
        self.rows = []
        for point in points:
            prediction = predictions.get(point.key) or {}
            record = cache.points.get(point.key)
            if cache.done(point, settings.retry_failed, limit):
                status = {"ok": "simulated", "mismatch": "simulated (mismatch)"}.get(
                    record["status"], record["status"])
            elif limit is not None and (work(prediction) or 0) > limit:
                status = "to predict"
            else:
                status = "to simulate"
            if prediction.get("status") == "error":
                status += " (prediction failed)"
            measured = record.get("wall_seconds") if record and not record.get("predicted") \
                else None
            self.rows.append({"key": point.key, "point": point, "prediction": prediction,
                              "status": status,
                              "estimated_seconds": estimated_seconds(prediction, self.rate),
                              "measured_seconds": measured})

    def _sum(self, rows, field) -> float:
        return sum(r["prediction"].get(field) or 0 for r in rows)

    def summary(self) -> dict[str, Any]:
        """The plan's JSON fields beside the predictions: rate, totals and every row."""
        run = [r for r in self.rows if r["status"].startswith("to simulate")]
        order = sorted(run, key=lambda r: work(r["prediction"]) or 0)
        seconds = [r["estimated_seconds"] or 0.0 for r in order]
        return {
            "tokens_per_second": self.rate,
            "rate_source": self.rate_source,
            "workers": self.settings.workers,
            "simulate_up_to": self.settings.simulate_up_to,
            "totals": {
                "points": len(self.rows),
                "tokens": self._sum(self.rows, "tokens"),
                "simulated_tokens": self._sum(self.rows, "simulated_tokens"),
                "estimated_seconds": round(sum(r["estimated_seconds"] or 0
                                               for r in self.rows), 1),
                "done": sum(not r["status"].startswith("to ") for r in self.rows),
                "to_simulate": len(run),
                "to_simulate_tokens": self._sum(run, "simulated_tokens"),
                "to_simulate_seconds": round(sum(seconds), 1),
                "to_simulate_wall_seconds": round(makespan(seconds, self.settings.workers), 1),
                "to_predict": sum(r["status"].startswith("to predict") for r in self.rows),
            },
            "table": [{"key": r["key"], "status": r["status"],
                       "estimated_seconds": None if r["estimated_seconds"] is None
                       else round(r["estimated_seconds"], 1),
                       "measured_seconds": r["measured_seconds"]} for r in self.rows],
        }

    def markdown(self) -> str:
        """The plan as a markdown table with its totals."""
        preset = self.rows[0]["point"].preset if self.rows else "-"
        lines = [f"# Plan ({preset} preset): cost-model predictions, nothing simulated", "",
                 "| application | data set | configuration | status | predicted tokens | "
                 "tokens to simulate | predicted cycles | estimated time | measured time |",
                 "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for row in self.rows:
            point, prediction = row["point"], row["prediction"]
            lines.append(
                f"| {point.app} | {point.dataset} | {point.fusion} | {row['status']} | "
                f"{_count(prediction.get('tokens'))} | "
                f"{_count(prediction.get('simulated_tokens'))} | "
                f"{_count(prediction.get('cycles'))} | {duration(row['estimated_seconds'])} | "
                f"{duration(row['measured_seconds'])} |")
        totals = self.summary()["totals"]
        workers = self.settings.workers
        lines += [
            "",
            f"- All {totals['points']} points: {totals['simulated_tokens']:.3g} tokens to "
            f"simulate, estimated {duration(totals['estimated_seconds'])} of worker time at "
            f"{self.rate:.3g} tokens/s ({self.rate_source}).",
            f"- To run: {totals['to_simulate']} points to simulate, "
            f"{totals['to_simulate_tokens']:.3g} tokens, estimated "
            f"{duration(totals['to_simulate_seconds'])} "
            f"(≈ {duration(totals['to_simulate_wall_seconds'])} wall on {workers} "
            f"worker{'s' * (workers > 1)}, cheapest first); {totals['done']} already done"
            + (f"; {totals['to_predict']} over --simulate-up-to "
               f"{self.settings.simulate_up_to:.3g} left to the cost model"
               if totals["to_predict"] else "") + ".",
            "- Estimated time: building, importing and compiling the point (measured while "
            "planning) plus its tokens to simulate at the rate. Tokens to simulate differ "
            "from the predicted tokens for extrapolated points (GPT-3 at the published "
            "preset simulates its 2-decoder model, and its 1-decoder model for full fusion).",
        ]
        failed = [r["key"] for r in self.rows if r["prediction"].get("status") == "error"]
        if failed:
            lines.append(f"- Prediction failed (the sweep simulates them): {', '.join(failed)}.")
        return "\n".join(lines) + "\n"

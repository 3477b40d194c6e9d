"""The sweep behind Figures 12 and 14: every application × data set × fusion configuration, one
*point* each, run in worker processes and cached as they finish.

A point builds its application (GPT-3 at the published preset: models of 1 and 2 decoders,
extrapolated; see :mod:`fuseflow.apps.layers`), compiles one configuration of the published
workload (``plan.schedule``), simulates it and checks it against PyTorch, through the same
code as ``fuseflow run`` (:func:`fuseflow.tools.execute.run_application`).

Workers are forked processes, one per point (so a point's peak memory is its own and a point
that hangs or exhausts memory is killed without taking the sweep down); each sets torch to one
thread first (forked workers of a multi-threaded torch were seen to hang). Finished points are
written to the cache (``points.json``) at once, so an interrupted sweep resumes where it
stopped; failed points are kept too, and re-run with ``retry_failed``.

With predictions (:mod:`fuseflow.reproduce.plan`) the points run cheapest first, and with
``simulate_up_to`` a point predicted to simulate more tokens is not simulated: its record
(status ``predicted``) holds the cost model's numbers instead.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import resource
import signal
import time
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable

from fuseflow.apps.base import FUSION_LEVELS
from fuseflow.reproduce.published import PRESET_DATASETS, SWEEP_DATASETS

log = logging.getLogger(__name__)

CACHE_NAME = "points.json"
CACHE_SCHEMA = "fuseflow-reproduce-points/1"


@dataclass(frozen=True)
class Point:
    """One application × data set × fusion configuration at a preset."""

    app: str
    dataset: str
    fusion: str
    preset: str
    dense_weights: bool = False

    @property
    def key(self) -> str:
        """The cache key and label: ``preset/app/dataset/fusion``, with ``/dense`` after it
        for the dense variant (``published/gcn/cora/unfused``,
        ``small/gcn/cora/unfused/dense``)."""
        return (f"{self.preset}/{self.app}/{self.dataset}/{self.fusion}"
                + ("/dense" if self.dense_weights else ""))


OLD_VARIANTS = ("published", "dense")
"""The second part of a key written before keys named the preset once: the variant, so that
the published workload at the published preset read ``published/published/...``."""


def current_key(key: str) -> str:
    """``key`` as :attr:`Point.key` writes it now: a key of the old form
    ``preset/variant/app/dataset/fusion`` (``published/published/gcn/cora/unfused``,
    ``tiny/dense/sae/imagenet/full``) is rewritten (``published/gcn/cora/unfused``,
    ``tiny/sae/imagenet/full/dense``); any other key is returned as it is."""
    parts = key.split("/")
    if len(parts) != 5 or parts[1] not in OLD_VARIANTS:
        return key
    preset, variant, app, dataset, fusion = parts
    return Point(app, dataset, fusion, preset, variant == "dense").key


FAILED = ("error", "timeout", "killed")
"""Statuses of points that did not finish: ``error`` (an exception, or the worker exited
with an error code), ``timeout`` (killed after ``--timeout``), ``killed`` (the worker was
killed by a signal, the kernel's out-of-memory killer's SIGKILL most often)."""


@dataclass
class PointResult:
    """What one point measured (``status``: ``ok`` or ``mismatch``; ``error``, ``timeout`` or
    ``killed`` when it did not finish, see :data:`FAILED`), or what the cost model predicted
    for it (``predicted``)."""

    key: str
    app: str
    dataset: str
    fusion: str
    preset: str
    dense_weights: bool
    status: str = "error"
    error: str | None = None
    provenance: str | None = None
    cycles: int | None = None
    ops: int | None = None
    bytes_moved: int | None = None
    tokens: int | None = None
    kernels: int | None = None
    kernels_cached: int | None = None
    """Kernels read from the kernel cache instead of simulated (their tokens are not in
    :attr:`simulated_tokens`, their time not in ``simulate_seconds``)."""
    max_abs_error: float | None = None
    compile_seconds: float | None = None
    simulate_seconds: float | None = None
    wall_seconds: float | None = None
    peak_rss_bytes: int | None = None
    extrapolation: dict[str, Any] | None = None
    simulated_tokens: int | None = None
    """Tokens the simulation processed (an extrapolated point: both simulated models'); for a
    predicted point, the prediction of them."""
    predicted: bool = False
    """Not simulated: cycles, FLOPs, bytes and tokens are the cost model's predictions."""
    threshold: float | None = None
    """A predicted point: the ``simulate_up_to`` its predicted work exceeded."""
    prediction: dict[str, Any] | None = None
    """A simulated point with a prediction: the model's totals, to compare."""
    finished: str = ""

    @classmethod
    def failed(cls, point: Point, status: str, error: str, wall: float) -> "PointResult":
        """The record of a point that did not finish (``status`` in :data:`FAILED`); its
        provenance is still its data's, so that tables say what the data set was."""
        return cls(point.key, point.app, point.dataset, point.fusion, point.preset,
                   point.dense_weights, status=status, error=error,
                   provenance=data_provenance(point.app, point.dataset),
                   wall_seconds=round(wall, 2), finished=_now())

    @classmethod
    def from_prediction(cls, point: Point, prediction: dict[str, Any], threshold: float
                        ) -> "PointResult":
        """The record of a point left to the cost model."""
        return cls(point.key, point.app, point.dataset, point.fusion, point.preset,
                   point.dense_weights, status="predicted", provenance=prediction["provenance"],
                   cycles=prediction["cycles"], ops=prediction["ops"],
                   bytes_moved=prediction["bytes_moved"], tokens=prediction["tokens"],
                   kernels=prediction["kernels"],
                   extrapolation=prediction.get("extrapolation"),
                   simulated_tokens=prediction["simulated_tokens"], predicted=True,
                   threshold=threshold, finished=_now())


@dataclass(frozen=True)
class SweepSettings:
    """How points are run."""

    engine: str = "fast"
    seed: int = 0
    workers: int = 1
    """Worker processes at once."""
    timeout: float | None = None
    """Seconds a point may take before its worker is killed (None: no limit)."""
    rtol: float = 1e-4
    atol: float = 1e-5
    retry_failed: bool = False
    """Re-run cached points that failed, timed out or were killed (:data:`FAILED`)."""
    simulate_up_to: float | None = None
    """Points predicted to simulate more tokens are predicted only (None: no limit)."""
    kernel_cache: Path | None = None
    """Folder of kernel results shared by the points (:mod:`fuseflow.kernel_cache`; None:
    every kernel simulated)."""


KERNEL_CACHE = "kernels"
"""The kernel cache's folder in a sweep's output folder (``fuseflow reproduce``)."""


def sweep_points(preset: str, apps: tuple[str, ...] | None = None,
                 datasets: tuple[str, ...] | None = None, dense_weights: bool = False
                 ) -> list[Point]:
    """The points of Figure 12 (and 14) at ``preset``, optionally for some applications or
    data sets only, in figure order."""
    points = []
    for app in apps or tuple(SWEEP_DATASETS):
        if app not in SWEEP_DATASETS:
            raise ValueError(f"unknown application {app!r}; valid: {', '.join(SWEEP_DATASETS)}")
        for dataset in PRESET_DATASETS.get((app, preset), SWEEP_DATASETS[app]):
            if datasets and dataset not in datasets:
                continue
            points += [Point(app, dataset, level, preset, dense_weights)
                       for level in FUSION_LEVELS]
    return points


def default_workers() -> int:
    """Cores not already busy: ``cpu_count - round(1-minute load average)``, at least 1."""
    cores = os.cpu_count() or 1
    busy = round(os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0
    return max(1, min(cores, cores - busy))


class Cache:
    """The finished points of a sweep folder, saved after every point."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / CACHE_NAME
        self.points: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            doc = json.loads(self.path.read_text())
            if doc.get("schema") != CACHE_SCHEMA:
                raise ValueError(f"'{self.path}' is not a reproduce cache (expected \"schema\": "
                                 f"\"{CACHE_SCHEMA}\")")
            self.points = {}
            for key, record in doc["points"].items():
                self.points[current_key(key)] = _current_record(record)

    def done(self, point: Point, retry_failed: bool, simulate_up_to: float | None = None
             ) -> bool:
        """Whether ``point`` is finished (failed ones count unless ``retry_failed``; predicted
        ones only if ``simulate_up_to`` would predict them again)."""
        record = self.points.get(point.key)
        if record is None:
            return False
        if record["status"] == "predicted":
            return simulate_up_to is not None and record["simulated_tokens"] > simulate_up_to
        return not (retry_failed and record["status"] in FAILED)

    def add(self, result: PointResult) -> None:
        self.points[result.key] = asdict(result)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"schema": CACHE_SCHEMA, "points": self.points}, indent=1)
                       + "\n")
        os.replace(tmp, self.path)

    def results(self, points: list[Point]) -> list[dict[str, Any]]:
        """The cached records of ``points`` that are finished, in their order."""
        return [self.points[p.key] for p in points if p.key in self.points]


@dataclass
class _Running:
    point: Point
    process: Any
    conn: Any
    start: float = field(default_factory=time.perf_counter)


def run_sweep(points: list[Point], folder, settings: SweepSettings,
              report: Callable[[PointResult, int, int], None] | None = None,
              predictions: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Runs the points not yet in ``folder``'s cache, ``settings.workers`` at a time; returns
    every point's record (cached ones included), in the order of ``points``.
    ``report(result, done, total)`` is called as each point finishes.

    ``predictions`` (point key -> :mod:`fuseflow.reproduce.plan` record): the points run
    cheapest first, and those whose predicted work exceeds ``settings.simulate_up_to`` are
    recorded as predicted without simulating (a point without a prediction is simulated)."""
    from fuseflow.reproduce.plan import cheapest_first, work

    cache = Cache(Path(folder))
    limit = settings.simulate_up_to
    predictions = predictions or {}
    pending = [p for p in points if not cache.done(p, settings.retry_failed, limit)]
    pending = cheapest_first(pending, predictions)
    total, finished = len(pending), 0
    over = [p for p in pending if limit is not None
            and (work(predictions.get(p.key)) or 0) > limit]
    for point in over:
        result = PointResult.from_prediction(point, predictions[point.key], limit)
        cache.add(result)
        finished += 1
        if report is not None:
            report(result, finished, total)
    pending = [p for p in pending if p not in over]
    if pending:
        _preload()
    context = multiprocessing.get_context("fork")
    running: list[_Running] = []
    try:
        while pending or running:
            while pending and len(running) < max(1, settings.workers):
                point = next_point(pending, running, settings.kernel_cache is not None)
                # The last points share the cores no other point will use: their independent
                # kernels simulate at once (fuseflow.runtime).
                kernel_workers = 1 if pending else max(1, settings.workers - len(running))
                receive, send = context.Pipe(duplex=False)
                # not daemonic: a point given spare cores forks its kernels' processes
                # (a daemonic process may not have children); the finally below stops it
                process = context.Process(target=_worker,
                                          args=(point, settings, send, kernel_workers),
                                          name=f"fuseflow-point {point.key}", daemon=False)
                process.start()
                send.close()
                running.append(_Running(point, process, receive))
            ready = wait([r.conn for r in running] + [r.process.sentinel for r in running],
                         timeout=_until_next_deadline(running, settings.timeout))
            for item in list(running):
                result = _collect(item, ready, settings.timeout)
                if result is None:
                    continue
                running.remove(item)
                prediction = predictions.get(item.point.key)
                if work(prediction) is not None:
                    result.prediction = {k: prediction[k] for k in
                                         ("tokens", "cycles", "ops", "bytes_moved",
                                          "simulated_tokens")}
                cache.add(result)
                finished += 1
                if report is not None:
                    report(result, finished, total)
    finally:
        for item in running:          # interrupted: stop the workers this sweep started
            item.process.kill()
            item.process.join()
    return cache.results(points)


def next_point(pending: list[Point], running: list[_Running], shared: bool) -> Point:
    """Takes the next point to start from ``pending``: the first, or with ``shared`` kernel
    results the first of a data set no running point is on (the configurations of one data
    set share kernels, GPT-3's partial and full fusion their attention: run one after the
    other, the first simulates them and the later ones read them)."""
    if shared:
        busy = {(r.point.preset, r.point.app, r.point.dataset) for r in running}
        for i, point in enumerate(pending):
            if (point.preset, point.app, point.dataset) not in busy:
                return pending.pop(i)
    return pending.pop(0)


def _preload() -> None:
    """Imports what every point needs before forking, so workers start with it loaded."""
    import torch  # noqa: F401

    import fuseflow.apps  # noqa: F401
    import fuseflow.compiler  # noqa: F401
    import fuseflow.tools.execute  # noqa: F401


def _until_next_deadline(running: list[_Running], timeout: float | None) -> float:
    """How long the sweep may wait for a worker: at most a second, and no longer than the
    first running point's remaining time."""
    if timeout is None:
        return 1.0
    now = time.perf_counter()
    return max(0.0, min([1.0] + [item.start + timeout - now for item in running]))


def _collect(item: _Running, ready, timeout: float | None) -> PointResult | None:
    """The result of a running point if it finished, died or timed out; None otherwise. A
    point whose result arrives after its time is a timeout like one still running."""
    wall = time.perf_counter() - item.start
    if timeout is not None and wall > timeout:
        item.process.kill()
        item.process.join()
        return PointResult.failed(item.point, "timeout", f"timed out after {timeout:g} s", wall)
    if item.conn in ready:
        try:
            result = item.conn.recv()
        except EOFError:
            result = None
        item.process.join()
        if result is not None:
            return result
    if not item.process.is_alive():
        item.process.join()
        return died(item.point, item.process.exitcode, wall)
    return None


def died(point: Point, exitcode: int | None, wall: float) -> PointResult:
    """The record of a point whose worker ended without sending a result: status ``killed``
    when a signal ended it (negative ``exitcode``: minus the signal's number), ``error``
    otherwise."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        why = " (out of memory?)" if -exitcode == signal.SIGKILL else ""
        return PointResult.failed(point, "killed", f"worker killed by {name}{why}", wall)
    return PointResult.failed(point, "error", f"worker died: exit code {exitcode}", wall)


def data_provenance(app: str, dataset: str) -> str | None:
    """What ``app``'s data set ``dataset`` is made of (``synthetic``, ``real graph,
    synthetic features``...), None if that cannot be told."""
    try:
        from fuseflow.apps import get_application

        return get_application(app).provenance(dataset)
    except Exception:  # noqa: BLE001 - an unknown application or data set: say nothing
        return None


def _current_record(record: dict[str, Any]) -> dict[str, Any]:
    """A cached record as this version writes it: its key in the current form; a failed
    record from before failures had a provenance gets its data's, and one whose worker was
    killed by a signal (``worker died: killed (out of memory?)``) gets status ``killed``."""
    record = dict(record, key=current_key(record["key"]))
    if record.get("status") in FAILED and record.get("provenance") is None:
        record["provenance"] = data_provenance(record["app"], record["dataset"])
    if record.get("status") == "error" and (record.get("error") or "").startswith(
            "worker died: killed"):
        record.update(status="killed", error="worker killed by a signal (out of memory?)")
    return record


def _worker(point: Point, settings: SweepSettings, conn, kernel_workers: int = 1) -> None:
    """Runs one point in a forked process and sends its :class:`PointResult`."""
    import torch

    torch.set_num_threads(1)
    logging.getLogger().handlers[:] = [logging.NullHandler()]
    start = time.perf_counter()
    try:
        result = run_point(point, settings, kernel_workers)
    except Exception as err:  # noqa: BLE001 - reported in the point's record
        result = PointResult.failed(point, "error", f"{type(err).__name__}: {err}",
                                    time.perf_counter() - start)
    result.wall_seconds = round(time.perf_counter() - start, 2)
    result.peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    conn.send(result)
    conn.close()


def run_point(point: Point, settings: SweepSettings, kernel_workers: int = 1) -> PointResult:
    """Builds, compiles, simulates and checks one point (in this process; ``kernel_workers``
    independent kernels at once)."""
    import warnings

    from fuseflow.apps import get_application
    from fuseflow.apps.layers import extrapolation as extrapolation_of
    from fuseflow.sim.arch import Arch
    from fuseflow.tools.execute import Settings, run_application

    warnings.filterwarnings("ignore")
    app = get_application(point.app)
    extrapolation = extrapolation_of(app, point.preset)
    layers = 1 if extrapolation else None
    model, inputs = app.build(point.preset, point.dataset, settings.seed, layers)
    deeper = app.build(point.preset, point.dataset, settings.seed, 2) if extrapolation else None
    run_settings = Settings(settings.engine, Arch(), settings.seed, settings.rtol, settings.atol,
                            kernel_workers, settings.kernel_cache)
    outcome, = run_application(app, model, inputs, point.dataset, point.preset, (point.fusion,),
                               {}, run_settings, _NoSteps(), dense_weights=point.dense_weights,
                               provenance=app.provenance(point.dataset),
                               extrapolation=extrapolation, deeper=deeper)
    run = outcome.run
    simulated = run.totals.get("tokens")
    if extrapolation is not None and simulated is not None:
        # run.totals are extrapolated, run.kernels are the 2-unit model's.
        two = sum(k["summary"]["tokens"] for k in run.kernels)
        simulated = two if (run.extrapolation or {}).get("simulated") == [2] else \
            simulated_tokens(simulated, two, extrapolation.layers)
    cached = [k for k in run.kernels if k.get("cached")]
    if simulated is not None:
        simulated -= (run.extrapolation or {}).get("cached_tokens", 0) if extrapolation else \
            sum(k["summary"]["tokens"] for k in cached)
    return PointResult(
        point.key, point.app, point.dataset, point.fusion, point.preset, point.dense_weights,
        status=run.status, error=run.error, provenance=run.provenance, cycles=run.cycles,
        ops=run.totals.get("ops"), bytes_moved=run.totals.get("bytes_moved"),
        tokens=run.totals.get("tokens"), kernels=len(run.kernels) or None,
        kernels_cached=len(cached) if run.kernels else None,
        max_abs_error=run.max_abs_error, compile_seconds=run.compile_seconds,
        simulate_seconds=run.simulate_seconds, extrapolation=run.extrapolation,
        simulated_tokens=simulated, finished=_now())


def simulated_tokens(extrapolated: int, two: int, layers: int) -> int:
    """The tokens simulated for an extrapolated point, ``t(1) + t(2)``, from its extrapolated
    ``t(layers) = t(1) + (layers-1)·(t(2) - t(1))`` and ``t(2)``."""
    return two + ((layers - 1) * two - extrapolated) // (layers - 2)


class _NoSteps:
    """A progress sink for :func:`run_application` (workers draw no progress bars)."""

    def start(self, _description: str) -> None:
        pass

    def done(self, _count: int = 1) -> None:
        pass


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")

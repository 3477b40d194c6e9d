"""Simulations of candidate configurations as Dask tasks, each cached on disk by content.

A *point* is one configuration of a model: fusion groups and per-kernel schedules (order,
forked levels, tile shape). Its content
key hashes what determines the simulation: the imported linalg module (the graph), the
inputs' and parameters' data, the architecture, the point's schedule and FuseFlow's version.
:class:`PointCache` keeps one JSON file per simulated point under that key (written
atomically as each result arrives), so a sweep killed half way resumes where it stopped and
a rerun simulates nothing.

:func:`simulate_points` submits the points not in the cache to a Dask cluster: a
``LocalCluster`` of worker processes (all cores by default) or an existing scheduler
(``scheduler="tcp://host:port"``). The model travels to the workers once (scattered,
pickled); each worker imports it once and compiles every point it is given from that import.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import pickle
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from fuseflow.errors import FuseFlowError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Point:
    """One configuration to simulate: ``fusion`` (groups of units, as ``Schedule.fusion``,
    or a plan's configuration name) and per-kernel orders (kernel index -> order)."""

    name: str
    fusion: object
    orders: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Kernel name (as ``Schedule.kernels`` keys it) -> order."""
    reassociated: tuple[str, ...] = ()
    """The chains of products rewritten (``str`` of :class:`~.reassociate.Chain`)."""
    parallel: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    """Kernel name -> its forked levels ((variable, lanes) pairs), for forked kernels."""
    blocks: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Kernel name -> its tile shape, for kernels with tiles as values."""

    def schedule(self, formats=None):
        import fuseflow

        kernels = {k: {"order": o} for k, o in self.orders}
        for k, p in self.parallel:
            kernels.setdefault(k, {})["parallel"] = dict(p)
        for k, b in self.blocks:
            kernels.setdefault(k, {})["block"] = tuple(b)
        return fuseflow.Schedule(fusion=self.fusion, formats=dict(formats or {}),
                                 kernels=kernels)

    def to_dict(self) -> dict:
        fusion = self.fusion if isinstance(self.fusion, str) else [list(g) for g in self.fusion]
        out = {"name": self.name, "fusion": fusion,
               "orders": {k: list(o) for k, o in self.orders},
               "reassociated": list(self.reassociated)}
        if self.parallel:
            out["parallel"] = {k: [list(x) for x in p] for k, p in self.parallel}
        if self.blocks:
            out["blocks"] = {k: list(b) for k, b in self.blocks}
        return out


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, bytes):
            h.update(part)
        else:
            h.update(json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


def data_digest(tensors) -> str:
    """A digest of tensors' contents (dense values, shapes, layouts)."""
    h = hashlib.sha256()
    for t in tensors:
        if isinstance(t, torch.Tensor):
            h.update(str(t.layout).encode())
            t = t.detach()
            t = t.to_dense() if t.layout != torch.strided else t
            h.update(str(tuple(t.shape)).encode())
            h.update(np.ascontiguousarray(t.numpy()).tobytes())
        else:
            h.update(repr(t).encode())
    return h.hexdigest()


def point_key(graph_digest: str, data: str, arch, point: Point, formats=None) -> str:
    """The content key of ``point``: graph (and declared formats), data, architecture,
    schedule, version."""
    import fuseflow

    arch_fields = asdict(arch) if arch is not None else {}
    described = point.to_dict()
    del described["name"]
    return _digest(graph_digest, sorted((formats or {}).items()), data, arch_fields, described,
                   fuseflow.__version__)


KERNEL_CACHE = "kernels"
"""The folder of kernel results (:mod:`fuseflow.kernel_cache`) in a point cache's root: points
that share a kernel (candidate partitions differing in other groups) simulate it once."""


@dataclass
class PointCache:
    """Simulated points on disk: ``<root>/<key[:2]>/<key>.json``."""

    root: Path

    def path(self, key: str) -> Path:
        return Path(self.root) / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        path = self.path(key)
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):      # a torn file from an old crash: simulate again
            return None

    def put(self, key: str, result: dict) -> None:
        """Writes ``result`` atomically (a killed sweep leaves no partial file)."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(result, f)
        os.replace(tmp, path)


@dataclass
class Payload:
    """What a worker needs to compile points: the model, example inputs and plan."""

    model: object
    inputs: tuple
    plan: object = None
    formats: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=2)
def _program(token: str, payload: bytes):
    """The worker's import of a payload (once per worker and model)."""
    import fuseflow

    spec: Payload = pickle.loads(payload)
    return fuseflow.Program(spec.model, spec.inputs, spec.plan), spec


@functools.lru_cache(maxsize=2)
def _expected(token: str, payload: bytes):
    """PyTorch's output of the payload's model (once per worker and model)."""
    _, spec = _program(token, payload)
    with torch.no_grad():
        return spec.model(*spec.inputs)


RTOL, ATOL = 1e-4, 1e-5
"""Tolerances of a simulated point's check against PyTorch (``matches``)."""


def simulate_point(token: str, payload: bytes, point: Point, arch=None,
                   kernel_cache=None) -> dict:
    """Compiles ``point`` and simulates it (fast engine): cycles, per-kernel cycles and
    schedules (``cached``: read from ``kernel_cache``, a folder of kernel results the points
    share), totals, and whether the output matches PyTorch's (``matches``, within
    :data:`RTOL`/:data:`ATOL`; ``max_error``). Runs in a Dask worker."""
    import warnings

    warnings.filterwarnings("ignore")
    import time

    start = time.perf_counter()
    program, spec = _program(token, payload)
    if point.reassociated:
        program = _reassociated(program, point.reassociated)
    compiled = program.compile(point.schedule(spec.formats))
    result = compiled.simulate(*spec.inputs, arch=arch, kernel_cache=kernel_cache)
    kernels = []
    totals: dict[str, float] = {}
    for info, run in zip(compiled.kernels, result.run.kernels):
        summary = run.result.summary()
        kernels.append({"name": info.name, "order": list(info.schedule.order),
                        "parallel": [list(p) for p in info.schedule.parallel],
                        "block": list(info.schedule.block), "cycles": summary["cycles"],
                        "cached": run.cached})
        for key in ("ops", "bytes_read", "bytes_written"):
            totals[key] = totals.get(key, 0) + summary[key]
    from fuseflow.tools.execute import compare

    matches, error = compare(result.output, _expected(token, payload), RTOL, ATOL)
    return {"cycles": int(result.cycles), "kernels": kernels, **totals,
            "matches": bool(matches), "max_error": error,
            "seconds": time.perf_counter() - start}


def predict_point(program, spec: Payload, point: Point, arch=None, measured=None,
                  cache=None) -> dict:
    """Compiles ``point`` and predicts it with the cost model instead of simulating (for
    models too large to simulate): the same fields as :func:`simulate_point`, ``source``
    ``"cost model"``. ``measured``: the inputs' :class:`~fuseflow.explore.Measured`
    statistics, and ``cache``: a :class:`~fuseflow.explore.MeasuredCache` of the
    parameters' statistics, shared between points."""
    import time

    from fuseflow.explore.costmodel import CostModel, source

    start = time.perf_counter()
    if point.reassociated:
        program = _reassociated(program, point.reassociated)
    compiled = program.compile(point.schedule(spec.formats))
    inputs = measured if measured is not None else [source(t) for t in spec.inputs]
    pred = CostModel(compiled, arch, cache).predict(*inputs)
    kernels = [{"name": info.name, "order": list(info.schedule.order),
                "parallel": [list(p) for p in info.schedule.parallel],
                "block": list(info.schedule.block), "cycles": k.cycles}
               for info, k in zip(compiled.kernels, pred.kernels)]
    totals = {key: pred.total(key) for key in ("ops", "bytes_read", "bytes_written")}
    return {"cycles": pred.cycles, "kernels": kernels, **totals, "source": "cost model",
            "seconds": time.perf_counter() - start}


def _reassociated(program, names: tuple[str, ...]):
    """A copy of ``program`` compiling its import with the chains ``names`` reassociated."""
    import copy

    from fuseflow.explore.reassociate import chains, reassociate

    chosen = [c for c in chains(program.module) if str(c) in names]
    if len(chosen) != len(names):
        raise ValueError(f"chains {names} not all found; the model has "
                         f"{[str(c) for c in chains(program.module)]}")
    variant = copy.copy(program)
    variant.module = reassociate(program.module, chosen)
    return variant


def connect(scheduler: str | None = None, workers: int | None = None):
    """A Dask client: on ``scheduler`` (``tcp://host:port``) or on a new ``LocalCluster`` of
    ``workers`` processes (default: every core), one thread each."""
    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler)
    n = workers or os.cpu_count() or 1
    try:
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    except Exception as err:        # Dask's own (a nanny that failed to start), explained
        raise ClusterError(
            f"could not start a local Dask cluster of {n} worker process(es) "
            f"({type(err).__name__}: {err}). Its workers are new Python processes that import "
            "the calling script's main module first: call fuseflow.explore from under "
            "`if __name__ == \"__main__\":`, or pass scheduler=\"tcp://host:port\" (an "
            "existing cluster) or simulate=False (predict with the cost model, no "
            "workers)") from err
    return Client(cluster)


class ClusterError(FuseFlowError, RuntimeError):
    """The Dask cluster that simulates an exploration's points could not be started."""


def simulate_points(points: list[Point], payload: Payload, keys: list[str], cache: PointCache,
                    arch=None, scheduler: str | None = None, workers: int | None = None,
                    progress=None) -> tuple[dict[str, dict], dict]:
    """Results of ``points`` (name -> result): cached ones read, the others simulated on Dask
    and cached as they finish. ``progress(name, cached)`` is called per finished point.
    Returns the results and counters (``cached``, ``simulated``, ``cached_points``; and
    ``kernels``, ``kernels_cached``: the simulated points' kernels, and those read from the
    kernel cache beside ``cache``, none when its ``root`` is None)."""
    results: dict[str, dict] = {}
    todo = []
    cached_points = []
    for point, key in zip(points, keys):
        hit = cache.get(key)
        if hit is not None:
            results[point.name] = hit
            cached_points.append(point.name)
            if progress:
                progress(point.name, True)
        else:
            todo.append((point, key))
    counters = {"cached": len(results), "simulated": 0, "cached_points": cached_points}
    if not todo:
        return results, counters
    from distributed import as_completed

    blob = pickle.dumps(payload)
    token = hashlib.sha256(blob).hexdigest()
    client = connect(scheduler, workers)
    try:
        shared = client.scatter(blob, broadcast=True)
        # the kernel cache beside the point cache; none without one
        kernels = str(Path(cache.root) / KERNEL_CACHE) if cache.root is not None else None
        futures = {client.submit(simulate_point, token, shared, point, arch, kernels,
                                 key=f"simulate-{key[:16]}", pure=False): (point, key)
                   for point, key in todo}
        for future in as_completed(futures):
            point, key = futures[future]
            try:
                result = future.result()
            except Exception as err:       # a point that fails is reported, not fatal
                log.warning("point %s failed: %s", point.name, err)
                result = {"error": f"{type(err).__name__}: {err}"}
            else:
                cache.put(key, result)
                counters["simulated"] += 1
                kernels = result["kernels"]
                counters["kernels"] = counters.get("kernels", 0) + len(kernels)
                counters["kernels_cached"] = counters.get("kernels_cached", 0) + \
                    sum(k["cached"] for k in kernels)
            results[point.name] = result
            if progress:
                progress(point.name, False)
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and not scheduler:
            cluster.close()
    return results, counters

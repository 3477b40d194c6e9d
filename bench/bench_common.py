"""What the bench scripts share (they run as ``python bench/<script>.py``, so this folder is on
``sys.path``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, doc: Any) -> None:
    """Writes ``doc`` as indented JSON to ``path`` (its folder made if needed) and says so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path}")


def point_parser(description: str):
    """An argument parser for one published point: ``app dataset fusion`` positionals and
    ``--preset`` (default ``published``)."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("app")
    parser.add_argument("dataset")
    parser.add_argument("fusion")
    parser.add_argument("--preset", default="published")
    return parser


def points_parser(description: str):
    """An argument parser for published points: ``APP/DATASET/FUSION`` positionals and
    ``--preset`` (default ``published``)."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("points", nargs="+", metavar="APP/DATASET/FUSION")
    parser.add_argument("--preset", default="published")
    return parser


def built_points(points: list[str], preset: str):
    """Per point ``(point, fusion, model, inputs, plan)``, each application and data set
    built once (``app.build(preset, dataset, 0)``, ``app.plan``); warnings silenced."""
    import warnings

    from fuseflow.apps import get_application

    warnings.filterwarnings("ignore")
    built = {}
    for point in points:
        app_name, dataset, fusion = point.split("/")
        if (app_name, dataset) not in built:
            app = get_application(app_name)
            model, inputs = app.build(preset, dataset, 0)
            built[(app_name, dataset)] = (model, inputs, app.plan(model))
        yield (point, fusion, *built[(app_name, dataset)])


def compiled_points(points: list[str]):
    """Per point ``(point, cost_model, measured)`` at the published preset: the
    :class:`CostModel` of the point's configuration, its kernels compiled (predicted
    ``COMPILE_AFTER + 1`` times), and its measured inputs; one ``Program``,
    ``MeasuredCache`` and set of inputs per application and data set."""
    import fuseflow
    from fuseflow.explore import CostModel, Measured, MeasuredCache
    from fuseflow.explore.kernel import COMPILE_AFTER
    from fuseflow.sim.formats import FiberTree

    caches = {}
    for point, fusion, model, inputs, plan in built_points(points, "published"):
        key = point.rsplit("/", 1)[0]
        if key not in caches:
            caches[key] = (fuseflow.Program(model, inputs, plan), MeasuredCache(),
                           [Measured(FiberTree.from_torch(t.detach())) for t in inputs])
        program, cache, measured = caches[key]
        cost_model = CostModel(program.compile(plan.schedule(fusion, False, {})), cache=cache)
        for _ in range(COMPILE_AFTER + 1):
            cost_model.predict(*measured)
        yield point, cost_model, measured

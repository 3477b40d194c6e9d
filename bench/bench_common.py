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

"""Compile time of one application in several fusion configurations: import + each compile.

With ``fuseflow.Program`` the model is exported and imported once (timed as ``import``) and each
configuration's compile starts from that import. On a checkout without ``Program`` every
configuration is a whole ``fuseflow.compile`` (export + import + pipelines); ``import`` then
times one stand-alone import (``fuseflow.frontend.import_model``) for reference, and is not
part of the total. Before timing, the ``tiny`` preset of the application is compiled once
(``--no-warmup`` skips it) so that loading PyTorch's exporter and torch-mlir is not charged to
the first measurement. One run each; prints a table and merges a record keyed by ``--label``
into the JSON file.

    python bench/bench_compile.py gcn --preset published --dataset cora --label after
    /work/wt-before/.venv/bin/python bench/bench_compile.py gcn --dataset cora --label before
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "compile.json"
FUSIONS = ("unfused", "partial", "full")


def _timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return value, round(time.perf_counter() - start, 3)


def measure(app_name: str, preset: str, dataset: str | None, fusions, seed: int,
            warmup: bool = True) -> dict:
    """Builds the application and times its import and each configuration's compile."""
    warnings.filterwarnings("ignore")
    import fuseflow
    from fuseflow.apps import get_application

    app = get_application(app_name)
    if warmup:
        fuseflow.compile(*app.build("tiny", seed=seed))
    model, inputs = app.build(preset, dataset, seed)
    plan = app.plan(model)
    record = {"application": app_name, "preset": preset,
              "dataset": dataset or app.default_datasets[preset], "seed": seed,
              "fuseflow": str(Path(fuseflow.__file__).resolve().parents[2]),
              "python": platform.python_version(), "warmup": warmup, "compile_seconds": {},
              "kernels": {}}
    if hasattr(fuseflow, "Program"):
        record["api"] = "Program"
        program, record["import_seconds"] = _timed(fuseflow.Program, model, inputs, plan)
        compile_one = program.compile
    else:
        from fuseflow.frontend import import_model

        record["api"] = "compile"
        _, record["import_seconds"] = _timed(import_model, model, inputs)

        def compile_one(schedule):
            return fuseflow.compile(model, inputs, schedule, plan=plan)
    for fusion in fusions:
        # the published workload (the plan's sparse declarations) where the plan has them
        schedule = (plan.schedule(fusion) if hasattr(plan, "schedule")
                    else fuseflow.Schedule(fusion=fusion))
        compiled, seconds = _timed(compile_one, schedule)
        record["compile_seconds"][fusion] = seconds
        record["kernels"][fusion] = compiled.mlir("sam").count('"sam.graph"')
    total = sum(record["compile_seconds"].values())
    if record["api"] == "Program":
        total += record["import_seconds"]
    record["total_seconds"] = round(total, 3)
    return record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("application", nargs="?", default="gcn")
    parser.add_argument("--preset", default="published")
    parser.add_argument("--dataset", default=None,
                        help="data set (default: the application's default for the preset)")
    parser.add_argument("--fusion", nargs="+", default=list(FUSIONS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default=None,
                        help="key of this run in the JSON file (default: the API measured)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--no-warmup", dest="warmup", action="store_false",
                        help="time the first import with the libraries' loading")
    args = parser.parse_args(argv)
    record = measure(args.application, args.preset, args.dataset, args.fusion, args.seed,
                     args.warmup)
    label = args.label or record["api"]
    print(f"{label}: {args.application} {args.preset} {record['dataset']} ({record['api']})")
    print(f"  import  {record['import_seconds']:8.3f} s")
    for fusion, seconds in record["compile_seconds"].items():
        print(f"  {fusion:<8}{seconds:8.3f} s  ({record['kernels'][fusion]} kernels)")
    print(f"  total   {record['total_seconds']:8.3f} s")
    runs = json.loads(args.json.read_text()) if args.json.exists() else {}
    runs[label] = record
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Speed of the static cost model at the published preset, against the simulations of the
published sweep (``docs/costmodel.md``, issue 12).

For every application × data set of ``--points`` (the published sweep's ``points.json``),
builds and imports the model once (as ``fuseflow reproduce --plan`` does,
:mod:`fuseflow.reproduce.plan`; GPT-3 as its simulated models of 1 and 2 decoders), then per
fusion configuration compiles it and times with ``time.process_time()``:

- ``first_predict_seconds``: ``CostModel(compiled, cache=cache).predict(*measured)``, the
  first prediction of the configuration: reading the module, measuring the statistics of
  inputs and parameters in the formats its kernels bind them (unless an earlier configuration
  of the same model measured them: the inputs' ``Measured`` objects and the parameters'
  ``MeasuredCache`` are shared by the configurations, as in a plan or an exploration), host
  layout ops on data, and walking every kernel;
- ``predict_seconds``: ``predict(*measured, reuse=False)`` repeated on the same cost model:
  every kernel predicted again from statistics already measured (what each further
  configuration or schedule of an exploration pays), after the calls that compile the
  kernels (``kernel.COMPILE_AFTER``): the median of ``--repeat`` calls (default 5; a single
  call of a millisecond varies by up to 2x on the shared machine).

Both are compared with the point's simulation time. ``--simulate-below SECONDS`` (default
30) simulates again, here, every configuration whose ``simulate_seconds`` in ``points.json``
is below ``SECONDS``: ``compiled.simulate(..., engine="fast")`` on the compiled configuration
the cost model predicted, timed in CPU seconds with ``time.process_time()``, under the
host-heap policy of the ``fuseflow`` command (``bench_sim_point.py``'s helpers); the first of
them is simulated once untimed before (the engine's first simulation in a process loads its
numba kernels). Such a configuration is measured in ``--rounds`` rounds (default 1), each one
simulation followed by its ``--repeat`` predictions: ``speedup`` is the median over the
rounds of the round's simulation over its median prediction (``round_speedups``: each
round's), so the two sides of each ratio are timed within a second of each other (the
shared machine's speed drifts by up to 2x over minutes). The other points keep
``points.json``'s ``simulate_seconds``: *wall* seconds of the fast engine's simulation during
the published sweep (under a load of 3-6 on the 2-core development machine). Each row says
which (``simulate_source``). Prints a table and writes JSON.

    python bench/bench_costmodel_published.py                   # all four applications
    python bench/bench_costmodel_published.py --apps sae gcn --datasets imagenet cora
    python bench/bench_costmodel_published.py --simulate-below 0   # sweep times only
    python bench/bench_costmodel_published.py --apps gcn --datasets cora --rounds 9 --repeat 21
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path

from bench_common import write_json
from bench_sim_point import timed_simulation, use_host_heap_policy

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_POINTS = RESULTS / "reproduce_published" / "points.json"
DEFAULT_JSON = RESULTS / "costmodel_published.json"
FUSIONS = ("unfused", "partial", "full")
"""The fusion configurations in the order each model is predicted (the first one measures the
statistics the others share)."""

TIMING = {
    "clock": "time.process_time(): CPU seconds of this process (one process, one worker)",
    "build_seconds": "app.build, app.plan and fuseflow.Program (import), once per model, "
                     "shared by its configurations; not part of any prediction time",
    "input_seconds": "the inputs as FiberTrees (Measured wrappers), once per model; not part "
                     "of any prediction time (their statistics are measured in the first "
                     "prediction that binds them)",
    "compile_seconds": "program.compile(plan.schedule(level)), per configuration; not part of "
                       "any prediction time",
    "first_predict_seconds": "CostModel(compiled, cache=cache) and its first predict(*measured): "
                             "statistics of inputs and parameters measured in the formats the "
                             "kernels bind (once per model and format: later configurations "
                             "of the same model find them measured), host layout ops on data, "
                             "every kernel walked",
    "predict_seconds": "predict(*measured, reuse=False) on the same cost model, after the "
                       "calls that compile its kernels: every kernel predicted from "
                       "statistics already measured; the median of --repeat such calls "
                       "(GPT-3: the median of each depth, summed); with --rounds, the median "
                       "of the rounds' medians",
    "simulate_seconds": "simulate_source 'measured': CPU seconds (time.process_time) of "
                        "compiled.simulate (fast engine) of the predicted configuration, "
                        "in this run, under the fuseflow command's host-heap policy (the "
                        "median of the --rounds simulations, one per round); "
                        "'sweep': points.json's simulate_seconds, wall seconds in the "
                        "published sweep under a load of 3-6 on 2 cores",
    "sweep_simulate_seconds": "points.json's simulate_seconds (wall, published sweep), kept "
                              "for every row",
    "speedup": "simulate_seconds / predict_seconds; simulated here: the median over the rounds "
               "of each round's simulation / the median of its --repeat predictions "
               "(round_speedups: each round's)",
    "extrapolated": "GPT-3: the models of 1 and 2 decoders are built, predicted and simulated; "
                    "every time is the sum over both",
}


def _clock() -> float:
    return time.process_time()


def published_groups(points: dict, apps, datasets) -> dict:
    """``(app, dataset) -> {fusion: point}`` of the published points that simulated."""
    groups: dict = {}
    for point in points.values():
        if point["preset"] != "published" or point["dense_weights"] or point["status"] != "ok":
            continue
        if point["app"] not in apps or point.get("simulate_seconds") is None:
            continue
        if datasets and point["dataset"] not in datasets:
            continue
        groups.setdefault((point["app"], point["dataset"]), {})[point["fusion"]] = point
    return {key: dict(sorted(group.items(), key=lambda item: FUSIONS.index(item[0])))
            for key, group in groups.items()}


class _Simulations:
    """Which configurations are simulated again (sweep time below ``below`` seconds), and
    their timed simulations. The first one is run once untimed before it is timed: the fast
    engine's first simulation in a process loads (or, on a new checkout, compiles) its numba
    kernels, seconds that no later simulation pays."""

    def __init__(self, below: float, rounds: int = 1):
        self.below = below
        self.rounds = max(1, rounds)
        self.warm = False

    def wanted(self, point: dict) -> bool:
        return point["simulate_seconds"] < self.below

    def run(self, compiled, inputs):
        """``(result, cpu_seconds)`` of one fast-engine simulation (:func:`timed_simulation`),
        after an untimed one if it is the first of the process."""
        if not self.warm:
            timed_simulation(compiled, inputs)
            self.warm = True
        return timed_simulation(compiled, inputs)


class _Model:
    """One built model of a group (GPT-3: one of its simulated depths)."""

    def __init__(self, app, dataset: str, seed: int, layers, repeat: int):
        import fuseflow
        from fuseflow.explore import Measured, MeasuredCache
        from fuseflow.sim.formats import FiberTree

        start = _clock()
        model, inputs = app.build("published", dataset, seed, layers)
        self.plan = app.plan(model)
        self.program = fuseflow.Program(model, inputs, self.plan)
        self.build_seconds = _clock() - start
        start = _clock()
        self.inputs = inputs
        self.measured = [Measured(FiberTree.from_torch(t.detach())) for t in inputs]
        self.input_seconds = _clock() - start
        self.cache = MeasuredCache()
        self.repeat = repeat

    def time(self, fusion: str, simulate: _Simulations | None) -> dict:
        """Compile and prediction times of one configuration, and (``simulate`` given) the CPU
        seconds and cycles of its simulation after the predictions."""
        from fuseflow.explore import CostModel
        from fuseflow.explore.kernel import COMPILE_AFTER

        start = _clock()
        compiled = self.program.compile(self.plan.schedule(fusion, False, {}))
        compile_seconds = _clock() - start
        start = _clock()
        model = CostModel(compiled, cache=self.cache)
        first = model.predict(*self.measured)
        first_seconds = _clock() - start
        for _ in range(COMPILE_AFTER):
            model.predict(*self.measured)

        def predictions():
            times = []
            for _ in range(self.repeat):
                start = _clock()
                again = model.predict(*self.measured, reuse=False)
                times.append(_clock() - start)
            return again, statistics.median(times)

        out = {"compile_seconds": compile_seconds, "first_predict_seconds": first_seconds,
               "kernels": len(first.kernels)}
        if simulate is None:
            again, out["predict_seconds"] = predictions()
        else:                   # rounds: one simulation, then its predictions
            rounds, cycles = [], set()
            for _ in range(simulate.rounds):
                result, seconds = simulate.run(compiled, self.inputs)
                cycles.add(int(result.cycles))
                again, predicted = predictions()
                rounds.append((seconds, predicted))
            if len(cycles) != 1:
                raise SystemExit(f"repeated simulations disagree on cycles: {sorted(cycles)}")
            out["rounds"] = rounds
            out["simulate_seconds"] = statistics.median(r[0] for r in rounds)
            out["predict_seconds"] = statistics.median(r[1] for r in rounds)
            out["simulated_cycles"] = cycles.pop()
        out["tokens"] = sum(k.tokens for k in again.kernels)
        out["cycles"] = again.cycles
        return out


def measure_group(app_name: str, dataset: str, points: dict, seed: int,
                  simulations: _Simulations, repeat: int = 1) -> list[dict]:
    """Rows of one application × data set: one build, every configuration of ``points``; those
    ``simulations`` wants are simulated again."""
    from fuseflow.apps import get_application
    from fuseflow.apps.layers import extrapolation

    app = get_application(app_name)
    depths = (1, 2) if extrapolation(app, "published") else (None,)
    models = [_Model(app, dataset, seed, depth, repeat) for depth in depths]
    rows = []
    for fusion, point in points.items():
        simulate = simulations.wanted(point)
        parts = [m.time(fusion, simulations if simulate else None) for m in models]
        row = {"point": f"{app_name}/{dataset}/{fusion}", "app": app_name, "dataset": dataset,
               "fusion": fusion, "depths": [d for d in depths if d is not None],
               "build_seconds": sum(m.build_seconds for m in models),
               "input_seconds": sum(m.input_seconds for m in models),
               "simulate_source": "measured" if simulate else "sweep",
               "simulate_seconds": point["simulate_seconds"],
               "sweep_simulate_seconds": point["simulate_seconds"],
               "simulated_tokens": point.get("simulated_tokens", point["tokens"])}
        keys = ["compile_seconds", "first_predict_seconds", "predict_seconds", "tokens", "cycles"]
        if simulate:
            keys += ["simulate_seconds", "simulated_cycles"]
        for key in keys:
            row[key] = sum(p[key] for p in parts)
        row["kernels"] = parts[-1]["kernels"]
        row["first_speedup"] = row["simulate_seconds"] / row["first_predict_seconds"]
        row["speedup"] = row["simulate_seconds"] / row["predict_seconds"]
        if simulate:            # each round's ratio, the depths' times summed per round
            row["round_speedups"] = [
                sum(p["rounds"][r][0] for p in parts) / sum(p["rounds"][r][1] for p in parts)
                for r in range(simulations.rounds)]
            row["speedup"] = statistics.median(row["round_speedups"])
        rows.append(row)
        _print_row(row)
    return rows


def summarize(rows: list[dict]) -> dict:
    """Min, median and max of both ratios; how many reach 1000x."""
    out = {"points": len(rows),
           "simulate_measured": sum(r["simulate_source"] == "measured" for r in rows)}
    for key in ("first_speedup", "speedup"):
        values = sorted(r[key] for r in rows)
        out[key] = {"min": values[0], "median": statistics.median(values), "max": values[-1],
                    "at_least_1000x": sum(v >= 1000.0 for v in values)}
    return out


def _print_row(row: dict) -> None:
    print(f"{row['point']:28s} sim {row['simulate_seconds']:9.3f} s "
          f"({row['simulate_source']:8s}) first predict "
          f"{row['first_predict_seconds']:8.4f} s  x{row['first_speedup']:<9.0f} predict "
          f"{row['predict_seconds']:8.4f} s  x{row['speedup']:.0f}", flush=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", nargs="+", default=["sae", "gcn", "graphsage", "gpt3"])
    parser.add_argument("--datasets", nargs="+", default=None,
                        help="only these data sets (default: all)")
    parser.add_argument("--points", type=Path, default=DEFAULT_POINTS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--simulate-below", type=float, default=30.0, metavar="SECONDS",
                        help="simulate again (CPU seconds, this machine) every configuration "
                             "whose sweep simulation took less than SECONDS (default 30; 0: "
                             "use the sweep's times only)")
    parser.add_argument("--rounds", type=int, default=1, metavar="N",
                        help="measure each configuration simulated again in N rounds of one "
                             "simulation and --repeat predictions; speedup is the median of "
                             "the rounds' ratios (default 1)")
    parser.add_argument("--merge", type=Path, default=None, metavar="JSON",
                        help="also write the rows of an earlier run's JSON for the points "
                             "this run does not measure (e.g. one left out for memory), "
                             "named in merged_points")
    parser.add_argument("--repeat", type=int, default=5, metavar="N",
                        help="time N repeated predictions of each configuration; "
                             "predict_seconds is their median (default 5)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    heap_policy = use_host_heap_policy() if args.simulate_below > 0 else False
    simulations = _Simulations(args.simulate_below, args.rounds)

    points = json.loads(args.points.read_text())["points"]
    rows = []
    for (app, dataset), group in published_groups(points, args.apps, args.datasets).items():
        rows.extend(measure_group(app, dataset, group, args.seed, simulations, args.repeat))
    kept = []
    if args.merge is not None:
        measured = {row["point"] for row in rows}
        kept = [row for row in json.loads(args.merge.read_text())["rows"]
                if row["point"] not in measured]
        rows = kept + rows
    summary = summarize(rows)
    for key, what in (("first_speedup", "first prediction"), ("speedup", "repeated prediction")):
        s = summary[key]
        print(f"{what}: {s['min']:.0f}x .. {s['max']:.0f}x (median {s['median']:.0f}x), "
              f">=1000x on {s['at_least_1000x']} of {summary['points']}")
    write_json(args.json, {"timing": TIMING, "points_file": str(args.points.name),
                           "simulate_below": args.simulate_below, "repeat": args.repeat,
                           "rounds": args.rounds,
                           "merged_from": args.merge and args.merge.name,
                           "merged_points": [row["point"] for row in kept],
                           "host_heap_policy": heap_policy,
                           "summary": summary, "rows": rows})
    return summary


if __name__ == "__main__":
    main()

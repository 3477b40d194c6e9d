"""Accuracy and speed of the static cost model against the simulator (``docs/costmodel.md``).

For every application × fusion configuration (``--presets``, default tiny and small; the
published workload and its dense variant, ``--workloads``) and every built-in kernel, compiles once, simulates with the fast engine (best of ``--repeats`` wall
times) and predicts with :class:`fuseflow.explore.CostModel` from statistics measured from
the same inputs (best of ``--repeats`` samples, each the mean of enough calls to last 20 ms;
the inputs' statistics are measured and each kernel compiled once before timing, as an
exploration reuses them; the first call, which does both, is reported too, and so is one
call of the reference walk). What is timed and what is not is written to the JSON
(``timing``). Reports per
configuration and per kernel the relative error of operations, bytes read and written,
tokens and cycles, their distribution, the Spearman rank correlation of predicted and
simulated cycles over all configurations, and the speed ratio at three reference points:
against the fast engine (``speedup``), against the cycle-level reference engine
(``reference_speedup``, where one reference simulation is estimated to take under
``--reference-budget`` seconds) and, for a repeated prediction that reuses every kernel,
against the fast engine (``repeat_speedup``). Cases whose simulation would exceed
``--sim-budget`` seconds (estimated from the predicted tokens and the fast engine's rate so
far) are predicted only. Prints a table and writes JSON.

    python bench/bench_costmodel.py                         # JSON to bench/results/costmodel.json
    python bench/bench_costmodel.py --presets tiny --apps gcn sae --no-kernels
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "costmodel.json"
METRICS = ("ops", "bytes_read", "bytes_written", "tokens", "cycles")
KERNEL_SPARSITY = 0.7
KERNEL_SCALE = 8
REFERENCE_SLOWDOWN = 100.0
"""The reference engine's time over the fast engine's assumed before one is measured (the
simulator's documentation says about 100x)."""


def _clock() -> float:
    """CPU time of this process: on a shared machine, wall time also counts the other users'
    load (it made simulations of the same case 1-4x slower from one run to the next)."""
    return time.process_time()


TIMING = {
    "clock": "time.process_time(): CPU seconds of this process, for simulation and prediction "
             "alike (both run in this process: simulate(workers=1))",
    "sim_seconds": "compiled.simulate(*inputs, engine='fast'): the model's inputs as torch "
                   "tensors to simulator counters and outputs; best of --repeats calls (1 "
                   "when a call would exceed a third of --sim-budget)",
    "predict_seconds": "CostModel.predict(*measured, reuse=False): every kernel's totals "
                       "(cycles, tokens, operations, bytes) and its results' statistics, "
                       "computed from the inputs' statistics; best of --repeats samples, each "
                       "the mean of enough calls to last 20 ms",
    "repeat_predict_seconds": "CostModel.predict(*measured) repeated on the same Measured "
                              "inputs: every kernel's prediction is reused (its input "
                              "statistics are the previous call's objects), nothing is "
                              "computed; what an exploration pays to ask again, not the cost "
                              "of predicting",
    "excluded_from_predict_seconds": "CostModel(compiled) (reads the module and loads each "
                                     "sam.graph: load_seconds), measuring each input's "
                                     "statistics once per format (first_predict_seconds, a "
                                     "reference walk), compiling each kernel once per graph, "
                                     "block costs and input formats (after COMPILE_AFTER "
                                     "walks: warmup_seconds), and per-block predictions "
                                     "(rebuilt by the reference walk when read)",
    "reference_predict_seconds": "CostModel.predict(*measured, reference=True): the "
                                 "reference walk (every block's rule on Level objects), one "
                                 "call",
    "reference_sim_seconds": "compiled.simulate(*inputs, engine='reference'): the "
                             "cycle-by-cycle specification engine (the same counters), one "
                             "call; None where it was estimated (sim_seconds times the "
                             "largest reference/fast ratio measured so far) to exceed "
                             "--reference-budget",
    "speedup": "sim_seconds / predict_seconds (the fast engine against computing every "
               "kernel)",
    "reference_speedup": "reference_sim_seconds / predict_seconds",
    "repeat_speedup": "sim_seconds / repeat_predict_seconds (the fast engine against a "
                      "repeated prediction reusing every kernel: a lookup, not a prediction)",
}


def _best(fn, repeats: int):
    best, value = float("inf"), None
    for _ in range(repeats):
        start = _clock()
        value = fn()
        best = min(best, _clock() - start)
    return best, value


def _error(pred: float, sim: float) -> float:
    return (pred - sim) / sim if sim else (0.0 if pred == 0 else float("inf"))


def _per_call(fn, repeats: int, floor: float = 0.02):
    """Best of ``repeats`` samples of the mean time of ``fn`` over enough calls for a sample
    to last ``floor`` seconds (timeit's protocol: one call of a 20 us function is below the
    timer's resolution and scheduling noise)."""
    start = _clock()
    value = fn()
    once = _clock() - start
    calls = max(1, min(10000, int(floor / max(once, 1e-9))))
    best = once
    for _ in range(repeats):
        start = _clock()
        for _ in range(calls):
            value = fn()
        best = min(best, (_clock() - start) / calls)
    return best, value


def measure_case(name: str, compiled, inputs, repeats: int, simulate: bool,
                 reference_budget: float = 0.0, slowdown: float = REFERENCE_SLOWDOWN) -> dict:
    """One configuration: errors per metric (model and per kernel) and timings; also one
    simulation by the reference engine when the fast engine's time times ``slowdown`` is
    within ``reference_budget`` seconds."""
    from fuseflow.explore import CostModel, Measured
    from fuseflow.explore.kernel import COMPILE_AFTER

    start = _clock()
    model = CostModel(compiled)
    load_seconds = _clock() - start
    start = _clock()
    measured = [Measured(_tree(t)) for t in inputs]
    model.predict(*measured)
    first_seconds = _clock() - start
    start = _clock()
    for _ in range(COMPILE_AFTER):          # the kernels are compiled on the last call
        model.predict(*measured)
    warmup_seconds = _clock() - start
    predict_seconds, pred = _per_call(lambda: model.predict(*measured, reuse=False), repeats)
    repeat_seconds, _ = _per_call(lambda: model.predict(*measured), repeats)
    reference_seconds, _ = _per_call(lambda: model.predict(*measured, reference=True), 1,
                                     floor=0.0)
    row = {"case": name, "kernels": len(pred.kernels), "load_seconds": load_seconds,
           "first_predict_seconds": first_seconds, "warmup_seconds": warmup_seconds,
           "predict_seconds": predict_seconds, "repeat_predict_seconds": repeat_seconds,
           "reference_predict_seconds": reference_seconds,
           "predicted": {m: _total(pred.kernels, m, predicted=True) for m in METRICS}}
    if not simulate:
        return row
    sim_seconds, sim = _best(lambda: compiled.simulate(*inputs, engine="fast"), repeats)
    row["sim_seconds"] = sim_seconds
    row["speedup"] = sim_seconds / predict_seconds
    row["repeat_speedup"] = sim_seconds / repeat_seconds
    row["reference_sim_seconds"] = row["reference_speedup"] = None
    if sim_seconds * slowdown <= reference_budget:
        ref_seconds, _ = _best(lambda: compiled.simulate(*inputs, engine="reference"), 1)
        row["reference_sim_seconds"] = ref_seconds
        row["reference_speedup"] = ref_seconds / predict_seconds
    row["simulated"] = {m: _total(sim.run.kernels, m, predicted=False) for m in METRICS}
    row["error"] = {m: _error(row["predicted"][m], row["simulated"][m]) for m in METRICS}
    row["kernel_errors"] = [
        {m: _error(kp.summary()[m], kr.result.summary()[m]) for m in METRICS}
        for kp, kr in zip(pred.kernels, sim.run.kernels)]
    return row


def _tree(t):
    from fuseflow.sim.formats import FiberTree

    return FiberTree.from_torch(t.detach())


def _total(kernels, metric: str, predicted: bool) -> float:
    if predicted:
        return sum(k.summary()[metric] for k in kernels)
    return sum(k.result.summary()[metric] for k in kernels)


WORKLOADS = ("published", "dense")
"""``published``: the application's default workload (``fuseflow run``: pruned weights and the
BigBird mask declared sparse, ``FusionPlan.schedule``); ``dense``: nothing declared sparse
(``--dense-weights``)."""


def application_cases(apps, presets, workloads=WORKLOADS):
    """``(name, compiled, inputs)`` for every application × preset × fusion configuration ×
    workload (``app/preset/fusion`` for the published one, ``.../dense`` for the dense one)."""
    import fuseflow
    from fuseflow.apps import APPLICATIONS

    for app_name in apps:
        app = APPLICATIONS[app_name]
        for preset in presets:
            model, inputs = app.build(preset)
            plan = app.plan(model)
            for fusion in plan.fusion_groups:
                for workload in workloads:
                    dense = workload == "dense"
                    schedule = plan.schedule(fusion, dense, None)
                    compiled = fuseflow.compile(model, inputs, schedule, plan=plan)
                    suffix = "/dense" if dense else ""
                    yield f"{app_name}/{preset}/{fusion}{suffix}", compiled, inputs


def kernel_cases(scales=(KERNEL_SCALE,)):
    """``(name, compiled, inputs)`` for every built-in kernel at every scale (operand
    dimensions times the scale; ``kernel/NAME`` at the default scale, ``kernel/NAME@S``)."""
    import fuseflow
    from fuseflow.kernels import KERNELS

    for scale in scales:
        for name, kernel in KERNELS.items():
            inputs = kernel.inputs(KERNEL_SPARSITY, seed=0, scale=scale)
            compiled = fuseflow.compile(kernel.module(), inputs,
                                        fuseflow.Schedule(formats=dict(kernel.declared)))
            suffix = "" if scale == KERNEL_SCALE else f"@{scale}"
            yield f"kernel/{name}{suffix}", compiled, inputs


def spearman(xs, ys) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(xs, ys).statistic)


def summarize(rows: list[dict]) -> dict:
    """Error distributions (absolute relative errors) per metric, over configurations and
    over kernels; Spearman of cycles; speed ratios."""
    compared = [r for r in rows if "error" in r]
    out = {"configurations": len(rows), "simulated": len(compared)}
    for m in METRICS:
        errs = sorted(abs(r["error"][m]) for r in compared)
        kerrs = sorted(abs(e[m]) for r in compared for e in r["kernel_errors"])
        out[m] = {"median": statistics.median(errs), "max": errs[-1],
                  "within_10pct": sum(e <= 0.10 for e in errs),
                  "kernels_max": kerrs[-1], "kernels_within_10pct": sum(e <= 0.10 for e in kerrs),
                  "kernels": len(kerrs)}
    out["spearman_cycles"] = spearman([r["predicted"]["cycles"] for r in compared],
                                      [r["simulated"]["cycles"] for r in compared])
    for key in ("speedup", "reference_speedup", "repeat_speedup"):
        speed = sorted(r[key] for r in compared if r.get(key) is not None)
        if speed:
            out[key] = {"cases": len(speed), "min": speed[0],
                        "median": statistics.median(speed), "max": speed[-1],
                        "at_least_1000x": sum(x >= 1000.0 for x in speed)}
    # Prediction reads per-level statistics, not the data: its time does not grow with the
    # non-zeros, a simulation's does. The ratio by how long the simulation takes:
    out["speedup_by_sim_seconds"] = {}
    for low, high in ((0.0, 0.1), (0.1, 1.0), (1.0, 10.0), (10.0, float("inf"))):
        band = sorted(r["speedup"] for r in compared if low <= r["sim_seconds"] < high)
        if band:
            out["speedup_by_sim_seconds"][f"{low:g}-{high:g}"] = {
                "cases": len(band), "min": band[0], "median": statistics.median(band),
                "max": band[-1]}
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=["tiny", "small"])
    parser.add_argument("--apps", nargs="+", default=["sae", "gcn", "graphsage", "gpt3"])
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS),
                        help="the applications' published workloads (sparse weights and masks "
                        "declared sparse) and/or their dense variants (default: both)")
    parser.add_argument("--no-kernels", action="store_true", help="skip the built-in kernels")
    parser.add_argument("--kernel-scales", type=int, nargs="+", default=[KERNEL_SCALE, 64],
                        help="built-in kernels' operand dimensions times these (default "
                        f"{KERNEL_SCALE} and 64)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sim-budget", type=float, default=120.0,
                        help="seconds a simulation may take (estimated); longer cases are "
                        "predicted only")
    parser.add_argument("--reference-budget", type=float, default=20.0,
                        help="seconds one reference-engine simulation may take (estimated); "
                        "longer cases get reference_sim_seconds None")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")

    rows, rate, most = [], None, 0.0   # rate: simulated tokens per second so far
    slowdown = REFERENCE_SLOWDOWN      # the largest reference / fast time so far
    cases = [] if args.no_kernels else [kernel_cases(args.kernel_scales)]
    cases.insert(0, application_cases(args.apps, args.presets, tuple(args.workloads)))
    for source in cases:
        for name, compiled, inputs in source:
            probe = measure_case(name, compiled, inputs, 1, simulate=False)
            estimate = probe["predicted"]["tokens"] / rate if rate else 0.0
            simulate = estimate <= args.sim_budget
            repeats = args.repeats if estimate * args.repeats <= args.sim_budget else 1
            row = measure_case(name, compiled, inputs, repeats if simulate else 1, simulate,
                               args.reference_budget, slowdown)
            if row.get("reference_sim_seconds") is not None:
                slowdown = max(slowdown, row["reference_sim_seconds"] / row["sim_seconds"])
            if simulate and row["simulated"]["tokens"] > most:
                # The rate of the largest case so far: small cases are dominated by fixed
                # costs and would make every large one look over budget.
                most = row["simulated"]["tokens"]
                rate = most / row["sim_seconds"]
            rows.append(row)
            _print_row(row)
    summary = summarize(rows)
    _print_summary(summary)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"timing": TIMING, "summary": summary, "rows": rows},
                                    indent=1))
    print(f"wrote {args.json}")
    return summary


def _print_row(row: dict) -> None:
    if "error" not in row:
        print(f"{row['case']:32s} predicted only: {row['predicted']['cycles']:.4g} cycles "
              f"(simulation over budget), predict {row['predict_seconds'] * 1e3:.2f} ms")
        return
    e = row["error"]
    print(f"{row['case']:32s} " + " ".join(f"{m} {e[m] * 100:+6.1f}%" for m in METRICS)
          + f"  sim {row['sim_seconds'] * 1e3:9.1f} ms"
          + f"  predict {row['predict_seconds'] * 1e3:7.2f} ms"
          + f"  x{row['speedup']:.0f}"
          + (f"  ref x{row['reference_speedup']:.0f}" if row["reference_speedup"] else ""))


def _print_summary(summary: dict) -> None:
    print(f"\n{summary['simulated']} of {summary['configurations']} configurations simulated")
    for m in METRICS:
        s = summary[m]
        print(f"{m:14s} |error| median {s['median'] * 100:5.2f}%  max {s['max'] * 100:6.2f}%  "
              f"within 10%: {s['within_10pct']}/{summary['simulated']} configurations, "
              f"{s['kernels_within_10pct']}/{s['kernels']} kernels "
              f"(max {s['kernels_max'] * 100:.1f}%)")
    print(f"Spearman(cycles) = {summary['spearman_cycles']:.4f}")
    for key, what in (("speedup", "the fast engine"),
                      ("reference_speedup", "the reference engine"),
                      ("repeat_speedup", "the fast engine, repeated prediction")):
        if key in summary:
            sp = summary[key]
            print(f"speed vs {what}: {sp['min']:.0f}x .. {sp['max']:.0f}x (median "
                  f"{sp['median']:.0f}x), >=1000x on {sp['at_least_1000x']} of {sp['cases']}")
    for band, b in summary["speedup_by_sim_seconds"].items():
        print(f"  simulations of {band} s: {b['cases']} cases, {b['min']:.0f}x .. "
              f"{b['max']:.0f}x (median {b['median']:.0f}x)")


if __name__ == "__main__":
    main()

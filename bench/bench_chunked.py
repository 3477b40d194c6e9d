"""Peak memory and time of the fast engine on an application at full size, against its budget.

Each point runs in a fresh process: it builds the application's model and data (as
``fuseflow run`` does), compiles the configuration, then simulates it on the fast engine with
the given memory budget while a thread samples the process's resident memory. Reported: the
resident memory before simulating (inputs, model, compiled graphs), its peak during the
simulation, the growth (what the engine used, to compare with the budget), wall seconds,
cycles and simulated tokens; per kernel, the resident memory before, at its peak and after,
and ``engine_gib``, the peak less the larger of before and after: the memory the engine used
while simulating the kernel beyond what the run keeps (the results), which the budget bounds
(``docs/timing.md``). Prints a table and writes JSON.

    python bench/bench_chunked.py                                   # GCN ogbn-mag unfused, 4 GiB
    python bench/bench_chunked.py --app gpt3 --preset small --fusion unfused partial full
    python bench/bench_chunked.py --dataset collab --fusion full --budget-gib 2 8
"""

from __future__ import annotations

import argparse
import multiprocessing
import threading
import time
import warnings
from pathlib import Path

from bench_common import write_json

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "chunked.json"


def _rss_bytes() -> int:
    import resource

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


class _PeakSampler(threading.Thread):
    """Samples the resident set every ``period`` seconds until stopped; keeps the maximum."""

    def __init__(self, period: float = 0.02):
        super().__init__(daemon=True)
        self.period = period
        self.peak = _rss_bytes()
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(self.period):
            self.peak = max(self.peak, _rss_bytes())

    def reset(self) -> int:
        """Starts a new maximum from the current resident set; returns it."""
        self.peak = _rss_bytes()
        return self.peak

    def stop(self) -> int:
        self._done.set()
        self.join()
        self.peak = max(self.peak, _rss_bytes())
        return self.peak


def measure(point: dict) -> dict:
    """One point (meant to run in a fresh process)."""
    import functools

    import torch

    import fuseflow
    from fuseflow.apps import get_application
    from fuseflow.sim import engines

    warnings.filterwarnings("ignore")
    app = get_application(point["app"])
    model, inputs = app.build(point["preset"], point["dataset"], 0)
    with torch.no_grad():
        plan = app.plan(model)
        compiled = fuseflow.compile(model, inputs, plan.schedule(point["fusion"], point["dense_weights"]),
                                    plan=plan)
    budget = None if point["budget_gib"] is None else int(point["budget_gib"] * 2**30)
    # CompiledModel.simulate does not take the engine's options yet: bind the budget on the
    # engine entry point it calls
    bound = functools.partial(engines.run, memory_budget=budget)
    before = _rss_bytes()
    sampler = _PeakSampler()
    sampler.start()
    kernels = []

    def run_kernel(graph, *args, **kwargs):
        """One kernel, its resident memory before, at the peak and after (what it keeps: its
        results; the peak less the larger of before and after: what the engine used while
        simulating it, to compare with the budget)."""
        overall = sampler.peak
        start_rss = sampler.reset()
        result = bound(graph, *args, **kwargs)
        after = _rss_bytes()
        peak = max(sampler.peak, after)
        sampler.peak = max(overall, peak)
        kernels.append({"kernel": graph.name, "rss_before_gib": round(start_rss / 2**30, 3),
                        "rss_peak_gib": round(peak / 2**30, 3),
                        "rss_after_gib": round(after / 2**30, 3),
                        "engine_gib": round((peak - max(start_rss, after)) / 2**30, 3)})
        return result

    engines.run = run_kernel
    start = time.perf_counter()
    error = None
    try:
        result = compiled.simulate(*inputs, engine="fast",
                                   keep_intermediates=point["keep_intermediates"])
    except Exception as exc:  # noqa: BLE001 - a failed point is a result of the benchmark
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    peak = sampler.stop()
    row = {**point, "seconds": round(seconds, 2), "rss_before_gib": round(before / 2**30, 3),
           "rss_peak_gib": round(peak / 2**30, 3), "sim_growth_gib": round((peak - before) / 2**30, 3),
           "error": error, "kernel_memory": kernels,
           "engine_peak_gib": max((k["engine_gib"] for k in kernels), default=None)}
    if error is None:
        row.update(cycles=result.cycles, tokens=sum(r.summary()["tokens"] for r in result.stats.values()),
                   kernels=len(result.stats))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="gcn")
    parser.add_argument("--preset", default="published")
    parser.add_argument("--dataset", default="mag")
    parser.add_argument("--fusion", nargs="+", default=["unfused"])
    parser.add_argument("--budget-gib", type=float, nargs="+", default=[4.0],
                        help="memory budgets to run with, GiB (0: no budget, whole streams)")
    parser.add_argument("--keep-intermediates", action="store_true",
                        help="keep every kernel's results to the end of the run (as "
                        "CompiledModel.simulate does by default); without it, each is let go "
                        "once read, as fuseflow run does")
    parser.add_argument("--dense-weights", action="store_true",
                        help="the dense variant (nothing declared sparse) instead of the published workload")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    rows = []
    print(f"{'point':<40} {'budget GiB':>10} {'seconds':>9} {'RSS before':>10} {'peak':>7} {'growth':>7} "
          f"{'engine':>7} {'cycles':>13} {'tokens':>15}")
    for fusion in args.fusion:
        for budget in args.budget_gib:
            point = {"app": args.app, "preset": args.preset, "dataset": args.dataset, "fusion": fusion,
                     "budget_gib": budget or None, "keep_intermediates": args.keep_intermediates,
                     "dense_weights": args.dense_weights}
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                row = pool.apply(measure, (point,))
            rows.append(row)
            name = f"{args.app} {args.dataset} {args.preset} {fusion}" + (" dense" if args.dense_weights else "")
            tail = (f"{row['cycles']:>13,} {row['tokens']:>15,}" if row["error"] is None
                    else f"FAILED: {row['error'][:80]}")
            print(f"{name:<40} {budget or '-':>10} {row['seconds']:>9.1f} {row['rss_before_gib']:>10.2f} "
                  f"{row['rss_peak_gib']:>7.2f} {row['sim_growth_gib']:>7.2f} "
                  f"{row['engine_peak_gib'] or 0:>7.2f} {tail}", flush=True)
    write_json(args.json, rows)


if __name__ == "__main__":
    main()

"""Fusion search time against model size: GPT-3 (tiny preset) with 1, 2, 4, 8 and 12 decoder
layers, searched with the cost model (``docs/explore.md``).

For each size: units in the op graph, candidate groups, candidate kernels (group x order x
lanes: the per-kernel axes of ``explore/axes.py``, ``--lanes``, default 1,2,4) evaluated,
the size of the space searched (partitions x kernel choices), pipeline batches, cuts and
partial solutions kept, and the search time (import excluded). Groups are bounded
(``--max-units``, default 13: the largest kernel of the application's configurations), so
candidates grow linearly with the model.

    python bench/bench_search.py                      # JSON to bench/results/search.json
    python bench/bench_search.py --layers 1 2 --orders 1 --lanes 1
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "search.json"


def measure(layers: int, orders: int, max_units: int, lanes=(1,)) -> dict:
    import fuseflow
    from fuseflow.explore.axes import default_axes
    from fuseflow.explore.evaluate import KernelEvaluator
    from fuseflow.explore.opgraph import program_graph
    from fuseflow.explore.scaling import gpt3_decoders
    from fuseflow.explore.search import search

    model, inputs, plan = gpt3_decoders(layers)
    start = time.perf_counter()
    program = fuseflow.Program(model, inputs, plan)
    imported = time.perf_counter() - start
    graph = program_graph(program)
    evaluator = KernelEvaluator(program, inputs, orders=orders,
                                axes=default_axes(orders, lanes))
    result = search(graph, evaluator, max_units=max_units)
    best = result.best
    return {"layers": layers, "units": len(graph), "groups": result.groups,
            "candidates": result.candidates, "space": result.space,
            "batches": evaluator.batches, "analyzed": evaluator.analyzed,
            "read": evaluator.read, "reused": evaluator.reused, "cuts": result.states,
            "partial_solutions": result.labels, "front": len(result.front),
            "import_seconds": imported, "search_seconds": result.seconds,
            "search_cpu_seconds": result.cpu_seconds,
            "evaluate_seconds": result.evaluate_seconds,
            "join_seconds": result.seconds - result.evaluate_seconds,
            "best_cycles": best.cost.cycles, "best_kernels": len(best.kernels),
            "best_lanes": best.cost.lanes,
            "best_one_lane_cycles": min((s.cost.cycles for s in result.front
                                         if s.cost.lanes == 1), default=None)}


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4, 8, 12])
    parser.add_argument("--orders", type=int, default=2, help="legal orders per group")
    parser.add_argument("--max-units", type=int, default=13)
    parser.add_argument("--lanes", default="1,2,4",
                        help="lane counts a kernel may fork into (default 1,2,4)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    from fuseflow.explore.axes import lane_factors

    lanes = lane_factors(args.lanes)
    rows = []
    print(f"{'layers':>6} {'units':>5} {'groups':>6} {'cands':>6} {'space':>10} {'batches':>7} "
          f"{'search s':>9} {'cpu s':>7} {'cpu/unit':>8} {'best kernels':>12}")
    for layers in args.layers:
        row = measure(layers, args.orders, args.max_units, lanes)
        rows.append(row)
        print(f"{row['layers']:6d} {row['units']:5d} {row['groups']:6d} {row['candidates']:6d} "
              f"{row['space']:10.3g} {row['batches']:7d} {row['search_seconds']:9.1f} "
              f"{row['search_cpu_seconds']:7.1f} {row['search_cpu_seconds'] / row['units']:8.2f} "
              f"{row['best_kernels']:12d}",
              flush=True)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"orders": args.orders, "max_units": args.max_units,
                                         "lanes": list(lanes), "rows": rows}, indent=1))
    print(f"wrote {args.json}")
    return rows


if __name__ == "__main__":
    main()

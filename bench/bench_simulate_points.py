"""CPU seconds of the fast engine's simulation of several published points in one process,
to set beside the repeated predictions of ``bench_predict_point.py`` measured in the same
session (``docs/costmodel.md``, issue 12).

Sets the host-heap policy the ``fuseflow`` command uses, simulates the first point once
untimed (the engine's first simulation in a process loads its numba kernels), then per point
(``app/dataset/fusion``) compiles the application (``fuseflow.compile(model, inputs,
plan.schedule(fusion), plan=plan)``) and times ``--runs`` simulations
(``bench_sim_point.timed_simulation``: CPU seconds). Prints one JSON line per point.

    python bench/bench_simulate_points.py gcn/cora/partial graphsage/cora/full
"""

from __future__ import annotations

import json

from bench_common import built_points, points_parser
from bench_sim_point import timed_simulation, use_host_heap_policy


def main() -> None:
    parser = points_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    use_host_heap_policy()
    import torch

    import fuseflow

    warm = True
    for point, fusion, model, inputs, plan in built_points(args.points, args.preset):
        with torch.no_grad():
            compiled = fuseflow.compile(model, inputs, plan.schedule(fusion), plan=plan)
        if warm:
            timed_simulation(compiled, inputs)
            warm = False
        seconds = [timed_simulation(compiled, inputs)[1] for _ in range(args.runs)]
        print(json.dumps({"point": point, "simulate_cpu_seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()

"""CPU seconds of the first predictions of published points in a fresh process: what a
cost-model user pays before the steady state ``bench_predict_point.py`` times.

Per point (``app/dataset/fusion``) builds the model, then times with ``time.process_time``
the first ``--calls`` calls of ``CostModel.predict(*measured)`` on a new cost model: the first
measures the statistics and walks every kernel, the next walk again until
``kernel.COMPILE_AFTER``, then one compiles the kernels (and, with the compiled array
helpers of ``explore.native``, loads numba's compiled functions: once per process), and
the rest reuse the predictions. Prints one JSON line per point with the times in
milliseconds. Run each checkout in its own process (``PYTHONPATH=<other>/python``).

    python bench/bench_first_predictions.py gcn/cora/partial graphsage/cora/full
"""

from __future__ import annotations

import json
import time

from bench_common import built_points, points_parser


def main() -> None:
    parser = points_parser(__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    import fuseflow
    from fuseflow.explore import CostModel, Measured, MeasuredCache
    from fuseflow.sim.formats import FiberTree

    for point, fusion, model, inputs, plan in built_points(args.points, args.preset):
        program = fuseflow.Program(model, inputs, plan)
        measured = [Measured(FiberTree.from_torch(t.detach())) for t in inputs]
        cost_model = CostModel(program.compile(plan.schedule(fusion, False, {})),
                               cache=MeasuredCache())
        times = []
        for _ in range(args.calls):
            start = time.process_time()
            cost_model.predict(*measured)
            times.append((time.process_time() - start) * 1e3)
        print(json.dumps({"point": point, "calls_ms": times, "fuseflow": fuseflow.__file__}),
              flush=True)


if __name__ == "__main__":
    main()

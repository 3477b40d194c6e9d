"""CPU seconds of one repeated prediction of published points: the steady cost of
``CostModel.predict(*measured, reuse=False)``, to compare cost-model versions precisely.

A single prediction of a small graph takes under a millisecond, and on the shared 2-core
machine one such call varies by up to 2x; this times ``--batches`` batches of ``--calls``
predictions each (``time.process_time``) after the calls that compile the kernels, and prints
per point (``app/dataset/fusion``) the fastest batch's mean with the predicted tokens and
cycles, one JSON line each. Run it alternately for two checkouts
(``PYTHONPATH=<other>/python``) to compare them under the same load.

    python bench/bench_predict_point.py gcn/cora/partial graphsage/cora/unfused
"""

from __future__ import annotations

import argparse
import json
import time
import warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="+", metavar="APP/DATASET/FUSION")
    parser.add_argument("--preset", default="published")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import fuseflow
    from fuseflow.apps import get_application
    from fuseflow.explore import CostModel, Measured, MeasuredCache
    from fuseflow.explore.kernel import COMPILE_AFTER
    from fuseflow.sim.formats import FiberTree

    built = {}
    for point in args.points:
        app_name, dataset, fusion = point.split("/")
        if (app_name, dataset) not in built:
            app = get_application(app_name)
            model, inputs = app.build(args.preset, dataset, 0)
            plan = app.plan(model)
            built[(app_name, dataset)] = (fuseflow.Program(model, inputs, plan), plan, [
                Measured(FiberTree.from_torch(t.detach())) for t in inputs], MeasuredCache())
        program, plan, measured, cache = built[(app_name, dataset)]
        cost_model = CostModel(program.compile(plan.schedule(fusion, False, {})), cache=cache)
        for _ in range(COMPILE_AFTER + 1):
            cost_model.predict(*measured)
        best = float("inf")
        for _ in range(args.batches):
            start = time.process_time()
            for _ in range(args.calls):
                prediction = cost_model.predict(*measured, reuse=False)
            best = min(best, (time.process_time() - start) / args.calls)
        print(json.dumps({"point": point, "predict_seconds": best,
                          "fuseflow": fuseflow.__file__,
                          "tokens": sum(k.tokens for k in prediction.kernels),
                          "cycles": prediction.cycles}), flush=True)

if __name__ == "__main__":
    main()

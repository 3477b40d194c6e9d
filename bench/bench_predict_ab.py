"""Repeated predictions of two checkouts interleaved: CPU seconds of
``CostModel.predict(*measured, reuse=False)`` per published point, this checkout against
another (``--other``, its ``python`` folder put first on ``PYTHONPATH``).

``bench_predict_point.py`` runs one checkout per process; on the shared 2-core machine the
load changes between two such runs by more than the difference being measured. Here two
worker processes (one per checkout) build the points and compile their kernels once, then
take turns: per round and point, ``--calls`` predictions in one, then in the other. Each
worker's fastest and median batch per point are printed as one JSON line per point and
checkout, with the predicted tokens and cycles (to compare the two).

    python bench/bench_predict_ab.py --other /work/main gcn/cora/partial graphsage/cora/unfused
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time


def worker(points: list[str]) -> None:
    """Builds ``points``, then times ``n`` predictions of the point named on each stdin
    line (``point n``), answering ``seconds tokens cycles``."""
    from bench_common import compiled_points

    import fuseflow

    models = {point: (cost_model, measured)
              for point, cost_model, measured in compiled_points(points)}
    print("ready", fuseflow.__file__, flush=True)
    for line in sys.stdin:
        point, n = line.split()
        cost_model, measured = models[point]
        start = time.process_time()
        for _ in range(int(n)):
            prediction = cost_model.predict(*measured, reuse=False)
        seconds = (time.process_time() - start) / int(n)
        tokens = sum(k.tokens for k in prediction.kernels)
        print(seconds, repr(tokens), repr(prediction.cycles), flush=True)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="+", metavar="APP/DATASET/FUSION")
    parser.add_argument("--other", required=True, help="the other checkout's root folder")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    command = [sys.executable, os.path.abspath(__file__), "--worker", *args.points]
    checkouts = {"this": os.environ.get("PYTHONPATH", ""),
                 "other": os.path.join(os.path.abspath(args.other), "python")}
    workers = {}
    for name, path in checkouts.items():
        env = dict(os.environ, PYTHONPATH=path)
        workers[name] = subprocess.Popen(command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=env)
    package = {}
    for name, w in workers.items():
        ready, _, package[name] = w.stdout.readline().strip().partition(" ")
        if ready != "ready":
            raise SystemExit(f"the {name} checkout's worker failed to start")
    times = {(name, p): [] for name in workers for p in args.points}
    predicted = {}
    for _ in range(args.rounds):
        for point in args.points:
            for name, w in workers.items():
                w.stdin.write(f"{point} {args.calls}\n")
                w.stdin.flush()
                seconds, tokens, cycles = w.stdout.readline().split()
                times[(name, point)].append(float(seconds))
                predicted[(name, point)] = (float(tokens), float(cycles))
    for w in workers.values():
        w.stdin.close()
        w.wait()
    for point in args.points:
        for name in workers:
            t = times[(name, point)]
            tokens, cycles = predicted[(name, point)]
            print(json.dumps({"point": point, "checkout": name,
                              "fuseflow": package[name],
                              "fastest_seconds": min(t), "median_seconds": statistics.median(t),
                              "tokens": tokens, "cycles": cycles}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
    else:
        main()

"""Where an application's simulation holds its memory: the allocations alive at the traced peak.

Builds the application (as ``fuseflow run`` does), compiles a fusion configuration, simulates it
on the fast engine under ``--budget-gib`` with ``tracemalloc`` on (numpy reports its buffers to
it), snapshots the traced memory each time it grows 5% past its largest so far, and prints the
largest allocation sites of the last snapshot with their call paths. Slower than a plain run
(tracing); use a small preset or data set to find what grows with the problem.

    python bench/profile_memory.py --dataset collab --preset small --budget-gib 0.01
"""

from __future__ import annotations

import argparse
import functools
import threading
import tracemalloc
import warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="gcn")
    parser.add_argument("--preset", default="small")
    parser.add_argument("--dataset", default="collab")
    parser.add_argument("--fusion", default="unfused")
    parser.add_argument("--budget-gib", type=float, default=0.25)
    parser.add_argument("--dense-weights", action="store_true",
                        help="the dense variant (nothing declared sparse) instead of the published workload")
    parser.add_argument("--top", type=int, default=8, help="allocation sites printed")
    parser.add_argument("--frames", type=int, default=6, help="frames per call path")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import torch

    import fuseflow
    from fuseflow.apps import get_application
    from fuseflow.sim import engines

    app = get_application(args.app)
    model, inputs = app.build(args.preset, args.dataset, 0)
    with torch.no_grad():
        plan = app.plan(model)
        compiled = fuseflow.compile(model, inputs, plan.schedule(args.fusion, args.dense_weights),
                                    plan=plan)
    # CompiledModel.simulate does not take the engine's options: bind the budget on the
    # engine entry point it calls (as bench_chunked.py does)
    engines.run = functools.partial(engines.run, memory_budget=int(args.budget_gib * 2**30))
    tracemalloc.start(args.frames + 2)
    largest, snapshot, done = [0], [None], threading.Event()

    def sample():
        while not done.wait(0.3):
            current = tracemalloc.get_traced_memory()[0]
            if current > largest[0] * 1.05:
                largest[0], snapshot[0] = current, tracemalloc.take_snapshot()

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    compiled.simulate(*inputs, engine="fast")
    done.set()
    sampler.join()
    _, peak = tracemalloc.get_traced_memory()
    print(f"{args.app} {args.dataset} {args.preset} {args.fusion}, budget {args.budget_gib} GiB: "
          f"traced peak {peak / 2**20:.0f} MiB, last snapshot {largest[0] / 2**20:.0f} MiB")
    if snapshot[0] is None:
        return
    kept = snapshot[0].filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    for stat in kept.statistics("traceback")[:args.top]:
        print(f"{stat.size / 2**20:9.1f} MiB in {stat.count} blocks")
        for line in stat.traceback.format()[-2 * args.frames:]:
            print("    " + line)


if __name__ == "__main__":
    main()

"""CPU seconds of one published point's simulation on the fast engine, and a digest of what it
produced (cycles, outputs, every kernel's per-block statistics), to compare engine versions.

Sets the host-heap policy the ``fuseflow`` command uses, builds and compiles the application,
then times ``compiled.simulate(..., engine="fast")`` alone (``time.process_time``: CPU seconds,
less sensitive than wall time to the other jobs of a shared machine). Two engine versions give
the same digest exactly when their cycles, outputs and statistics agree bit for bit.

    python bench/bench_sim_point.py gcn dblp full                 # published preset
    python bench/bench_sim_point.py gpt3 b16 partial --preset small
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings

from bench_common import point_parser


def digest(result) -> str:
    """SHA-256 (16 hex digits) of the cycles, the outputs' bytes and every block's statistics."""
    import numpy as np

    h = hashlib.sha256(repr(result.cycles).encode())
    for out in result.outputs:
        h.update(np.ascontiguousarray(out.detach().numpy()).tobytes())
    for name, kernel in result.stats.items():
        h.update(name.encode())
        h.update(repr(kernel.cycles).encode())
        for block in sorted(kernel.blocks):
            h.update(json.dumps(kernel.blocks[block].to_dict(), sort_keys=True).encode())
    return h.hexdigest()[:16]


def use_host_heap_policy() -> bool:
    """Sets the host-heap policy the ``fuseflow`` command sets for its simulations (freed
    memory kept for reuse: :func:`fuseflow.sim.engines.host_heap.keep_freed_memory`); call it
    before the first simulation. Returns whether it is in force."""
    from fuseflow.sim.engines.host_heap import keep_freed_memory

    return keep_freed_memory()


def timed_simulation(compiled, inputs):
    """``(result, cpu_seconds)`` of ``compiled.simulate(*inputs, engine="fast")``: CPU seconds
    of this process (``time.process_time``) for the simulation alone."""
    start = time.process_time()
    result = compiled.simulate(*inputs, engine="fast")
    return result, time.process_time() - start


def main() -> None:
    parser = point_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    use_host_heap_policy()
    import torch

    import fuseflow
    from fuseflow.apps import get_application

    app = get_application(args.app)
    model, inputs = app.build(args.preset, args.dataset, 0)
    plan = app.plan(model)
    with torch.no_grad():
        compiled = fuseflow.compile(model, inputs, plan.schedule(args.fusion), plan=plan)
    result, cpu = timed_simulation(compiled, inputs)
    print(json.dumps({"point": f"{args.app} {args.dataset} {args.fusion} {args.preset}",
                      "cycles": int(result.cycles), "cpu_s": round(cpu, 2),
                      "digest": digest(result)}))


if __name__ == "__main__":
    main()

"""CPU seconds of the first windows of a chunked published point, and the time inside the
chunked engine's copies (``with_done``) and carried clocks (``raise_stamps``).

A full point such as GCN ogbl-collab full fusion takes tens of minutes; its first windows
(deterministic: the same windows for every engine version) take under a minute and show the
engine's bookkeeping as well. Sets the host-heap policy the ``fuseflow`` command uses, builds
and compiles the application, simulates on the fast engine and stops when the run asks for
window ``--windows + 1`` (counted over every chunked kernel of the model). Run it alternately
for two checkouts (``PYTHONPATH=<other>/python``) to compare them under the same load.

    python bench/bench_chunk_windows.py gcn collab full --windows 60
"""

from __future__ import annotations

import json
import time
import warnings

from bench_common import point_parser


class _Enough(Exception):
    """The windows asked for are through."""


def main() -> None:
    parser = point_parser(__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=60)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    from bench_sim_point import use_host_heap_policy

    use_host_heap_policy()
    import torch

    import fuseflow
    from fuseflow.apps import get_application
    from fuseflow.sim.engines import fast_chunked, fast_cut

    seen = {"windows": 0, "start": None}
    spent = {"with_done": 0.0, "raise_stamps": 0.0}
    next_window = fast_chunked._Windows.next

    def counted(self, *a, **k):
        if seen["start"] is None:
            seen["start"] = time.process_time()
        seen["windows"] += 1
        if seen["windows"] > args.windows:
            raise _Enough
        return next_window(self, *a, **k)

    def timed(module, name):
        original = getattr(module, name)

        def run(*a, **k):
            start = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                spent[name] += time.perf_counter() - start
        setattr(module, name, run)

    fast_chunked._Windows.next = counted
    timed(fast_cut, "with_done")
    timed(fast_chunked, "raise_stamps")
    app = get_application(args.app)
    model, inputs = app.build(args.preset, args.dataset, 0)
    plan = app.plan(model)
    with torch.no_grad():
        compiled = fuseflow.compile(model, inputs, plan.schedule(args.fusion), plan=plan)
    start = time.process_time()
    try:
        compiled.simulate(*inputs, engine="fast")
    except _Enough:
        pass
    end = time.process_time()
    print(json.dumps({"point": f"{args.app} {args.dataset} {args.fusion} {args.preset}",
                      "windows": min(seen["windows"], args.windows),
                      "cpu_s": round(end - start, 2),
                      "cpu_windows_s": round(end - (seen["start"] or end), 2),
                      "with_done_s": round(spent["with_done"], 2),
                      "raise_stamps_s": round(spent["raise_stamps"], 2),
                      "fuseflow": fuseflow.__file__}))


if __name__ == "__main__":
    main()

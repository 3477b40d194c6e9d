"""``fuseflow explore``: search an application's fusion space and simulate the best points.

    fuseflow explore gcn -o out/gcn                       # tiny preset, all cores
    fuseflow explore gpt3 --preset small -o out/gpt3 --top 3 --max-units 13
    fuseflow explore sae -o out/sae --scheduler tcp://127.0.0.1:8786
    fuseflow explore gcn -o out/gcn --lanes 1,2,4         # kernels may fork into lanes

The cost model scores every candidate kernel (fusion group x legal order x forked level and
lanes x tile shape, with each chain of products in either association); the search keeps the
Pareto front of predicted cycles, on-chip buffer bytes, bytes materialized and lanes; the
``--top`` fastest predicted solutions and the plan's configurations (unfused, partial, full)
are simulated as Dask tasks. Simulated points are cached under ``--cache`` (default
``OUTPUT/cache``) by content, so a killed run resumes and a rerun is instant. Writes
``OUTPUT/explore.json`` and ``OUTPUT/pareto.png`` and prints the ranked table (and each
kernel's order, lanes and tiles of the best point).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fuseflow.tools import console as tty


def register(commands) -> None:
    """Adds ``explore`` to the ``fuseflow`` subcommands."""
    from fuseflow.apps import APPLICATIONS, PRESETS

    parser = commands.add_parser(
        "explore", help="search an application's fusion space with the cost model and "
                        "simulate the best configurations (Dask)",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n" + __doc__.split("\n\n")[1])
    parser.add_argument("app", choices=list(APPLICATIONS), help="application")
    parser.add_argument("-o", "--output", type=Path, required=True,
                        help="folder for explore.json, pareto.png and the cache")
    parser.add_argument("--preset", default="tiny", choices=list(PRESETS))
    parser.add_argument("--dataset", default=None, help="data set (default: the preset's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=5,
                        help="fastest predicted solutions to simulate (default 5)")
    parser.add_argument("--orders", type=int, default=3,
                        help="legal dataflow orders evaluated per candidate group (default 3)")
    parser.add_argument("--lanes", default="1", metavar="N,N,...",
                        help="lane counts a kernel may fork its outermost forkable level "
                        "into, e.g. 1,2,4 (default 1: no lanes); lanes are an objective "
                        "(area) of the front")
    parser.add_argument("--blocks", default="0", metavar="B,BxC,...",
                        help="tile shapes for kernels with blocked (BSR) operands, e.g. "
                        "0,16 (0: scalar values; default 0)")
    parser.add_argument("--formats", default=None, metavar="NAME=FMT,...",
                        help="declared input formats besides the plan's, e.g. adjacency=bsr:2")
    parser.add_argument("--max-units", type=int, default=None,
                        help="largest candidate kernel, in units (default: no bound)")
    parser.add_argument("--no-reassociate", action="store_true",
                        help="do not consider reassociating chains of products")
    parser.add_argument("--predict-only", action="store_true",
                        help="predict the points with the cost model instead of simulating "
                        "them (models too large to simulate)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="folder of cached simulated points (default OUTPUT/cache)")
    parser.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                        help="an existing Dask scheduler (default: a local cluster)")
    parser.add_argument("--workers", type=int, default=None,
                        help="local worker processes (default: every core)")
    parser.set_defaults(func=cmd_explore)


def cmd_explore(args) -> int:
    """Runs ``fuseflow explore``; returns the exit status."""
    from fuseflow.apps import get_application
    from fuseflow.errors import ArgumentError
    from fuseflow.explore import explore
    from fuseflow.explore.axes import block_shapes, lane_factors
    from fuseflow.explore.explorer import kernel_lines

    try:
        lanes, blocks = lane_factors(args.lanes), block_shapes(args.blocks)
    except ArgumentError as err:
        raise SystemExit(f"fuseflow explore: {err}") from None
    app = get_application(args.app)
    model, inputs = app.build(args.preset, args.dataset, args.seed)
    plan = app.plan(model)
    formats = None
    if args.formats:
        formats = dict(plan.formats()) if hasattr(plan, "formats") else {}
        for item in args.formats.split(","):
            name, _, fmt = item.partition("=")
            if not fmt:
                raise SystemExit(f"fuseflow explore: --formats items are NAME=FORMAT, got "
                                 f"{item!r}")
            formats[name.strip()] = fmt.strip()
    out = tty.make_console()
    cache = args.cache or args.output / "cache"
    with tty.steps(args.top + len(lanes) - 1 + len(plan.fusion_groups)) as bar:
        bar.start(f"searching {app.name} ({args.preset})")

        def progress(name: str, cached: bool) -> None:
            bar.start(f"{name} {'(cached)' if cached else 'simulated'}")
            bar.done()

        found = explore(model, inputs, plan, top=args.top, orders=args.orders,
                        lanes=lanes, blocks=blocks, formats=formats,
                        max_units=args.max_units, reassociate_chains=not args.no_reassociate,
                        cache=cache, scheduler=args.scheduler, workers=args.workers,
                        progress=progress, simulate=not args.predict_only)
    doc = {"app": app.name, "preset": args.preset,
           "dataset": args.dataset or app.default_datasets[args.preset], **found.to_dict()}
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "explore.json").write_text(json.dumps(doc, indent=1))
    found.plot(args.output / "pareto.png")
    what = "points predicted by the cost model" if args.predict_only else "simulated points"
    out.print(tty.table(f"fuseflow explore {app.name} ({args.preset}): {what}, fastest first",
                        list(found.COLUMNS), found.rows(), right=found.NUMERIC))
    best = found.best
    c = found.counters
    out.print(f"best: {best['name']} with {len(best['fusion'])} kernels"
              if not isinstance(best["fusion"], str) else f"best: {best['name']}")
    if not isinstance(best["fusion"], str):
        for line in kernel_lines(best):
            out.print(f"  {line}", markup=False)   # brackets, not markup
    if best.get("reassociated"):
        out.print(f"  reassociated: {'; '.join(best['reassociated'])}", markup=False)
    vs = found.named_speedup()
    if vs is not None:
        out.print(f"vs the fastest named configuration ({vs[0]}): {vs[1]:.2f}x")
    for name, error in found.failures():
        out.print(f"failed: {name}: {error}", markup=False)
    out.print(f"points: {c['simulated']} simulated, {c['cached']} cached, "
              f"{c.get('predicted', 0)} predicted only, {c['failed']} failed; search "
              f"{c['search_seconds']:.1f} s, total {c['total_seconds']:.1f} s")
    if c.get("kernels"):
        out.print(f"kernels of the simulated points: {c['kernels_cached']} of {c['kernels']} "
                  "read from the kernel cache (simulated by another point)")
    out.print(f"wrote {args.output / 'explore.json'} and {args.output / 'pareto.png'}")
    sys.stdout.flush()
    return 0


"""``fuseflow reproduce``: Figures 12, 14, 15 and 17 of the published evaluation, regenerated.

    fuseflow reproduce fig12                            # tiny preset: every app in minutes
    fuseflow reproduce fig12 fig14 --preset small       # both figures from one sweep
    fuseflow reproduce fig12 --preset published --timeout 1800 --apps gcn,graphsage
    fuseflow reproduce fig12 fig14 --preset published --plan   # cost of every point, no sim
    fuseflow reproduce fig12 fig14 --preset published --simulate-up-to 3e10
    fuseflow reproduce fig15 fig17 --preset small       # parallel lanes, dataflow orders
    fuseflow reproduce fig16 --preset small             # BigBird: scalar against tile values

Writes ``points.json`` (every finished point, the resumable cache) and, per figure,
``<figure>.json``, ``<figure>.md`` (the table beside the published ratios) and
``<figure>.png`` into ``--out`` (default ``reports/reproduce-<preset>``). Run it again to
resume: finished points are kept. Exit status 1 when a point failed, timed out or differs from
PyTorch. Figures 15 and 17 are studies of their own (:mod:`fuseflow.reproduce.studies`).

``--plan`` compiles and predicts every point with the static cost model instead of simulating
(a table of predicted tokens, cycles and estimated seconds; ``plan.json``);
``--simulate-up-to TOKENS`` leaves the points predicted to simulate more tokens to the model,
marked as predictions in every output (:mod:`fuseflow.reproduce.plan`).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

DEFAULT_OUT = Path("reports")
"""Parent of the default output folder, ``reports/reproduce-<preset>`` (relative to the
folder the command runs in)."""


def register(commands) -> None:
    """Adds ``reproduce`` to the ``fuseflow`` subcommands."""
    from fuseflow.apps.base import PRESETS
    from fuseflow.reproduce.figures import FIGURES
    from fuseflow.reproduce.studies import STUDIES

    parser = commands.add_parser(
        "reproduce", help="regenerate Figures 12 and 14 (every application × data set × "
                          "fusion configuration), 15 (parallel lanes) and 17 (dataflow "
                          "orders) beside the published ratios",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n" + __doc__.split("\n\n")[1])
    parser.add_argument("figures", nargs="+", choices=FIGURES + tuple(STUDIES),
                        metavar="FIGURE", help=f"{' and/or '.join(FIGURES)} (they share one "
                        f"sweep), {', '.join(STUDIES)}")
    parser.add_argument("--preset", default="tiny", choices=PRESETS,
                        help="size of every workload (default: tiny)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output folder (default: reports/reproduce-<preset>)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes at once (default: the cores not busy, from "
                             "the load average; at least 1)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="kill a point after this many seconds (default: no limit)")
    parser.add_argument("--apps", default=None, metavar="A,B",
                        help="only these applications (default: sae, gcn, graphsage, gpt3)")
    parser.add_argument("--datasets", default=None, metavar="D,E",
                        help="only these data sets")
    parser.add_argument("--dense-weights", action="store_true",
                        help="the dense variants (nothing declared sparse) instead of the "
                             "published workloads")
    parser.add_argument("--retry-failed", action="store_true",
                        help="re-run cached points that failed, timed out or were killed")
    parser.add_argument("--engine", default="fast", choices=("fast", "reference"),
                        help="simulator engine (default: fast)")
    parser.add_argument("--seed", type=int, default=0, help="seed of data and weights")
    parser.add_argument("--plan", action="store_true",
                        help="simulate nothing: compile every point, predict it with the cost "
                             "model and print its predicted tokens, cycles and estimated "
                             "seconds (written to plan.json in --out)")
    parser.add_argument("--simulate-up-to", type=token_count, default=None, metavar="TOKENS",
                        help="simulate only the points the cost model predicts to simulate at "
                             "most TOKENS tokens (e.g. 3e10); the others are recorded as "
                             "cost-model predictions, marked in every figure (default: no "
                             "limit)")
    parser.add_argument("--no-kernel-cache", dest="kernel_cache", action="store_false",
                        help="simulate every kernel of every point; by default a kernel "
                             "simulated before on the same inputs (GPT-3's partial and full "
                             "fusion share their attention kernels) is read from --out's "
                             "kernels/ folder (same results)")
    parser.set_defaults(func=cmd_reproduce)


def token_count(text: str) -> float:
    """A ``--simulate-up-to`` value: a finite number of tokens, at least 0 (``3e10``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of tokens such as 3e10, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a finite number of tokens >= 0, got {text!r} (omit the option for no "
            f"limit)")
    return value


def _names(value: str | None) -> tuple[str, ...] | None:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def cmd_reproduce(args) -> int:
    """Runs the sweep and writes the figures; 1 if any point failed or mismatched."""
    from fuseflow.reproduce import figures
    from fuseflow.reproduce.figures import FIGURES
    from fuseflow.reproduce.studies import STUDIES, run_study
    from fuseflow.reproduce.sweep import (
        KERNEL_CACHE,
        Cache,
        SweepSettings,
        default_workers,
        run_sweep,
        sweep_points,
    )
    from fuseflow.tools import console as tty

    console = tty.make_console()
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.timeout is not None and args.timeout <= 0:
        raise ValueError(f"--timeout must be positive, got {args.timeout}")
    out = Path(args.out) if args.out else DEFAULT_OUT / f"reproduce-{args.preset}"
    studies = [f for f in args.figures if f in STUDIES]
    if (args.plan or args.simulate_up_to is not None) and studies:
        raise ValueError(f"--plan and --simulate-up-to apply to {' and '.join(FIGURES)}, not "
                         f"to {', '.join(studies)}")
    args.figures = [f for f in args.figures if f not in STUDIES]
    status = max([run_study(f, args.preset, out, args.engine, args.seed) for f in studies],
                 default=0)
    if not args.figures:
        return status
    points = sweep_points(args.preset, _names(args.apps), _names(args.datasets),
                          args.dense_weights)
    if not points:
        raise ValueError("no points: --apps and --datasets select nothing")
    settings = SweepSettings(engine=args.engine, seed=args.seed,
                             workers=args.workers or default_workers(), timeout=args.timeout,
                             retry_failed=args.retry_failed, simulate_up_to=args.simulate_up_to,
                             kernel_cache=out / KERNEL_CACHE if args.kernel_cache else None)
    if args.plan:
        return show_plan(points, out, settings, console)
    cache = Cache(out)
    cached = sum(cache.done(p, args.retry_failed, settings.simulate_up_to) for p in points)
    console.print(f"{len(points)} points ({cached} cached in {out / 'points.json'}), "
                  f"{settings.workers} worker{'s' * (settings.workers > 1)}", soft_wrap=True)
    predictions = _predictions(points, cache, out, settings, console)
    start = time.perf_counter()
    with tty.steps(len(points) - cached) as steps:
        steps.start(f"running {len(points) - cached} points")

        def report(result, done, total):
            cost = f"{result.wall_seconds:.0f} s" if result.wall_seconds is not None else ""
            if result.predicted:
                cost = (f"(cost model: {result.simulated_tokens:.3g} tokens to simulate > "
                        f"{result.threshold:.3g})")
            tty.make_console(sys.stderr).print(
                f"[{done}/{total}] {result.key}: {result.status} {cost}", markup=False,
                soft_wrap=True)
            steps.done()

        records = run_sweep(points, out, settings, report, predictions)
    wall = round(time.perf_counter() - start, 1)
    for figure in args.figures:
        doc = figures.document(figure, args.preset, records, wall if cached == 0 else None)
        paths = figures.write(doc, out)
        console.print(figures.markdown(doc), markup=False, soft_wrap=True)
        for what, path in paths.items():
            console.print(f"{what}: {path}", soft_wrap=True)
    bad = [r for r in records if r["status"] not in ("ok", "predicted")]
    return 1 if bad or len(records) < len(points) or status else 0


def _predictions(points, cache, out, settings, console) -> dict:
    """The predictions of the points still to run: from ``plan.json`` when it has them (then
    they run cheapest first), computed first when ``--simulate-up-to`` needs them."""
    from fuseflow.reproduce import plan

    pending = [p for p in points
               if not cache.done(p, settings.retry_failed, settings.simulate_up_to)]
    predictions = plan.load(out, settings.seed)
    missing = [p for p in pending if p.key not in predictions]
    if settings.simulate_up_to is not None and missing:
        console.print(f"predicting {len(missing)} points with the cost model (compiling, not "
                      f"simulating) for --simulate-up-to {settings.simulate_up_to:.3g}",
                      soft_wrap=True)
        new = plan.predict_points(missing, settings.seed, settings.workers)
        predictions.update(new)
        plan.save(out, settings.seed, new)
    known = [predictions[p.key] for p in pending if plan.work(predictions.get(p.key))]
    if known:
        limit = settings.simulate_up_to
        run = [r for r in known if limit is None or plan.work(r) <= limit]
        rate, _ = plan.rate_of(cache)
        seconds = [plan.estimated_seconds(r, rate) for r in run]
        console.print(
            f"cost model: {len(run)} of the {len(pending)} points to run estimated "
            f"{plan.duration(sum(seconds))} (≈ "
            f"{plan.duration(plan.makespan(seconds, settings.workers))} wall on "
            f"{settings.workers} worker{'s' * (settings.workers > 1)}), cheapest first"
            + (f"; {len(known) - len(run)} over --simulate-up-to {limit:.3g} tokens are "
               f"predicted only" if len(known) > len(run) else ""), soft_wrap=True)
    return predictions


def _plan_report(steps, total: int):
    """Reports each predicted application × data set on stderr (plans of the published
    preset take minutes) and advances ``steps``."""
    from fuseflow.tools import console as tty

    done = 0

    def report(records) -> None:
        nonlocal done
        done += len(records)
        first = records[0]
        failed = [r for r in records if r["status"] != "ok"]
        seconds = max((r.get("prepare_seconds") or 0) for r in records)
        tty.make_console(sys.stderr).print(
            f"[{done}/{total}] {first['app']}/{first['dataset']}: "
            f"{len(records) - len(failed)} predicted"
            + (f", {len(failed)} failed ({failed[0]['error']})" if failed
               else f" (built, imported and compiled in {seconds:.0f} s)"),
            markup=False, soft_wrap=True)
        steps.done(len(records))

    return report


def show_plan(points, out, settings, console) -> int:
    """``--plan``: predicts every point, prints the table and writes ``plan.json`` and
    ``plan.md``; 1 if a prediction failed."""
    from fuseflow.reproduce import plan
    from fuseflow.reproduce.sweep import Cache
    from fuseflow.tools import console as tty

    cache = Cache(out)
    console.print(f"planning {len(points)} points: compiling each and predicting it with the "
                  f"cost model (no simulation)", soft_wrap=True)
    with tty.steps(len(points)) as steps:
        steps.start(f"predicting {len(points)} points")
        predictions = plan.predict_points(points, settings.seed, settings.workers,
                                          _plan_report(steps, len(points)))
    table = plan.Table(points, predictions, cache, settings)
    plan.save(out, settings.seed, predictions, table.summary())
    text = table.markdown()
    (out / "plan.md").write_text(text)
    console.print(text, markup=False, soft_wrap=True)
    console.print(f"plan: {out / plan.PLAN_NAME}, {out / 'plan.md'}", soft_wrap=True)
    return 1 if any(r["status"] != "ok" for r in predictions.values()) else 0

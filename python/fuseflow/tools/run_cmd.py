"""``fuseflow run`` and ``fuseflow list``: the built-in kernels and the applications.

    fuseflow run spmm --sparsity 0.9 --scale 4          # one kernel: cycles + check vs PyTorch
    fuseflow run all --json out.json                    # every kernel
    fuseflow run gcn --dataset cora --preset published  # an application in every configuration
    fuseflow run gcn --dataset graph.mtx --fusion full  # on a graph file
    fuseflow run gcn --report reports/gcn               # JSON, plot and graph views in a folder
    fuseflow run sae --dense-weights                    # pruned weights streamed dense

Options that do not apply to the target (``--sparsity`` for an application, ``--fusion`` for a
kernel, ...) are errors, as are unknown engines, data sets and ``--arch`` or ``--formats``
settings: all are checked before anything is compiled.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from fuseflow.errors import check_choice
from fuseflow.tools import console as tty
from fuseflow.tools import results
from fuseflow.tools.execute import Settings, run_application, run_kernel
from fuseflow.tools.options import OptionError, parse_arch, parse_formats, valid_arch_keys

log = logging.getLogger(__name__)

KERNEL_ONLY = {"sparsity": 0.5, "scale": 1}
"""Options of kernels, with their defaults."""
APPLICATION_ONLY = {"dataset": None, "preset": "tiny", "fusion": "all", "dense_weights": False,
                    "all_layers": False}
"""Options of applications, with their defaults (``dataset`` None: the preset's)."""
TOLERANCES = {"kernel": (1e-5, 1e-5), "application": (1e-4, 1e-5)}
"""Default ``(rtol, atol)`` of the check against PyTorch."""
GRAPH_FILE_SUFFIXES = (".npz", ".mtx", ".txt", ".edges", ".el", ".tsv", ".csv")


def register(commands) -> None:
    """Adds ``run`` and ``list`` to the ``fuseflow`` subcommands."""
    from fuseflow.sim.engines import ENGINES

    run = commands.add_parser(
        "run", help="compile, simulate and check a kernel ('all' for every one) or an "
                    "application", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n" + __doc__.split("\n\n")[1])
    run.add_argument("target", help="kernel or application name (see 'fuseflow list') or 'all'")
    run.add_argument("--engine", default="fast", choices=list(ENGINES),
                     help="simulator engine (default: fast; reference is the cycle-by-cycle "
                          "specification, same results, ~100x slower)")
    run.add_argument("--arch", action="append", metavar="KEY=VALUE[,...]",
                     help=f"simulated architecture settings: {', '.join(valid_arch_keys())} "
                          "(see docs/timing.md)")
    run.add_argument("--formats", action="append", metavar="NAME=FORMAT[,...]",
                     help="declare inputs or parameters sparse: csr, csc, coo, dcsr, dense, "
                          "sparse_vector, bsr:<b>, bsr:<rows>x<cols>")
    run.add_argument("--seed", type=int, default=0, help="seed of inputs and weights")
    run.add_argument("--workers", type=int, default=1, metavar="N",
                     help="simulate up to N independent kernels at once, each in a forked "
                          "process (default: 1; same results, less wall time)")
    run.add_argument("--kernel-cache", metavar="DIR", default=None,
                     help="keep each simulated kernel's result in DIR and read a kernel "
                          "simulated before on the same inputs from it (same results; GPT-3's "
                          "partial and full fusion share their attention kernels)")
    run.add_argument("--rtol", type=float, default=None,
                     help="relative tolerance of the check (default: 1e-5 kernels, 1e-4 "
                          "applications)")
    run.add_argument("--atol", type=float, default=None, help="absolute tolerance (1e-5)")
    run.add_argument("--json", metavar="FILE", help="write the results document to FILE")
    run.add_argument("--report", metavar="DIR",
                     help="write results.json, cycles.png and graph views into DIR")
    kernel = run.add_argument_group("kernels")
    kernel.add_argument("--sparsity", type=float, default=None,
                        help="fraction of zeros in every sparse operand (default: 0.5)")
    kernel.add_argument("--scale", type=int, default=None,
                        help="multiply every operand dimension (default: 1)")
    app = run.add_argument_group("applications")
    app.add_argument("--dataset", default=None,
                     help="data set name, or a graph file (edge list, .mtx, .npz in the "
                          "PyG/OGB layouts) for a graph application (default: the preset's)")
    app.add_argument("--preset", default=None, help="size: tiny (default), small, published")
    app.add_argument("--fusion", default=None,
                     help="fusion configuration: unfused, partial, full or all (default)")
    app.add_argument("--dense-weights", action="store_true", default=None,
                     help="run the dense variant: declare nothing sparse (pruned weights and "
                          "the BigBird mask stream every zero), for comparison with the "
                          "published workload")
    app.add_argument("--all-layers", action="store_true", default=None,
                     help="simulate every GPT-3 decoder instead of extrapolating from models "
                          "of 1 and 2 decoders")
    run.set_defaults(func=cmd_run)
    lst = commands.add_parser("list", help="list the kernels and applications")
    lst.set_defaults(func=cmd_list)


def resolve(args) -> str:
    """Checks the options against the target and fills defaults; the target's kind."""
    from fuseflow.apps import APPLICATIONS
    from fuseflow.kernels import KERNELS

    if args.target in APPLICATIONS:
        kind, misplaced, defaults = "application", KERNEL_ONLY, APPLICATION_ONLY
    elif args.target == "all" or args.target in KERNELS:
        kind, misplaced, defaults = "kernel", APPLICATION_ONLY, KERNEL_ONLY
    else:
        raise OptionError(f"unknown kernel or application '{args.target}'; valid: all, "
                          f"{', '.join([*KERNELS, *APPLICATIONS])}")
    given = [name for name in misplaced if getattr(args, name) is not None]
    if given:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        raise OptionError(f"{flags} does not apply to {kind} '{args.target}' (it applies to "
                          f"{'kernels' if kind == 'application' else 'applications'})")
    for name, default in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    rtol, atol = TOLERANCES[kind]
    args.rtol = rtol if args.rtol is None else args.rtol
    args.atol = atol if args.atol is None else args.atol
    if kind == "kernel" and not 0.0 <= args.sparsity <= 1.0:
        raise OptionError(f"--sparsity must be in [0, 1], got {args.sparsity}")
    if args.workers < 1:
        raise OptionError(f"--workers must be >= 1, got {args.workers}")
    if kind == "kernel" and args.scale < 1:
        raise OptionError(f"--scale must be >= 1, got {args.scale}")
    if args.kernel_cache and Path(args.kernel_cache).exists() and \
            not Path(args.kernel_cache).is_dir():
        raise OptionError(f"--kernel-cache '{args.kernel_cache}' is a file; give a folder (made "
                          "if missing)")
    for flag, path in (("--json", args.json),):
        if path and not Path(path).resolve().parent.is_dir():
            raise OptionError(f"cannot write {flag} file '{path}': folder "
                              f"'{Path(path).resolve().parent}' does not exist")
    return kind


def cmd_run(args) -> int:
    """Runs the target; the exit code is 1 when any output differs from PyTorch or fails."""
    console = tty.make_console()
    with tty.steps(1) as importing:
        importing.start("importing torch and torch-mlir")
        kind = resolve(args)
        arch = parse_arch(args.arch)
        formats = parse_formats(args.formats)
        importing.done()
    settings = Settings(args.engine, arch, args.seed, args.rtol, args.atol, args.workers,
                        args.kernel_cache)
    if kind == "kernel":
        outcomes = _run_kernels(args, formats, settings, console)
    else:
        outcomes = _run_application(args, formats, settings, console)
    runs = [o.run for o in outcomes]
    if args.kernel_cache:
        kernels = [k for r in runs for k in r.kernels]
        read = sum(bool(k.get("cached")) for k in kernels)
        console.print(f"kernel cache {args.kernel_cache}: {read} of {len(kernels)} kernels read, "
                      f"{len(kernels) - read} simulated", soft_wrap=True)
    doc = results.document(runs, command=["fuseflow", *sys.argv[1:]], seed=args.seed,
                           engine=args.engine, arch=arch)
    if args.json:
        console.print(f"results: {results.write(doc, args.json)}", soft_wrap=True)
    if args.report:
        from fuseflow.tools.report import write_report

        written = write_report(doc, outcomes, args.report)
        labels = {"results": "results", "plot": "plot", "views": "graph view"}
        for what, paths in written.items():
            for path in paths:
                console.print(f"{labels[what]}: {path}", soft_wrap=True)
        console.print(f"report written to {Path(args.report).resolve()}/", soft_wrap=True)
    return 0 if all(r.status == "ok" for r in runs) else 1


def _run_kernels(args, formats, settings, console):
    from fuseflow.kernels import KERNELS, get_kernel

    names = list(KERNELS) if args.target == "all" else [args.target]
    for name in names:
        _check_format_names(formats, get_kernel(name).input_names(), f"kernel '{name}'")
    outcomes = []
    with tty.steps(3 * len(names)) as steps:
        for name in names:
            outcomes.append(run_kernel(name, args.sparsity, args.scale, formats, settings, steps))
    rows = []
    for o in outcomes:
        r = o.run
        per_kernel = ", ".join(f"{k['name']}={k['total_cycles']}" for k in r.kernels)
        rows.append([r.target, _num(r.cycles), per_kernel or "-", _verdict(r),
                     _err(r.max_abs_error), _secs(r.compile_seconds),
                     _secs(r.simulate_seconds)])
    console.print(tty.table(
        f"kernels at sparsity {args.sparsity}, scale {args.scale} ({args.engine} engine)",
        ["kernel", "cycles", "per kernel", "vs PyTorch", "max err", "compile s", "sim s"],
        rows, right={"cycles", "max err", "compile s", "sim s"}))
    _print_errors(outcomes, console)
    matching = sum(o.run.status == "ok" for o in outcomes)
    console.print(f"{matching} of {len(outcomes)} outputs match PyTorch")
    return outcomes


def _run_application(args, formats, settings, console):
    from fuseflow.apps import get_application
    from fuseflow.apps.base import FUSION_LEVELS, PRESETS

    app = get_application(args.target)
    preset = check_choice(args.preset, PRESETS, "preset")
    levels = FUSION_LEVELS if args.fusion == "all" else (
        check_choice(args.fusion, FUSION_LEVELS, "fusion configuration"),)
    from fuseflow.apps.layers import extrapolation as extrapolation_of

    extrapolation = extrapolation_of(app, preset, args.all_layers)
    runs_per_level = 1 if extrapolation is None else 2
    with tty.steps(1 + 3 * len(levels) * runs_per_level) as steps:
        steps.start(f"building {app.name}")
        model, inputs, dataset, provenance = _build(app, preset, args.dataset, args.seed,
                                                    1 if extrapolation else None)
        deeper = None
        if extrapolation is not None:
            deeper = _build(app, preset, args.dataset, args.seed, 2)[:2]
        names = [*app.inputs, *(n for n, _ in model.named_parameters())]
        _check_format_names(formats, names, f"application '{app.name}'")
        steps.done()
        outcomes = run_application(app, model, inputs, dataset, preset, levels, formats,
                                   settings, steps, dense_weights=args.dense_weights,
                                   provenance=provenance, extrapolation=extrapolation,
                                   deeper=deeper)
    console.print(f"{app.title} ({app.name}) on {dataset} ({provenance}), preset {preset}, "
                  f"{args.engine} engine: {_describe_inputs(app.inputs, inputs)}",
                  soft_wrap=True)
    console.print(_describe_workload(app.plan(model), args.dense_weights), soft_wrap=True)
    if extrapolation is not None:
        console.print(f"totals: {extrapolation.describe()} (kernels listed: the 2-"
                      f"{extrapolation.unit} model)", soft_wrap=True)
    speedups = results.speedups([o.run for o in outcomes]).get(app.name, {})
    rows = []
    for o in outcomes:
        r = o.run
        speedup = speedups.get(r.configuration)
        rows.append([r.configuration, str(len(r.kernels)) if r.kernels else "-", _num(r.cycles),
                     f"{speedup:.2f}x" if speedup else "-", _num(r.totals.get("ops")),
                     _verdict(r), _err(r.max_abs_error), _secs(r.compile_seconds),
                     _secs(r.simulate_seconds)])
    console.print(tty.table(
        "fusion configurations", ["fusion", "kernels", "cycles", "speedup", "ops",
                                  "vs PyTorch", "max err", "compile s", "sim s"],
        rows, right={"kernels", "cycles", "speedup", "ops", "max err", "compile s", "sim s"}))
    breakdown = []
    for o in outcomes:
        for k in o.run.kernels:
            share = k["total_cycles"] / o.run.cycles if o.run.cycles else 0.0
            breakdown.append([o.run.configuration, k["name"], _num(k["total_cycles"]),
                              f"{share:.0%}"])
    if breakdown:
        console.print(tty.table("cycles per kernel", ["fusion", "kernel", "cycles", "share"],
                                breakdown, right={"cycles", "share"}))
    _print_errors(outcomes, console)
    return outcomes


def _describe_workload(plan, dense_weights: bool) -> str:
    if dense_weights:
        return "workload: dense variant (--dense-weights): nothing declared sparse"
    declared = sorted(plan.sparse_formats.items())
    if not declared:
        return "workload: published (no pruned weights)"
    by_format: dict[str, list[str]] = {}
    for name, fmt in declared:
        by_format.setdefault(fmt, []).append(name)
    listed = "; ".join(f"{fmt}: {', '.join(names) if len(names) <= 4 else f'{len(names)} tensors'}"
                       for fmt, names in by_format.items())
    return f"workload: published, declared sparse ({listed})"


def _build(app, preset: str, dataset: str | None, seed: int, layers: int | None = None):
    """The model, its inputs, the data set's name and provenance; ``dataset`` may be a graph
    file; ``layers`` overrides a stacked model's depth."""
    if dataset is not None and _is_graph_file(dataset):
        from fuseflow.apps.graph_inputs import GRAPH_INPUTS
        from fuseflow.data.formats import load_graph

        if app.inputs != GRAPH_INPUTS:
            raise OptionError(f"--dataset {dataset}: application '{app.name}' does not run on "
                              "graph files (its inputs are not a graph)")
        graph = load_graph(dataset)
        model, inputs = app.build(preset, graph, seed)
        return (model, inputs, f"{graph.name} ({dataset}, {graph.num_nodes} nodes)",
                app.provenance(graph))
    model, inputs = app.build(preset, dataset, seed, layers)
    dataset = dataset or app.default_datasets[preset]
    return model, inputs, dataset, app.provenance(dataset)


def _is_graph_file(dataset: str) -> bool:
    path = Path(dataset)
    if path.suffix.lower() in GRAPH_FILE_SUFFIXES or path.exists() or "/" in dataset:
        if not path.is_file():
            raise OptionError(f"--dataset: no graph file '{dataset}'")
        return True
    return False


def _check_format_names(formats: dict[str, str], names: list[str], what: str) -> None:
    unknown = [n for n in formats if n not in names]
    if unknown:
        raise OptionError(f"--formats: {what} has no input or parameter "
                          f"{', '.join(repr(n) for n in unknown)}; valid names: {', '.join(names)}")


def _describe_inputs(names, inputs) -> str:
    import torch

    parts = []
    for name, t in zip(names, inputs):
        shape = "x".join(str(d) for d in t.shape)
        if t.layout == torch.strided:
            parts.append(f"{name} {shape}")
        else:
            nnz = t._nnz()
            parts.append(f"{name} {shape} ({nnz} non-zeros)")
    return ", ".join(parts)


def _print_errors(outcomes, console) -> None:
    for o in outcomes:
        if o.run.error:
            label = o.run.target if o.run.kind == "kernel" else o.run.configuration
            console.print(f"{label}: {o.run.error}", markup=False, soft_wrap=True)


def _verdict(run) -> str:
    return {"ok": "match", "mismatch": "MISMATCH", "error": "FAILED"}[run.status]


def _num(value) -> str:
    return "-" if value is None else f"{value:,}"


def _err(value) -> str:
    return "-" if value is None else f"{value:.1e}"


def _secs(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def cmd_list(args) -> int:
    """Prints the kernels and applications."""
    console = tty.make_console()
    from fuseflow.apps import APPLICATIONS
    from fuseflow.kernels import KERNELS

    console.print(tty.table("kernels", ["name", "what"],
                            [[k.name, k.description] for k in KERNELS.values()]))
    console.print(tty.table("applications", ["name", "what", "data sets"],
                            [[a.name, a.title, ", ".join(a.datasets)]
                             for a in APPLICATIONS.values()]))
    users: dict[tuple[str, str], list[str]] = {}
    for a in APPLICATIONS.values():
        for d in a.datasets:
            users.setdefault((d, a.provenance(d)), []).append(a.name)
    console.print(tty.table("data sets", ["name", "applications", "provenance"],
                            [[d, ", ".join(names), provenance]
                             for (d, provenance), names in users.items()]))
    return 0

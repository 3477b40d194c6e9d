"""``fuseflow view``: writes the dataflow-graph view of an application, a kernel or an MLIR file.

    fuseflow view gcn -o gcn.html                         # the tiny preset, unfused, simulated
    fuseflow view gpt3 --preset small --fusion partial -o gpt3.html --screenshot gpt3.png
    fuseflow view spmm --sparsity 0.9 -o spmm.dot         # Graphviz DOT
    fuseflow view model.mlir -o model.html                # linalg is compiled; sam is shown as is

Applications and kernels are simulated (fast engine) unless ``--no-simulate``; an MLIR file
has no inputs and is shown without statistics.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import replace
from pathlib import Path

log = logging.getLogger(__name__)

APP_OPTIONS = ("preset", "dataset", "fusion")
KERNEL_OPTIONS = ("sparsity", "scale")
APP_DEFAULTS = {"preset": "tiny", "fusion": "unfused"}
KERNEL_DEFAULTS = {"sparsity": 0.5, "scale": 1}


def add_parser(sub) -> None:
    """Registers the ``view`` subcommand on an argparse subparsers object."""
    view = sub.add_parser("view", help="write an interactive view of the dataflow graphs "
                                       "(HTML, or DOT)",
                          description=__doc__.split("\n\n")[0],
                          formatter_class=argparse.RawDescriptionHelpFormatter,
                          epilog=__doc__.split("\n\n", 1)[1])
    view.add_argument("target", help="application or kernel name (see 'fuseflow list'), or a "
                                     ".mlir file")
    view.add_argument("-o", "--output", help="file to write (default: <target>.html)")
    view.add_argument("--format", help="html or dot (default: from the output's suffix)")
    view.add_argument("--preset", help="application size: tiny (default), small, published")
    view.add_argument("--dataset", help="application data set (default: the preset's)")
    view.add_argument("--fusion", help="application fusion configuration (default: unfused)")
    view.add_argument("--sparsity", type=float, help="kernel: fraction of zeros (default 0.5)")
    view.add_argument("--scale", type=int, help="kernel: multiply every dimension (default 1)")
    view.add_argument("--seed", type=int, default=0)
    view.add_argument("--engine", default="fast", help="simulator engine: fast or reference")
    view.add_argument("--no-simulate", dest="simulate", action="store_false",
                      help="show the graphs without statistics")
    view.add_argument("--open", action="append", default=[], metavar="KERNEL",
                      help="a kernel shown open when the page loads ('all': every one); "
                           "repeatable")
    view.add_argument("--screenshot", metavar="PNG",
                      help="also save a picture of the page (needs Chromium)")
    view.set_defaults(func=run)


def run(args) -> int:
    """Runs ``fuseflow view``."""
    from fuseflow.viz import ViewFormat, save_view

    output = Path(args.output or f"{Path(args.target).stem}.html")
    if args.format is not None:
        ViewFormat.parse(args.format, "view format")
    save_view(_build(args), output, args.format)
    print(f"wrote {output}")
    if args.screenshot:
        if output.suffix in (".dot", ".gv") or args.format == "dot":
            raise ValueError("--screenshot needs the HTML view, not --format dot")
        from fuseflow.viz.browser import Browser, BrowserError

        try:
            with Browser() as browser:
                browser.open(output)
                browser.screenshot(args.screenshot)
        except BrowserError as err:
            raise ValueError(f"--screenshot: {err}") from None
        print(f"wrote {args.screenshot}")
    return 0


def _reject(args, names: tuple[str, ...], what: str) -> None:
    given = [f"--{n}" for n in names if getattr(args, n) is not None]
    if given:
        raise ValueError(f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} not "
                         f"apply to {what}")


def _build(args):
    import fuseflow
    from fuseflow.apps import APPLICATIONS
    from fuseflow.kernels import KERNELS
    from fuseflow.viz import view_of

    if args.engine not in ("fast", "reference"):
        raise ValueError(f"unknown engine {args.engine!r}; valid: fast, reference")
    target = args.target
    if target.endswith(".mlir"):
        _reject(args, APP_OPTIONS + KERNEL_OPTIONS, "an MLIR file")
        return _mlir_view(Path(target), args.open)
    if target in APPLICATIONS:
        _reject(args, KERNEL_OPTIONS, f"application {target!r}")
        preset = args.preset or APP_DEFAULTS["preset"]
        fusion = args.fusion or APP_DEFAULTS["fusion"]
        app = APPLICATIONS[target]
        model, inputs = app.build(preset, args.dataset, args.seed)
        plan = app.plan(model)
        compiled = fuseflow.compile(model, inputs, plan.schedule(fusion), plan=plan)
        title = f"{target} · {preset} · {fusion}"
    elif target in KERNELS:
        _reject(args, APP_OPTIONS, f"kernel {target!r}")
        kernel = KERNELS[target]
        sparsity = KERNEL_DEFAULTS["sparsity"] if args.sparsity is None else args.sparsity
        scale = args.scale or KERNEL_DEFAULTS["scale"]
        inputs = kernel.inputs(sparsity, seed=args.seed, scale=scale)
        compiled = fuseflow.compile(kernel.module(), inputs,
                                    fuseflow.Schedule(formats=dict(kernel.declared)))
        title = f"{target} · sparsity {sparsity:g}"
    else:
        raise ValueError(f"unknown target {target!r}; valid: a .mlir file, "
                         f"{', '.join(list(APPLICATIONS) + list(KERNELS))}")
    result = None
    if args.simulate:
        log.info("simulating %s with the %s engine", target, args.engine)
        result = compiled.simulate(*inputs, engine=args.engine)
    return view_of(compiled, result, title, tuple(args.open))


def _mlir_view(path: Path, open_names):
    import fuseflow
    from fuseflow import mlir
    from fuseflow.viz import build_view, resolve_open

    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    text = path.read_text()
    with mlir.new_context():
        try:
            module = mlir.Module.parse(text)
        except mlir.MLIRError as err:
            raise ValueError(f"{path}: {err}") from None
        if not any(op.name == "sam.graph" for op in _walk_ops(module)):
            module = fuseflow.compile(text).module
        view = build_view(module, title=path.name)
    return replace(view, open=resolve_open(view, tuple(open_names)))


def _walk_ops(module):
    for op in module.body.operations:
        for region in op.operation.regions:
            for block in region.blocks:
                yield from block.operations

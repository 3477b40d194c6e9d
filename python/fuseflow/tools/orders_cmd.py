"""``fuseflow orders``: every legal dataflow order of each kernel, sized, optionally simulated.

    fuseflow orders spmm                                  # a kernel's legal orders
    fuseflow orders gcn --fusion partial --simulate      # every kernel, with simulated cycles
    fuseflow orders gpt3 --fusion partial --kernel 1 --simulate --json orders.json

Each row is one order applied to that kernel alone (the others keep their schedules): the
``sam`` ops of its graph, the cost model's predicted tokens and cycles, and with
``--simulate`` the kernel's simulated cycles (and its slowdown over the kernel's fastest
order) and whether the model's output still matches PyTorch. ``*`` marks the order the
compiler chose. API: :func:`fuseflow.orders.kernel_orders`.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

APP_OPTIONS = {"preset": "tiny", "dataset": None, "fusion": "unfused", "dense_weights": False}
KERNEL_OPTIONS = {"sparsity": 0.5, "scale": 1}


def register(commands) -> None:
    """Adds ``orders`` to the ``fuseflow`` subcommands."""
    cmd = add_target_command(commands, "orders", __doc__, help="list (and simulate) every "
                             "legal dataflow order of each kernel")
    cmd.add_argument("--kernel", metavar="K",
                     help="only this kernel: its index, name, or a part of one name")
    cmd.add_argument("--simulate", action="store_true",
                     help="simulate every order (and check the output against PyTorch)")
    cmd.add_argument("--limit", type=int, default=None, metavar="N",
                     help="at most N orders per kernel, best first (default: all)")
    cmd.add_argument("--json", metavar="FILE", help="also write the rows to FILE")
    add_target_options(cmd)
    cmd.set_defaults(func=run)


def add_target_command(commands, name: str, doc: str, help: str):
    """A ``fuseflow`` subcommand on one kernel or application: its description and examples
    from the module docstring ``doc`` (first paragraph, second), the ``target`` argument and
    ``--engine``; the caller adds its own options, then :func:`add_target_options`."""
    from fuseflow.sim.engines import ENGINES

    cmd = commands.add_parser(name, help=help, description=doc.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="examples:\n" + doc.split("\n\n")[1])
    cmd.add_argument("target", help="kernel or application name (see 'fuseflow list')")
    cmd.add_argument("--engine", default="fast", choices=list(ENGINES),
                     help="simulator engine (default: fast)")
    return cmd


def add_target_options(cmd) -> None:
    """The options that build a kernel's or an application's inputs and schedule."""
    cmd.add_argument("--seed", type=int, default=0, help="seed of inputs and weights")
    cmd.add_argument("--sparsity", type=float, default=None,
                     help="kernels: fraction of zeros in every sparse operand (default 0.5)")
    cmd.add_argument("--scale", type=int, default=None,
                     help="kernels: multiply every operand dimension (default 1)")
    cmd.add_argument("--preset", default=None, help="applications: tiny (default), small, "
                                                    "published")
    cmd.add_argument("--dataset", default=None, help="applications: data set (default: the "
                                                     "preset's)")
    cmd.add_argument("--fusion", default=None,
                     help="applications: unfused (default), partial or full")
    cmd.add_argument("--dense-weights", action="store_const", const=True, default=None,
                     help="applications: the dense variant (nothing declared sparse) instead of "
                          "the published workload")


def build_target(args):
    """``(compiled, inputs, expected, title)`` of ``args.target`` (a kernel or an
    application, with the options :func:`add_target_options` adds)."""
    import torch

    import fuseflow
    from fuseflow.apps import APPLICATIONS
    from fuseflow.kernels import KERNELS

    if args.target in KERNELS:
        _reject(args, APP_OPTIONS, f"kernel {args.target!r}")
        kernel = KERNELS[args.target]
        sparsity = KERNEL_OPTIONS["sparsity"] if args.sparsity is None else args.sparsity
        inputs = kernel.inputs(sparsity, seed=args.seed,
                               scale=args.scale or KERNEL_OPTIONS["scale"])
        compiled = fuseflow.compile(kernel.module(), inputs,
                                    fuseflow.Schedule(formats=dict(kernel.declared)))
        model, title = kernel.module(), f"{args.target} · sparsity {sparsity:g}"
    elif args.target in APPLICATIONS:
        _reject(args, KERNEL_OPTIONS, f"application {args.target!r}")
        app = APPLICATIONS[args.target]
        preset = args.preset or APP_OPTIONS["preset"]
        fusion = args.fusion or APP_OPTIONS["fusion"]
        model, inputs = app.build(preset, args.dataset, args.seed)
        plan = app.plan(model)
        compiled = fuseflow.compile(model, inputs, plan.schedule(fusion, bool(args.dense_weights)),
                                    plan=plan)
        title = f"{args.target} · {preset} · {fusion}" + (" · dense weights"
                                                          if args.dense_weights else "")
    else:
        raise ValueError(f"unknown target {args.target!r}; valid: "
                         f"{', '.join(list(KERNELS) + list(APPLICATIONS))}")
    with torch.no_grad():
        expected = model(*inputs)
    return compiled, inputs, expected, title


def _reject(args, options: dict, what: str) -> None:
    given = [f"--{n.replace('_', '-')}" for n in options if getattr(args, n) is not None]
    if given:
        raise ValueError(f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} not "
                         f"apply to {what}")


def run(args) -> int:
    """Runs ``fuseflow orders``."""
    from fuseflow.orders import kernel_orders, select_kernel
    from fuseflow.tools import console

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be at least 1, got {args.limit}")
    compiled, inputs, expected, title = build_target(args)
    infos = compiled.kernels
    if args.kernel is not None:
        infos = [select_kernel(infos, args.kernel)]
    total = sum(len(k.legal_orders(args.limit)) for k in infos)
    rows = []
    with console.steps(total) as steps:
        for info in infos:
            def progress(text):
                steps.start(text)
            found = kernel_orders(compiled, inputs, info.index, simulate=args.simulate,
                                  engine=args.engine, limit=args.limit, expected=expected,
                                  progress=progress)
            steps.done(len(found))
            rows += found
    out = console.make_console()
    for info in infos:
        out.print(_table(title, info, [r for r in rows if r.index == info.index],
                         args.simulate))
    if args.json:
        Path(args.json).write_text(json.dumps({"target": args.target, "title": title,
                                               "orders": [r.to_dict() for r in rows]},
                                              indent=1) + "\n")
        print(f"wrote {args.json}")
    return 1 if any(r.matches is False for r in rows) else 0


def _table(title: str, info, rows: list, simulated: bool):
    from fuseflow.tools import console

    columns = ["#", "order", "sam ops", "tokens (pred.)", "cycles (pred.)"]
    if simulated:
        columns += ["cycles", "vs best", "matches"]
    best = min((r.cycles for r in rows if r.cycles), default=None)
    body = []
    for r in rows:
        line = [f"{r.rank}{'*' if r.scheduled else ''}", ",".join(r.order), str(r.ops),
                _number(r.tokens), _number(r.predicted_cycles)]
        if simulated:
            ratio = f"{r.cycles / best:.2f}x" if best and r.cycles else "-"
            line += [str(r.cycles), ratio, "-" if r.matches is None else
                     ("yes" if r.matches else "NO")]
        body.append(line)
    return console.table(f"{title} · kernel {info.index} {info.name}: {len(rows)} legal "
                         f"order{'s' if len(rows) != 1 else ''} ({info.einsum})", columns,
                         body, right={"sam ops", "tokens (pred.)", "cycles (pred.)", "cycles",
                                      "vs best"})


def _number(value) -> str:
    return "-" if value is None else f"{value:,.0f}"

"""``fuseflow sweep``: one kernel's schedule axes simulated — dataflow order × parallel level ×
lanes — as a table, JSON and a PNG.

    fuseflow sweep spmm --factors 1,2,4,8                     # every order, outermost level
    fuseflow sweep gcn --fusion partial --kernel 1 --levels all --png sweep.png
    fuseflow sweep gpt3 --fusion partial --kernel 1 --orders 2 --json sweep.json

Each point reschedules the kernel alone, simulates the model, checks it against PyTorch and
reports the kernel's cycles and speedup over the compiled schedule (``--levels``:
``outermost`` (default), ``all``, or loop names; ``--blocks``: tile shapes besides scalar
values, for kernels with BSR operands of that block). API: :func:`fuseflow.sweep.sweep`.
"""

from __future__ import annotations

import json
from pathlib import Path


def register(commands) -> None:
    """Adds ``sweep`` to the ``fuseflow`` subcommands."""
    from fuseflow.tools.orders_cmd import add_target_command, add_target_options

    cmd = add_target_command(commands, "sweep", __doc__, help="simulate one kernel over its "
                             "orders, parallel levels and lane counts")
    cmd.add_argument("--kernel", default="0", metavar="K",
                     help="the kernel swept: its index (default 0), name or a part of one")
    cmd.add_argument("--orders", type=int, default=None, metavar="N",
                     help="the N best legal orders (default: all)")
    cmd.add_argument("--levels", default="outermost",
                     help="levels to fork: outermost (default), all, or loop names d0,d1")
    cmd.add_argument("--factors", default="1,2,4", metavar="P,Q",
                     help="lane counts (default 1,2,4; 1: no lanes)")
    cmd.add_argument("--blocks", default="", metavar="B,BxC",
                     help="block axis: tile shapes to schedule besides scalar values, like "
                          "4,8x8 (kernels with BSR operands of that block; default: none)")
    cmd.add_argument("--json", metavar="FILE", help="write the points to FILE")
    cmd.add_argument("--png", metavar="FILE", help="plot cycles against lanes to FILE")
    add_target_options(cmd)
    cmd.set_defaults(func=run)


def _factors(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise ValueError(f"--factors must be lane counts >= 1 like 1,2,4, got {text!r}")
    return values


def _blocks(text: str) -> tuple[tuple[int, ...], ...]:
    """``'4,8x8'`` -> ``((), (4, 4), (8, 8))``: scalar values, then each tile shape."""
    shapes = [()]
    for item in (t.strip() for t in text.split(",") if t.strip()):
        try:
            dims = tuple(int(v) for v in item.lower().split("x"))
        except ValueError:
            dims = ()
        if len(dims) not in (1, 2) or min(dims) < 1:
            raise ValueError(f"--blocks must be tile shapes like 4,8x8, got {text!r}")
        shapes.append(dims * 2 if len(dims) == 1 else dims)
    return tuple(shapes)


def run(args) -> int:
    """Runs ``fuseflow sweep``."""
    from fuseflow.orders import select_kernel
    from fuseflow.sweep import schedules, sweep
    from fuseflow.tools import console
    from fuseflow.tools.orders_cmd import build_target

    factors = _factors(args.factors)
    blocks = _blocks(args.blocks)
    if args.orders is not None and args.orders < 1:
        raise ValueError(f"--orders must be at least 1, got {args.orders}")
    compiled, inputs, expected, title = build_target(args)
    info = select_kernel(compiled.kernels, args.kernel)
    total = len(schedules(info, args.orders, args.levels, factors)) * len(blocks)
    with console.steps(total) as steps:
        def progress(text):
            steps.start(text)             # the bar counts points started
            steps.done()

        points = sweep(compiled, inputs, info.index, orders=args.orders, levels=args.levels,
                       factors=factors, engine=args.engine, expected=expected,
                       blocks=blocks, progress=progress)
    best = min(p.cycles for p in points)
    rows = [[str(rank), ",".join(p.order), " ".join(f"{v}:{f}" for v, f in p.parallel) or "-",
             "x".join(map(str, p.block)) or "-", str(p.lanes), f"{p.cycles:,}",
             f"{p.cycles / best:.2f}x", f"{p.speedup:.2f}x",
             "-" if p.tokens is None else f"{p.tokens:,.0f}",
             "yes" if p.matches else "NO"]
            for rank, p in enumerate(sorted(points, key=lambda p: p.cycles))]
    console.make_console().print(console.table(
        f"{title} · kernel {info.index} {info.name}: {len(points)} schedules", [
            "#", "order", "parallel", "tiles", "lanes", "cycles", "vs best", "speedup",
            "tokens (pred.)", "matches"], rows, right={"lanes", "cycles", "vs best", "speedup",
                                     "tokens (pred.)"}))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "target": args.target, "title": title, "kernel": info.name,
            "points": [p.to_dict() for p in points]}, indent=1) + "\n")
        print(f"wrote {args.json}")
    if args.png:
        plot(points, f"{title} · {info.name}", args.png)
        print(f"wrote {args.png}")
    return 1 if any(p.matches is False for p in points) else 0


def plot(points: list, title: str, path) -> Path:
    """Kernel cycles against lanes, one line per (order, level)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    single = {p.order: p.cycles for p in points if not p.parallel}
    lines: dict = {}
    for p in points:
        if p.parallel:
            lines.setdefault((p.order, p.parallel[0][0]), []).append((p.lanes, p.cycles))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for (order, var), pts in lines.items():
        pts = ([(1, single[order])] if order in single else []) + sorted(pts)
        ax.plot([x for x, _ in pts], [y for _, y in pts], "o-",
                label=f"{','.join(order)} · {var}")
    for order, cycles in single.items():
        if not any(o == order for o, _ in lines):
            ax.plot([1], [cycles], "s", label=f"{','.join(order)}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("lanes")
    ax.set_ylabel("kernel cycles")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

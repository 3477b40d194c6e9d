"""``fuseflow plot results.json``: speedups and per-kernel cycle breakdowns as a PNG.

The figure has one row per target of the results document: on the left the speedup of each
fusion configuration over ``unfused`` (applications with that baseline), on the right each
configuration's cycles stacked by kernel, so one sees which kernels the cycles go to.
"""

from __future__ import annotations

from pathlib import Path

from fuseflow.tools import results


def plot_document(doc: dict, path) -> Path:
    """Draws ``doc`` (a results document) to the image ``path``; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [r for r in doc["runs"] if r["cycles"] is not None]
    if not runs:
        raise ValueError("no successful run to plot: every run in the results failed")
    targets = list(dict.fromkeys(r["target"] for r in runs))
    with_speedups = [t for t in targets if len(doc["speedups"].get(t, {})) > 1]
    kernel_targets = [t for t in targets if t not in with_speedups]
    rows = len(with_speedups) + (1 if kernel_targets else 0)
    figure, axes = plt.subplots(rows, 2, figsize=(13, 4.2 * rows), squeeze=False,
                                gridspec_kw={"width_ratios": [1, 2]})
    for row, target in enumerate(with_speedups):
        target_runs = [r for r in runs if r["target"] == target]
        _speedup_bars(axes[row][0], target, doc["speedups"][target])
        _kernel_stacks(axes[row][1], f"{target}: cycles per kernel",
                       [(r["configuration"], r["kernels"]) for r in target_runs])
    if kernel_targets:
        ax_total, ax_stack = axes[-1]
        kernel_runs = [r for r in runs if r["target"] in kernel_targets]
        _total_bars(ax_total, kernel_runs)
        _kernel_stacks(ax_stack, "cycles per kernel",
                       [(_label(r), r["kernels"]) for r in kernel_runs])
    title = f"FuseFlow {doc['fuseflow_version']} · engine {doc['engine']} · seed {doc['seed']}"
    figure.suptitle(title)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _label(run: dict) -> str:
    return run["target"] if run["kind"] == "kernel" else f"{run['target']} {run['configuration']}"


def _speedup_bars(ax, target: str, speedups: dict[str, float]) -> None:
    names, values = list(speedups), list(speedups.values())
    bars = ax.bar(names, values, color=["#8c8c8c" if v == 1 else "#3b75af" for v in values])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.bar_label(bars, labels=[f"{v:.2f}×" for v in values])
    ax.set_title(f"{target}: speedup over {results.BASELINE}")
    ax.set_ylabel("speedup (×)")


def _total_bars(ax, runs: list[dict]) -> None:
    ax.barh([_label(r) for r in runs], [r["cycles"] for r in runs], color="#3b75af")
    ax.invert_yaxis()
    ax.set_title("total cycles")
    ax.set_xlabel("cycles")


def _kernel_stacks(ax, title: str, bars: list[tuple[str, list[dict]]]) -> None:
    """One horizontal bar per configuration, a segment per kernel in execution order."""
    cmap = _colours(max(len(kernels) for _, kernels in bars))
    for y, (_, kernels) in enumerate(bars):
        left = 0
        for index, kernel in enumerate(kernels):
            cycles = kernel["total_cycles"]
            ax.barh(y, cycles, left=left, color=cmap(index), edgecolor="white", linewidth=0.5)
            if len(kernels) > 1 and cycles > 0.15 * _total(bars):
                ax.text(left + cycles / 2, y, _short(kernel["name"]), ha="center",
                        va="center", fontsize=7, color="white", clip_on=True)
            left += cycles
    ax.set_yticks(range(len(bars)), [label for label, _ in bars])
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel("cycles")


def _total(bars) -> int:
    return max(sum(k["total_cycles"] for k in kernels) for _, kernels in bars) or 1


def _short(name: str, limit: int = 24) -> str:
    """A kernel's name without its index prefix (``g1:``), cut to ``limit`` characters."""
    name = name.split(":", 1)[-1]
    return name if len(name) <= limit else name[:limit - 1] + "…"


def _colours(count: int):
    import matplotlib

    cmap = matplotlib.colormaps["tab20" if count > 10 else "tab10"]
    return lambda index: cmap(index % cmap.N)


def register(commands) -> None:
    """Adds ``fuseflow plot`` to the ``fuseflow`` subcommands."""
    plot = commands.add_parser("plot", help="draw speedups and per-kernel cycles of a results "
                                            "JSON file (from 'fuseflow run --json')")
    plot.add_argument("results", help="results JSON file")
    plot.add_argument("-o", "--output", default=None,
                      help="image to write (default: the results file with .png)")
    plot.set_defaults(func=cmd_plot)


def cmd_plot(args) -> int:
    """Draws the results file; prints where the image is."""
    from fuseflow.tools.console import make_console

    doc = results.load(args.results)
    output = Path(args.output) if args.output else Path(args.results).with_suffix(".png")
    if not output.parent.is_dir():
        raise ValueError(f"cannot write '{output}': folder '{output.parent}' does not exist")
    make_console().print(f"plot: {plot_document(doc, output)}", soft_wrap=True)
    return 0

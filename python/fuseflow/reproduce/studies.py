"""The figures measured by a study of their own rather than the application sweep: Figure 15
(multi-head attention in parallel lanes, :mod:`~fuseflow.reproduce.fig15`), Figure 16
(BigBird attention, scalar against blocked values, :mod:`~fuseflow.reproduce.fig16`) and
Figure 17 (the dataflow orders of nested SpMMs, :mod:`~fuseflow.reproduce.fig17`).

    fuseflow reproduce fig15 --preset small      # fig15.json, fig15.md, fig15.png
    fuseflow reproduce fig16 --preset small      # fig16.json, fig16.md, fig16.png
    fuseflow reproduce fig17                      # fig17.json, fig17.md, fig17.png

Each module has ``measure(preset, engine, seed, progress) -> document``,
``markdown(document)``, ``plot(document, path)`` and ``failed(document)``;
:func:`write_study` writes the three files. Figures 15 and 16 measure one attention block per
preset (:class:`AttentionSize`) and share its inputs, description and document
(:func:`study_document`).
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

STUDIES = {"fig15": "fuseflow.reproduce.fig15", "fig16": "fuseflow.reproduce.fig16",
           "fig17": "fuseflow.reproduce.fig17"}
"""Figure -> the module that measures it."""


@dataclass(frozen=True)
class AttentionSize:
    """A multi-head attention block: ``heads`` heads of ``seq`` tokens, ``width`` wide. Figures
    15 and 16 extend it with what they sweep and map each preset of
    :data:`fuseflow.apps.base.PRESETS` to one (their ``PRESETS``)."""

    heads: int
    seq: int
    width: int

    def qkv(self, draw: Callable[..., Any], seed: int) -> tuple[Any, ...]:
        """Q, K and V, ``[heads, seq, width]`` each, drawn by ``draw`` (``torch.rand``,
        ``torch.randn``) from one generator seeded with ``seed``."""
        import torch

        generator = torch.Generator().manual_seed(seed)
        return tuple(draw(self.heads, self.seq, self.width, generator=generator)
                     for _ in range(3))

    def workload(self, **more: Any) -> dict[str, Any]:
        """The document's ``workload``: the block's size, then ``more``."""
        return {"heads": self.heads, "seq": self.seq, "width": self.width, **more}


def attention_shape(workload: dict[str, Any]) -> str:
    """A workload's block for the markdown: ``8 heads × 16 tokens × width 8``."""
    return f"{workload['heads']} heads × {workload['seq']} tokens × width {workload['width']}"


def study_document(figure: str, preset: str, engine: str, workload: dict[str, Any],
                   points: list[dict[str, Any]], start: float) -> dict[str, Any]:
    """A preset study's document: what was measured, its points and the seconds since
    ``start`` (a ``time.perf_counter()``)."""
    return {"figure": figure, "preset": preset, "engine": engine, "workload": workload,
            "points": points, "wall_seconds": round(time.perf_counter() - start, 1)}


def new_figure(*args: Any, **kwargs: Any):
    """``matplotlib.pyplot.subplots(*args, **kwargs)`` drawn off screen (the Agg backend):
    ``(figure, axes)``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def write_study(figure: str, module, doc: dict, folder) -> dict[str, Path]:
    """Writes ``<figure>.json``, ``.md`` (``module.markdown``) and ``.png`` (``module.plot``)
    into ``folder``; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / f"{figure}.json", "markdown": folder / f"{figure}.md",
             "plot": folder / f"{figure}.png"}
    paths["json"].write_text(json.dumps(doc, indent=1) + "\n")
    paths["markdown"].write_text(module.markdown(doc))
    module.plot(doc, paths["plot"])
    return paths


def save_figure(fig, path) -> Path:
    """Lays out and saves a matplotlib figure as ``path`` (110 dpi), then closes it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run_study(figure: str, preset: str, out: Path, engine: str = "fast", seed: int = 0) -> int:
    """Measures ``figure``, writes its JSON, markdown and PNG into ``out`` and prints the
    table; 1 if a point differs from PyTorch or misses its target."""
    from fuseflow.tools import console as tty

    module = importlib.import_module(STUDIES[figure])
    with tty.steps(1) as steps:
        doc = module.measure(preset, engine=engine, seed=seed,
                             progress=lambda text: steps.start(f"{figure}: {text}"))
        steps.done()
    paths = write_study(figure, module, doc, out)
    out_console = tty.make_console()
    out_console.print(module.markdown(doc), markup=False, soft_wrap=True)
    for what, path in paths.items():
        out_console.print(f"{what}: {path}", soft_wrap=True)
    bad = module.failed(doc)
    if bad:
        tty.make_console(sys.stderr).print(f"{figure}: {', '.join(bad)} differ from PyTorch or "
                                           "miss their target", markup=False, soft_wrap=True)
    return 1 if bad else 0

"""The view API: a compiled model's view, saved as HTML or DOT, or shown in Jupyter."""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path

from fuseflow.passes.base import ChoiceEnum
from fuseflow.viz.dot import render_dot
from fuseflow.viz.extract import ViewError, build_view
from fuseflow.viz.model import View
from fuseflow.viz.page import render_html


class ViewFormat(ChoiceEnum):
    """Output formats of the view."""

    HTML = "html"
    DOT = "dot"


def view_of(compiled, result=None, title: str = "model", open: tuple[str, ...] = ()) -> View:
    """The view of a :class:`fuseflow.CompiledModel`, with the statistics of ``result`` (a
    :class:`fuseflow.SimulationResult` of it) when given; ``open`` names the groups (kernel
    names, ``'all'`` for every one) shown open when the page loads."""
    view = build_view(compiled.module, result.run if result is not None else None,
                      compiled.input_names, title)
    return replace(view, open=resolve_open(view, open))


def resolve_open(view: View, names) -> tuple[str, ...]:
    """The ids of the groups ``names`` designates ('all': every group); the error lists the
    valid names."""
    groups = [n.id for n in view.root.walk() if n.children and n is not view.root]
    if isinstance(names, str):
        names = (names,)
    if "all" in names:
        return tuple(groups)
    unknown = [n for n in names if n not in groups]
    if unknown:
        raise ViewError(f"no kernel named {', '.join(map(repr, unknown))}; valid: all, "
                        f"{', '.join(groups)}")
    return tuple(names)


def save_view(view: View, path, format: str | None = None) -> Path:
    """Writes ``view`` to ``path``: HTML, or DOT when ``format='dot'`` or the path ends in
    ``.dot``/``.gv``. Returns the path."""
    path = Path(path)
    if format is None:
        format = "dot" if path.suffix in (".dot", ".gv") else "html"
    kind = ViewFormat.parse(format, "view format")
    path.write_text(render_dot(view) if kind is ViewFormat.DOT else render_html(view),
                    encoding="utf-8")
    return path


class InlineView:
    """A view shown inline by Jupyter (the page in an iframe)."""

    def __init__(self, view: View, height: int = 640):
        self.view = view
        self.height = height

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(render_html(self.view))}" '
                f'style="width:100%;height:{self.height}px;border:1px solid #ccc"></iframe>')

"""Renders a :class:`~fuseflow.viz.model.View` as one self-contained HTML file.

The page needs no network: its script and style (``assets/``, written for FuseFlow) and the
view's data (JSON) are inlined. The script lays out only the open groups, so a closed kernel
costs one box however many blocks it holds.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources

from fuseflow.viz.model import View


def _asset(name: str) -> str:
    return resources.files("fuseflow.viz").joinpath("assets", name).read_text(encoding="utf-8")


def render_html(view: View) -> str:
    """The HTML page of ``view``."""
    from fuseflow import __version__

    # Inside <script>, '<' is escaped so no string in the data can close the element.
    data = json.dumps(view.to_json(), separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c")
    values = {"CSS": _asset("view.css"), "JS": _asset("view.js"), "TITLE": html.escape(view.title),
              "VERSION": html.escape(__version__), "DATA": data}
    # One pass, so no inserted text is searched for placeholders again.
    return re.sub(r"__(CSS|JS|TITLE|VERSION|DATA)__", lambda m: values[m.group(1)],
                  _asset("view.html"))

"""The dataflow-graph view: a compiled model as kernels, each kernel as its ``sam`` graph.

>>> compiled.view("graph.html", result)      # result = compiled.simulate(...), optional
>>> compiled.view("graph.dot")               # Graphviz DOT
>>> compiled.view(result=result)             # in Jupyter: shown inline

The HTML file is self-contained and works offline: a collapsible, searchable drawing with
the simulation's per-block statistics (see ``docs/view.md``).
"""

import importlib

_EXPORTS = {
    "InlineView": "fuseflow.viz.api",
    "ViewFormat": "fuseflow.viz.api",
    "resolve_open": "fuseflow.viz.api",
    "save_view": "fuseflow.viz.api",
    "view_of": "fuseflow.viz.api",
    "View": "fuseflow.viz.model",
    "ViewError": "fuseflow.viz.extract",
    "build_view": "fuseflow.viz.extract",
    "render_dot": "fuseflow.viz.dot",
    "render_html": "fuseflow.viz.page",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    # Lazy, so that the command line can register ``fuseflow view`` without importing MLIR.
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'fuseflow.viz' has no attribute '{name}'")

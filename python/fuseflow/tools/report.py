"""``fuseflow run ... --report DIR``: the results JSON, its plot and the graph views in a folder.

* ``results.json``: the results document (:mod:`fuseflow.tools.results`);
* ``cycles.png``: speedups and per-kernel cycles (:mod:`fuseflow.tools.plot`);
* ``graph-<target>-<configuration>.html``: the dataflow-graph view of each compiled
  configuration with its simulation's statistics (``CompiledModel.view(path, result,
  title=...)``, :mod:`fuseflow.viz`), when this build provides it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from fuseflow.tools import results
from fuseflow.tools.plot import plot_document

log = logging.getLogger(__name__)

RESULTS_NAME = "results.json"
PLOT_NAME = "cycles.png"


def write_report(doc: dict, outcomes, folder) -> dict[str, list[Path]]:
    """Writes the report of ``doc`` and its ``outcomes`` into ``folder`` (created); returns
    the files written by kind (``results``, ``plot``, ``views``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = {"results": [results.write(doc, folder / RESULTS_NAME)], "plot": [], "views": []}
    if any(r["cycles"] is not None for r in doc["runs"]):
        written["plot"].append(plot_document(doc, folder / PLOT_NAME))
    for outcome in outcomes:
        view = getattr(outcome.compiled, "view", None)
        if view is None:
            continue
        run = outcome.run
        path = folder / f"graph-{_slug(run.target)}-{_slug(run.configuration)}.html"
        written["views"].append(view(path, outcome.result,
                                     title=f"{run.target} {run.configuration}"))
    if not written["views"]:
        log.info("no graph view: this build's CompiledModel has no view()")
    return written


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)

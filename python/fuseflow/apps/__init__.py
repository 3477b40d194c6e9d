"""The four evaluated applications as plain PyTorch modules, with their size presets, data
sets and fusion configurations (see ``docs/applications.md`` and :mod:`fuseflow.apps.base`)."""

from fuseflow.apps import gcn, gpt3, graphsage, sae
from fuseflow.apps.base import (
    FUSION_LEVELS,
    PRESETS,
    VIEW_OPS,
    Application,
    FusionPlan,
    Stage,
    TracedOp,
    trace_ops,
)

APPLICATIONS: dict[str, Application] = {
    app.name: app
    for app in (sae.APPLICATION, gcn.APPLICATION, graphsage.APPLICATION, gpt3.APPLICATION)
}


def get_application(name: str) -> Application:
    """The registered application ``name``; the error lists the valid names."""
    try:
        return APPLICATIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown application {name!r}; valid names: {', '.join(APPLICATIONS)}") from None


__all__ = [
    "APPLICATIONS", "FUSION_LEVELS", "PRESETS", "VIEW_OPS", "Application", "FusionPlan", "Stage",
    "TracedOp", "get_application", "trace_ops",
]

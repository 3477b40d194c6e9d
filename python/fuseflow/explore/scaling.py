"""Models of growing size for measuring the search: GPT-3 with ``layers`` decoders."""

from __future__ import annotations


def gpt3_decoders(layers: int, preset: str = "tiny", seed: int = 0):
    """``(model, inputs, plan)`` of the GPT-3 application at ``preset`` with ``layers``
    decoder layers."""
    from fuseflow.apps import APPLICATIONS

    app = APPLICATIONS["gpt3"]
    model, inputs = app.build(preset, seed=seed, layers=layers)
    return model, inputs, app.plan(model)

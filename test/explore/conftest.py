"""Shared fixtures of the exploration tests."""

import pytest

import fuseflow
from fuseflow.apps import APPLICATIONS


@pytest.fixture(scope="module")
def gcn():
    """GCN at the tiny preset: ``(model, inputs, plan, program)``."""
    app = APPLICATIONS["gcn"]
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    return model, inputs, plan, fuseflow.Program(model, inputs, plan)

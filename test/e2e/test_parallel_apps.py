"""Every application, in every fusion configuration, with each kernel's outermost
parallelizable level forked into 2 and into 4 lanes: the output matches PyTorch on both
engines (which agree on cycles) and the model takes fewer cycles than in one lane."""

import warnings

import pytest
import torch

import fuseflow
from fuseflow.apps import APPLICATIONS, FUSION_LEVELS, get_application

warnings.filterwarnings("ignore")


@pytest.fixture(scope="module", params=list(APPLICATIONS))
def application(request):
    app = get_application(request.param)
    model, inputs = app.build("tiny", seed=0)
    with torch.no_grad():
        expected = model(*inputs)
    return fuseflow.Program(model, inputs, app.plan(model)), inputs, expected


def outermost_lanes(compiled, lanes: int) -> dict:
    """``Schedule.kernels`` forking each kernel's outermost parallelizable level."""
    settings = {}
    for info in compiled.kernels:
        found = info.parallel_variables()
        assert found, f"{info.name}: no parallelizable level"
        settings[info.index] = {"parallel": {found[0]: lanes}}
    return settings


@pytest.mark.parametrize("fusion", FUSION_LEVELS)
def test_outermost_level_in_2_and_4_lanes_matches_pytorch_and_is_faster(application, fusion):
    program, inputs, expected = application
    base = program.compile(fuseflow.Schedule(fusion=fusion))
    one = base.simulate(*inputs).cycles
    for lanes in (2, 4):
        compiled = program.compile(fuseflow.Schedule(fusion=fusion,
                                                     kernels=outermost_lanes(base, lanes)))
        fast = compiled.simulate(*inputs, engine="fast")
        ref = compiled.simulate(*inputs, engine="reference")
        assert fast.cycles == ref.cycles < one, (fusion, lanes)
        for result in (fast, ref):
            torch.testing.assert_close(result.output, expected, rtol=1e-4, atol=1e-5)

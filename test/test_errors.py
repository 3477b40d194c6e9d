"""The error hierarchy: every FuseFlow error is a FuseFlowError with a message and a location."""

import pytest

from fuseflow import mlir
from fuseflow.dialects.builders import CapacityError
from fuseflow.dialects.types import UnsupportedTypeError
from fuseflow.errors import FuseFlowError
from fuseflow.explore.costmodel import CostModelError
from fuseflow.explore.sweep import ClusterError
from fuseflow.frontend import FrontendError
from fuseflow.grouping import GroupingError
from fuseflow.layout import LayoutError, apply
from fuseflow.passes.base import PassFailure, PipelineError, emit_error
from fuseflow.passes.lowering.einsum import LoweringError
from fuseflow.pipeline import Pipeline
from fuseflow.runtime import ExecutionError
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.loader import LoaderError
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError
from fuseflow.tools.opt import UsageError

# class -> the builtin base callers rely on besides FuseFlowError (None: only FuseFlowError)
CLASSES = {
    CapacityError: ValueError, UnsupportedTypeError: ValueError, FrontendError: ValueError,
    GroupingError: ValueError, PipelineError: ValueError, LoaderError: ValueError,
    LayoutError: RuntimeError, ExecutionError: RuntimeError, PassFailure: None,
    LoweringError: None, SimulationError: None, StreamError: None, DeadlockError: None,
    UsageError: None, CostModelError: ValueError, ClusterError: RuntimeError,
}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_error_is_a_fuseflow_error(cls):
    assert issubclass(cls, FuseFlowError)
    if CLASSES[cls] is not None:
        assert issubclass(cls, CLASSES[cls])


def test_message_and_location():
    located = FuseFlowError("level 3 is out of range", 'loc("model.py":12:8)')
    assert located.message == "level 3 is out of range"
    assert located.location == 'loc("model.py":12:8)'
    assert str(located) == 'loc("model.py":12:8): level 3 is out of range'
    assert str(FuseFlowError("no location")) == "no location"
    assert FuseFlowError("no location").location is None


def test_deadlock_error_keeps_its_blocked_map():
    err = DeadlockError("deadlock: no block can make progress", {"join0": "s3"})
    assert (str(err), err.blocked, err.location) == ("deadlock: no block can make progress",
                                                      {"join0": "s3"}, None)


def test_pipeline_error_names_the_registered_passes():
    with pytest.raises(PipelineError, match="unknown pass 'fuseflow-bogus'; registered passes "
                                            "and pipelines: .*fuseflow-lower-to-sam"):
        Pipeline.parse("builtin.module(fuseflow-bogus)")


def test_pass_failure_carries_the_op_location():
    ctx = mlir.new_context()
    with ctx:
        module = mlir.Module.parse('func.func @f() { return loc("m.py":3:1) }')
        op = list(list(module.body.operations)[0].regions[0].blocks[0].operations)[0]
        diagnostics = []
        ctx.attach_diagnostic_handler(lambda d: diagnostics.append(d.message) or True)
        err = emit_error(op, "cannot lower this")
    assert isinstance(err, PassFailure)
    assert (err.message, err.location) == ("cannot lower this", 'loc("m.py":3:1)')
    assert diagnostics == ["cannot lower this"]


def test_layout_error_is_located_at_the_op():
    with mlir.new_context():
        module = mlir.Module.parse(
            'func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n'
            '  %e = math.exp %a : tensor<2xf32> loc("m.py":7:2)\n'
            '  return %e : tensor<2xf32>\n}')
        exp = list(list(module.body.operations)[0].regions[0].blocks[0].operations)[0]
        with pytest.raises(LayoutError) as info:
            apply(exp, FiberTree.from_dense([1.0, 2.0]))
    assert info.value.location == 'loc("m.py":7:2)'
    assert info.value.message == (
        "'math.exp' is not a host layout op; valid: tensor.extract_slice, tensor.expand_shape, "
        "tensor.collapse_shape, linalg.transpose, tensor.cast")

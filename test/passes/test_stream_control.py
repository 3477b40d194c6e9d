"""The stream-control check agrees with the simulator: the hand-written graphs it accepts
(``sam-verify-stream-control.mlir``) run on both engines, and those it rejects for streams of
different control structure (``sam-verify-stream-control-invalid.mlir``) stop the simulator
with a ``StreamError`` (for a reducer missing its outer coordinates, on a matrix with no
non-zero). Graphs lowered from models pass the check (the e2e suites
compile through ``sam-verify``)."""

from pathlib import Path

import numpy as np
import pytest

from fuseflow import mlir
from fuseflow.passes.stream_control import TAG, check_graph
from fuseflow.runtime import run_module
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.loader import tensor_format
from fuseflow.sim.tokens import SimulationError

HERE = Path(__file__).parent


def _cases(name: str) -> dict[str, str]:
    chunks = (HERE / name).read_text().split("// -----")
    return {c.split("func.func @")[1].split("(")[0]: c for c in chunks}


VALID = _cases("sam-verify-stream-control.mlir")
INVALID = _cases("sam-verify-stream-control-invalid.mlir")


def _module(text: str):
    ctx = mlir.new_context()
    return mlir.Module.parse(text, ctx), ctx


def _graph(module):
    fn = next(op.operation for op in module.body.operations)
    return next(op.operation for op in fn.regions[0].blocks[0].operations
                if op.operation.name == "sam.graph")


def _inputs(module) -> list[FiberTree]:
    """A 4x5 input with an empty row (and an empty column) per argument."""
    fn = next(op.operation for op in module.body.operations)
    rng = np.random.default_rng(0)
    trees = []
    for arg in fn.regions[0].blocks[0].arguments:
        shape = mlir.RankedTensorType(arg.type).shape
        array = (rng.random(shape) * (rng.random(shape) < 0.6)).astype(np.float32)
        array[1] = 0
        if len(shape) == 2:
            array[:, 2] = 0
        trees.append(FiberTree.from_dense(array, tensor_format(arg.type)))
    return trees


def _run(text: str, engine: str):
    module, ctx = _module(text)
    with ctx:
        return run_module(module, _inputs(module), engine=engine)


@pytest.mark.parametrize("name", sorted(VALID))
def test_accepted_graphs_run_on_both_engines(name):
    module, ctx = _module(VALID[name])
    with ctx:
        assert check_graph(_graph(module)) == []
    fast, ref = (_run(VALID[name], e) for e in ("fast", "reference"))
    assert fast.cycles == ref.cycles
    np.testing.assert_array_equal(fast.outputs[0].to_dense(), ref.outputs[0].to_dense())


@pytest.mark.parametrize("name", ["alu_depths", "alu_unjoined", "repeat_depth"])
def test_rejected_control_structure_stops_the_simulator(name):
    module, ctx = _module(INVALID[name])
    with ctx:
        messages = [d.message for d in check_graph(_graph(module))]
    assert len(messages) == 1 and TAG in messages[0]
    with pytest.raises(SimulationError):
        _run(INVALID[name], "reference")


def test_reducer_without_outer_coordinates_fails_on_an_all_zero_matrix():
    text = INVALID["reduce_without_outer"]
    fixed = text.replace('"sam.reduce"(%v)', '"sam.reduce"(%v, %i)').replace(
        "(!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>\n",
        "(!sam.val<f32, array<i64>>, !sam.crd) -> !sam.val<f32, array<i64>>\n", 1)
    module, ctx = _module(fixed)
    with ctx:
        assert check_graph(_graph(module)) == []
        zero = [FiberTree.from_dense(np.zeros((4, 5), np.float32),
                                     tensor_format(_graph(module).operands[0].type))]
        np.testing.assert_array_equal(run_module(module, zero).outputs[0].to_dense(),
                                      np.zeros(4, np.float32))
    module, ctx = _module(text)
    with ctx, pytest.raises(SimulationError, match="1 values written for 0 coordinates"):
        run_module(module, zero)

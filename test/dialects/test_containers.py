"""Containers take any number of inputs and results: a slot per run of equal types."""

import re

import pytest

from fuseflow import mlir
from fuseflow.dialects import containers, irdl_source, verify
from fuseflow.dialects.builders import TERMINATOR, CapacityError, create_container
from fuseflow.dialects.containers import (
    INPUT_SLOTS,
    RESULT_SLOTS,
    by_type,
    segment_sizes,
    type_runs,
)
from fuseflow.dialects.ir import find_ops
from fuseflow.pipeline import Pipeline


def test_runs_and_segment_sizes():
    assert type_runs([]) == []
    assert type_runs("AAxxxA") == [2, 3, 1]
    assert segment_sizes("AAxB", 5, "op", "inputs") == [2, 1, 1, 0, 0]
    with pytest.raises(CapacityError, match="^fuse.kernel has 4 inputs in 3 runs of equal "
                                            "consecutive types; a container holds at most 2 runs "
                                            "of inputs"):
        segment_sizes("AAxB", 2, "fuse.kernel", "inputs")
    assert by_type(["v1", "m1", "v2", "s1", "m2"], lambda v: v[0]) == ["v1", "v2", "m1", "m2",
                                                                       "s1"]


def _types(ctx, count: int) -> list:
    """``count`` tensor types cycling through three shapes and two element types."""
    names = ["tensor<4x3xf32>", "tensor<4x3xf32>", "tensor<3xf32>", "tensor<4x3xf64>",
             "tensor<4x3xf64>", "tensor<4x3xf64>", "tensor<2xf32>"]
    return [mlir.Type.parse(names[i % len(names)], ctx) for i in range(count)]


def _kernel_module(ctx, input_types, result_types, name="fuse.kernel"):
    """A function passing ``input_types`` into a container that yields its first inputs of
    each result type."""
    with ctx, mlir.Location.unknown():
        module = mlir.Module.create()
        with mlir.InsertionPoint(module.body):
            fn = mlir.func.FuncOp("many", (input_types, result_types))
            entry = fn.add_entry_block()
            with mlir.InsertionPoint(entry):
                op, block = create_container(name, list(entry.arguments), result_types,
                                             {"name": mlir.StringAttr.get("k0")})
                with mlir.InsertionPoint(block):
                    args = list(block.arguments)
                    yielded = [next(a for a in args if a.type == t) for t in result_types]
                    mlir.Operation.create(TERMINATOR, operands=yielded)
                mlir.func.ReturnOp(list(op.results))
    return module


def test_kernel_with_100_inputs_and_12_results_of_mixed_types_verifies_and_round_trips():
    ctx = mlir.new_context()
    inputs, results = _types(ctx, 100), _types(ctx, 12)
    module = _kernel_module(ctx, inputs, results)
    assert module.operation.verify()                          # IRDL
    assert verify.check_module(module.operation) == []        # the Python verifier
    with ctx:
        parsed = mlir.Module.parse(str(module))                # the printed form parses
    kernel = next(find_ops(parsed.operation, lambda op: op.name == "fuse.kernel"))
    assert [v.type for v in kernel.operands] == inputs
    assert [v.type for v in kernel.regions[0].blocks[0].arguments] == inputs
    assert [r.type for r in kernel.results] == results
    runs = list(mlir.DenseI32ArrayAttr(kernel.attributes["operandSegmentSizes"]))
    # 100 inputs cycling 2, 1, 3, 1 types of a 7-type period: 4 runs per period.
    assert runs[:4] == [2, 1, 3, 1] and sum(runs) == 100 and len(runs) == INPUT_SLOTS
    assert runs.index(0) == len(type_runs([str(t) for t in inputs]))
    assert list(mlir.DenseI32ArrayAttr(kernel.attributes["resultSegmentSizes"]))[:8] == \
        [2, 1, 3, 1, 2, 1, 2, 0]


def test_graph_with_runs_of_one_type_in_each_slot():
    ctx = mlir.new_context()
    types = [mlir.Type.parse("tensor<4xf32>", ctx)] * 40 + [mlir.Type.parse("tensor<2xf32>", ctx)]
    module = _kernel_module(ctx, types, [], name="sam.graph")
    assert module.operation.verify()
    graph = next(find_ops(module.operation, lambda op: op.name == "sam.graph"))
    assert list(mlir.DenseI32ArrayAttr(graph.attributes["operandSegmentSizes"]))[:3] == [40, 1, 0]


@pytest.mark.parametrize("inputs, results, message", [
    (INPUT_SLOTS + 1, 1, f"has {INPUT_SLOTS + 1} inputs in {INPUT_SLOTS + 1} runs of equal "
                         f"consecutive types; a container holds at most {INPUT_SLOTS} runs of "
                         "inputs"),
    (1, RESULT_SLOTS + 1, f"has {RESULT_SLOTS + 1} results in {RESULT_SLOTS + 1} runs of equal "
                          f"consecutive types; a container holds at most {RESULT_SLOTS} runs of "
                          "results"),
])
def test_more_runs_than_slots_is_a_capacity_error(inputs, results, message):
    ctx = mlir.new_context()
    alternating = [mlir.Type.parse(f"tensor<{1 + i % 2}xf32>", ctx) for i in range(100)]
    with pytest.raises(CapacityError, match=f"^fuse.kernel {message}"):
        _kernel_module(ctx, alternating[:inputs], alternating[:results])


def _distinct_types_program(count: int) -> str:
    """A function summing ``count`` inputs of distinct shapes (``tensor<Nxf32>``)."""
    args = ", ".join(f"%a{n}: tensor<{n}xf32>" for n in range(1, count + 1))
    lines = [f"func.func @f({args}) -> tensor<f32> {{",
             "  %zero = arith.constant 0.0 : f32",
             "  %e = tensor.empty() : tensor<f32>",
             "  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>"]
    for n in range(1, count + 1):
        lines += [
            f"  %acc{n} = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, "
            "affine_map<(d0) -> ()>], iterator_types = [\"reduction\"]}",
            f"      ins(%a{n} : tensor<{n}xf32>) outs(%acc{n - 1} : tensor<f32>) {{",
            "  ^bb0(%x: f32, %o: f32):",
            "    %r = arith.addf %x, %o : f32",
            "    linalg.yield %r : f32",
            "  } -> tensor<f32>"]
    return "\n".join(lines + [f"  return %acc{count} : tensor<f32>", "}"])


def test_partition_orders_inputs_by_type_and_reports_a_capacity_error_located():
    ctx = mlir.new_context()
    with ctx:
        module = mlir.Module.parse(_distinct_types_program(3))
    Pipeline.parse("builtin.module(fuseflow-partition{mode=full})").run(module)
    kernel = next(find_ops(module.operation, lambda op: op.name == "fuse.kernel"))
    assert len(list(kernel.operands)) == 3
    with ctx:
        module = mlir.Module.parse(_distinct_types_program(INPUT_SLOTS + 1))
    with pytest.raises(mlir.MLIRError) as err:
        Pipeline.parse("builtin.module(fuseflow-partition{mode=full})").run(module)
    # Reported at the kernel's last op: the reduction of input n starts on line 5 + 6 (n - 1).
    assert re.search(f'error: "-":{5 + 6 * INPUT_SLOTS}:[0-9]+: fuse.kernel has '
                     f"{INPUT_SLOTS + 1} inputs in {INPUT_SLOTS + 1} runs", str(err.value))


def test_generated_irdl_declares_the_slots():
    for container in containers.CONTAINERS:
        ctx = mlir.new_context()
        assert ctx.is_registered_operation(container.op_name)
    irdl = irdl_source("fuse.irdl.mlir")
    assert f"in{INPUT_SLOTS - 1}: variadic %in{INPUT_SLOTS - 1})" in irdl
    assert f"out{RESULT_SLOTS - 1}: variadic %out{RESULT_SLOTS - 1})" in irdl

"""Per-kernel schedules through the API: Schedule(kernels=...), compiled.kernels, reschedule."""

import pytest
import torch

import fuseflow
from fuseflow.apps import get_application
from fuseflow.compiler import CompileError
from fuseflow.errors import ArgumentError, FuseFlowError


@pytest.fixture(scope="module")
def gcn():
    app = get_application("gcn")
    model, inputs = app.build("tiny", None, 0)
    plan = app.plan(model)
    with torch.no_grad():
        expected = model(*inputs)
    return fuseflow.Program(model, inputs, plan=plan), inputs, expected


def _matches(compiled, inputs, expected):
    out = compiled.simulate(*inputs).output
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)


def test_kernels_list_their_schedules_legal_orders_and_sizes(gcn):
    program, _, _ = gcn
    compiled = program.compile(fuseflow.Schedule(fusion="partial"))
    kernels = compiled.kernels
    assert [k.index for k in kernels] == [0, 1]
    assert kernels[0].name.startswith("g0:layer1.aggregate")
    for k in kernels:
        orders = k.legal_orders()
        assert k.schedule.order == orders[0]           # the default is the best legal order
        assert sorted(k.schedule.order) == sorted(orders[-1])
        assert k.size > 0
        assert k.schedule.parallel == () and k.schedule.block == ()


def test_one_kernel_gets_a_non_default_order_the_other_keeps_its_default(gcn):
    program, inputs, expected = gcn
    default = program.compile(fuseflow.Schedule(fusion="partial"))
    layer2 = default.kernels[1]
    other = next(o for o in layer2.legal_orders() if o != layer2.schedule.order)
    compiled = program.compile(fuseflow.Schedule(
        fusion="partial", kernels={"layer2.transform": other}))
    assert compiled.kernels[1].schedule.order == other
    assert compiled.kernels[0].schedule == default.kernels[0].schedule
    assert f'order = [{", ".join(repr(v).replace(chr(39), chr(34)) for v in other)}]' \
        in compiled.mlir("kernels")
    _matches(compiled, inputs, expected)
    by_index = program.compile(fuseflow.Schedule(fusion="partial", kernels={1: other}))
    assert by_index.mlir("sam") == compiled.mlir("sam")


def test_reschedule_relowers_one_kernel(gcn):
    program, inputs, expected = gcn
    compiled = program.compile(fuseflow.Schedule(fusion="partial"))
    first = compiled.kernels[0]
    other = next(o for o in first.legal_orders() if o != first.schedule.order)
    changed = compiled.reschedule(0, order=other)
    assert changed.kernels[0].schedule.order == other
    assert changed.kernels[1].schedule == compiled.kernels[1].schedule
    assert compiled.kernels[0].schedule.order == first.schedule.order   # the original stays
    _matches(changed, inputs, expected)


def test_bad_kernel_keys_and_illegal_orders_are_clear_errors(gcn):
    program, _, _ = gcn
    with pytest.raises(ArgumentError, match="no kernel named 'layer3'; valid names: "):
        program.compile(fuseflow.Schedule(fusion="partial", kernels={"layer3": "d0,d1"}))
    compiled = program.compile(fuseflow.Schedule(fusion="partial"))
    order = compiled.kernels[1].schedule.order
    with pytest.raises(CompileError, match="schedule of kernel 'g1:layer2.aggregate.*"
                                           "out of storage order; legal orders: ") as info:
        program.compile(fuseflow.Schedule(fusion="partial",
                                          kernels={1: tuple(reversed(order))}))
    assert isinstance(info.value, FuseFlowError)          # located in the model's source
    assert "apps/gcn.py" in info.value.location or "apps/gnn.py" in info.value.location
    with pytest.raises(ArgumentError, match="index 2 is out of range; the model has 2 kernels"):
        compiled.reschedule(2, order=order)
    with pytest.raises(ArgumentError, match="needs at least one of order, parallel, block"):
        compiled.reschedule(0)

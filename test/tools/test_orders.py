"""Legal orders listed, sized and simulated: ``fuseflow.orders`` and ``fuseflow orders``."""

import json
import warnings

import pytest
import torch

import fuseflow
from fuseflow.errors import ArgumentError
from fuseflow.kernels import KERNELS
from fuseflow.orders import kernel_orders, select_kernel
from fuseflow.tools.cli import main

warnings.filterwarnings("ignore")


SPMM_SEED = 3  # the inputs of the spmm fixture (conftest.py)


def test_every_legal_order_is_listed_sized_and_simulated(spmm):
    kernel, inputs, program, compiled = spmm
    expected = kernel.module()(*inputs).to_dense()
    rows = kernel_orders(compiled, inputs, simulate=True, expected=expected)
    orders = compiled.kernels[0].legal_orders()
    assert [r.order for r in rows] == orders and len(orders) >= 2
    assert [r.rank for r in rows] == list(range(len(orders)))
    assert [r.scheduled for r in rows] == [o == compiled.kernels[0].schedule.order
                                            for o in orders]
    for r in rows:
        direct = program.compile(fuseflow.Schedule(order=r.order))
        assert r.cycles == r.total_cycles == direct.simulate(*inputs).cycles
        assert r.ops == direct.kernels[0].size
        assert r.tokens > 0 and r.predicted_cycles > 0 and r.matches
    assert len({r.cycles for r in rows}) > 1              # orders differ in cost
    assert all(r.cycles is None for r in kernel_orders(compiled, inputs, limit=1))


def test_kernels_are_selected_by_index_name_or_unique_part():
    kernel = KERNELS["spmv"]                               # two kernels: mul, then sum
    inputs = kernel.inputs(0.5)
    compiled = fuseflow.compile(kernel.module(), inputs,
                                fuseflow.Schedule(formats=dict(kernel.declared)))
    infos = compiled.kernels
    assert len(infos) == 2
    assert select_kernel(infos, 1) is infos[1] and select_kernel(infos, "-1") is infos[1]
    assert select_kernel(infos, infos[0].name) is infos[0]
    assert {r.index for r in kernel_orders(compiled, inputs, kernel=1)} == {1}
    with pytest.raises(ArgumentError, match="kernel index 5 is out of range; the model has 2"):
        select_kernel(infos, 5)
    with pytest.raises(ArgumentError, match="kernel 'zz' names no kernel; kernels: k0, k1"):
        select_kernel(infos, "zz")


def test_command_prints_a_table_per_kernel_and_writes_json(tmp_path, capsys):
    out = tmp_path / "orders.json"
    assert main(["orders", "spmm", "--simulate", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "legal orders" in printed and "vs best" in printed and "1.00x" in printed
    doc = json.loads(out.read_text())
    assert doc["target"] == "spmm" and len(doc["orders"]) >= 2
    assert {"kernel", "order", "ops", "tokens", "cycles", "matches"} <= set(doc["orders"][0])
    assert all(row["matches"] for row in doc["orders"])


def test_command_lists_an_application_kernel_without_simulating(capsys):
    assert main(["orders", "gcn", "--fusion", "partial", "--kernel", "0", "--limit", "2"]) == 0
    printed = capsys.readouterr().out
    assert "kernel 0" in printed and "kernel 1" not in printed
    assert "vs best" not in printed


def test_applications_are_the_published_workload_unless_dense_weights(tmp_path):
    tokens = {}
    for variant, extra in (("published", []), ("dense", ["--dense-weights"])):
        out = tmp_path / f"{variant}.json"
        assert main(["orders", "gcn", "--fusion", "full", "--limit", "1", "--json", str(out),
                     *extra]) == 0
        doc = json.loads(out.read_text())
        assert ("dense weights" in doc["title"]) == (variant == "dense")
        tokens[variant] = doc["orders"][0]["tokens"]
    # The published workload's pruned weight is declared sparse: its zeros are never streamed.
    assert tokens["published"] < tokens["dense"]


@pytest.mark.parametrize("argv, message", [
    (["orders", "bogus"], "unknown target 'bogus'"),
    (["orders", "spmm", "--dense-weights"], "--dense-weights does not apply to kernel"),
    (["orders", "spmm", "--fusion", "full"], "--fusion does not apply to kernel 'spmm'"),
    (["orders", "gcn", "--sparsity", "0.5"], "--sparsity does not apply to application"),
    (["orders", "spmm", "--kernel", "7"], "kernel index 7 is out of range"),
    (["orders", "spmm", "--limit", "0"], "--limit must be at least 1"),
])
def test_command_rejects_bad_targets_and_options(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_orders_agree_with_torch_on_every_order_of_an_application_kernel():
    app_inputs = KERNELS["spmm"].inputs(0.3, seed=1)
    compiled = fuseflow.compile(KERNELS["spmm"].module(), app_inputs)
    expected = torch.mm(app_inputs[0].to_dense(), app_inputs[1])
    rows = kernel_orders(compiled, app_inputs, simulate=True, expected=expected,
                         engine="reference")
    assert rows and all(r.matches for r in rows)

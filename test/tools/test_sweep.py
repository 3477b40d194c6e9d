"""One kernel's schedule axes swept: ``fuseflow.sweep`` and ``fuseflow sweep``."""

import json
import warnings

import pytest

import fuseflow
from fuseflow.errors import ArgumentError
from fuseflow.sweep import schedules, sweep
from fuseflow.tools.cli import main

warnings.filterwarnings("ignore")


SPMM_SEED = 4  # the inputs of the spmm fixture (conftest.py)


def test_sweep_covers_orders_levels_and_factors_and_matches_direct_compiles(spmm):
    kernel, inputs, program, compiled = spmm
    info = compiled.kernels[0]
    points = sweep(compiled, inputs, 0, levels="all", factors=(1, 2),
                   expected=kernel.module()(*inputs))
    expected = [(o, ()) for o in info.legal_orders()]
    expected += [(o, ((v, 2),)) for o in info.legal_orders() for v in info.parallel_variables(o)]
    assert sorted((p.order, p.parallel) for p in points) == sorted(expected)
    assert all(p.matches for p in points)
    for p in points:
        direct = program.compile(fuseflow.Schedule(kernels={0: {
            "order": p.order, "parallel": dict(p.parallel)}}))
        assert p.cycles == direct.simulate(*inputs).cycles
    scheduled = next(p for p in points if p.order == info.schedule.order and not p.parallel)
    assert scheduled.speedup == 1.0 and scheduled.lanes == 1
    assert max(p.speedup for p in points) > 1.2 and all(p.tokens > 0 for p in points)


def test_levels_are_the_outermost_all_or_named(spmm):
    _, _, _, compiled = spmm
    info = compiled.kernels[0]
    order = info.legal_orders()[0]
    forkable = info.parallel_variables(order)
    assert len(schedules(info, 1, "outermost", (2, 4))) == 2
    assert len(schedules(info, 1, "all", (2,))) == len(forkable)
    assert schedules(info, 1, forkable[-1], (3,)) == [(order, ((forkable[-1], 3),))]
    with pytest.raises(ArgumentError, match="levels d9 cannot be forked under order"):
        schedules(info, 1, "d9", (2,))
    with pytest.raises(ArgumentError, match="factors must be lane counts >= 1"):
        sweep(compiled, (), 0, factors=(0,))


def test_command_writes_table_json_and_plot(tmp_path, capsys):
    out, png = tmp_path / "sweep.json", tmp_path / "sweep.png"
    assert main(["sweep", "spmm", "--factors", "1,2", "--json", str(out), "--png",
                 str(png)]) == 0
    printed = capsys.readouterr().out
    assert "schedules" in printed and "speedup" in printed
    doc = json.loads(out.read_text())
    assert doc["target"] == "spmm" and len(doc["points"]) == 4       # 2 orders x (1, 2 lanes)
    assert {"order", "parallel", "lanes", "cycles", "speedup", "label"} <= set(doc["points"][0])
    assert png.stat().st_size > 0


@pytest.mark.parametrize("argv, message", [
    (["sweep", "spmm", "--factors", "0,2"], "--factors must be lane counts >= 1"),
    (["sweep", "spmm", "--orders", "0"], "--orders must be at least 1"),
    (["sweep", "spmm", "--kernel", "3"], "kernel index 3 is out of range"),
])
def test_command_rejects_bad_options(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err

"""``fuseflow reproduce --plan`` and ``--simulate-up-to``: every point predicted by the cost
model before simulating, expensive points left to the model and marked in every figure."""

import json
import shutil

import pytest

from fuseflow.apps.layers import Extrapolation
from fuseflow.reproduce import figures, plan
from fuseflow.reproduce.command import token_count
from fuseflow.reproduce.sweep import (
    Cache,
    Point,
    PointResult,
    SweepSettings,
    run_sweep,
    simulated_tokens,
    sweep_points,
)
from fuseflow.tools.cli import main

SAE = sweep_points("tiny", ("sae",), ("imagenet",))
ARGS = ["reproduce", "fig12", "fig14", "--apps", "sae", "--datasets", "imagenet",
        "--workers", "1"]


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """A folder planned with ``--plan`` (nothing simulated), and what the command printed."""
    out = tmp_path_factory.mktemp("planned")
    return out, main(ARGS + ["--out", str(out), "--plan"])


def test_plan_predicts_every_point_without_simulating(planned, capsys):
    out, status = planned
    assert status == 0
    assert not (out / "points.json").exists()
    doc = json.loads((out / "plan.json").read_text())
    assert doc["schema"] == plan.PLAN_SCHEMA and doc["seed"] == 0
    records = {r["key"]: r for r in doc["points"]}
    assert set(records) == {p.key for p in SAE}
    for record in records.values():
        assert record["status"] == "ok"
        for field in ("tokens", "cycles", "ops", "bytes_moved", "simulated_tokens"):
            assert record[field] > 0, field
        assert record["simulated_tokens"] == record["tokens"]     # nothing extrapolated
    assert doc["tokens_per_second"] == plan.DEFAULT_TOKENS_PER_SECOND
    assert "default" in doc["rate_source"]
    assert [row["status"] for row in doc["table"]] == ["to simulate"] * 3
    assert all(row["estimated_seconds"] > 0 for row in doc["table"])
    totals = doc["totals"]
    assert totals["tokens"] == sum(r["tokens"] for r in records.values())
    assert totals["to_simulate"] == 3 and totals["done"] == 0
    table = (out / "plan.md").read_text()
    for point in SAE:
        record = records[point.key]
        assert (f"| sae | imagenet | {point.fusion} | to simulate | {record['tokens']:.3g} | "
                in table)
    assert "All 3 points" in table and "tokens/s" in table


def test_simulate_up_to_leaves_expensive_points_to_the_model_until_a_rerun(planned, tmp_path,
                                                                          capsys):
    out = tmp_path / "sweep"
    shutil.copytree(planned[0], out)
    predictions = {r["key"]: r for r in json.loads((out / "plan.json").read_text())["points"]}
    by_work = sorted(SAE, key=lambda p: predictions[p.key]["simulated_tokens"])
    cheapest, *expensive = by_work
    limit = (predictions[cheapest.key]["simulated_tokens"]
             + predictions[expensive[0].key]["simulated_tokens"]) / 2
    argv = ARGS + ["--out", str(out)]
    capsys.readouterr()
    assert main(argv + ["--simulate-up-to", f"{limit:.6e}"]) == 0
    printed = capsys.readouterr()
    assert "2 over --simulate-up-to" in printed.out
    points = json.loads((out / "points.json").read_text())["points"]
    assert points[cheapest.key]["status"] == "ok"
    assert points[cheapest.key]["prediction"]["tokens"] == predictions[cheapest.key]["tokens"]
    for point in expensive:
        record, predicted = points[point.key], predictions[point.key]
        assert record["status"] == "predicted" and record["predicted"] is True
        assert record["threshold"] == pytest.approx(limit, rel=1e-6)
        assert {k: record[k] for k in ("cycles", "ops", "bytes_moved", "tokens")} == \
            {k: predicted[k] for k in ("cycles", "ops", "bytes_moved", "tokens")}
    # Every figure marks them, and the ratios computed from them.
    fig12 = json.loads((out / "fig12.json").read_text())
    assert sorted(fig12["predicted"]) == sorted(p.key for p in expensive)
    [row] = fig12["rows"]
    predicted_levels = {p.fusion for p in expensive}
    assert row["predicted"] == {level: level in predicted_levels or "unfused" in
                                predicted_levels for level in ("unfused", "partial", "full")}
    assert set(row["speedup"]) == {"partial", "full"}
    md = (out / "fig12.md").read_text()
    assert "cost-model predictions, not simulations" in md and "docs/costmodel.md" in md
    assert md.count("≈") >= len(expensive)
    fig14 = json.loads((out / "fig14.json").read_text())
    assert fig14["rows"][0]["predicted"] == row["predicted"]
    # The simulated point checks the model.
    assert fig12["model_check"]["points"] == 1
    assert fig12["model_check"]["max_relative_error"]["tokens"] < 0.1
    assert "Cost model against this sweep's 1 simulated points" in md
    assert (out / "fig12.png").read_bytes().startswith(b"\x89PNG")
    # The same limit predicts them again: nothing to do.
    assert main(argv + ["--simulate-up-to", f"{limit:.6e}"]) == 0
    assert "3 points (3 cached" in capsys.readouterr().out
    # Without it they are simulated, cheapest first, and replace the predictions.
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "3 points (1 cached" in printed.out
    reported = [line.split("] ")[1].split(":")[0] for line in printed.err.splitlines()
                if line.startswith("[")]
    assert reported == [p.key for p in expensive]
    points = json.loads((out / "points.json").read_text())["points"]
    assert all(points[p.key]["status"] == "ok" and not points[p.key]["predicted"]
               for p in SAE)
    fig12 = json.loads((out / "fig12.json").read_text())
    assert fig12["predicted"] == [] and "≈" not in (out / "fig12.md").read_text()
    assert fig12["model_check"]["points"] == 3
    # Planning again shows them finished, with their measured time.
    assert main(ARGS + ["--out", str(out), "--plan"]) == 0
    rows = json.loads((out / "plan.json").read_text())["table"]
    assert all(r["status"] == "simulated" and r["measured_seconds"] > 0 for r in rows)


@pytest.mark.parametrize("value, message", [
    ("-1", "finite number of tokens >= 0"), ("lots", "number of tokens such as 3e10"),
    ("nan", "finite number"), ("inf", "finite number")])
def test_bad_simulate_up_to_values_are_usage_errors(value, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(ARGS + ["--simulate-up-to", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--simulate-up-to" in err and message in err


def test_token_counts_accept_plain_and_scientific_numbers():
    assert token_count("3e10") == 3e10 and token_count("1500") == 1500.0
    assert token_count("0") == 0.0


def _prediction(point, tokens):
    return {"key": point.key, "status": "ok", "provenance": "synthetic", "tokens": tokens,
            "simulated_tokens": tokens, "cycles": tokens // 10, "ops": tokens // 4,
            "bytes_moved": tokens * 2, "kernels": 1, "prepare_seconds": 1.0}


def test_points_run_cheapest_first_and_unknown_ones_last():
    a, b, c = SAE
    predictions = {a.key: _prediction(a, 300), c.key: _prediction(c, 100),
                   b.key: {"key": b.key, "status": "error", "error": "boom"}}
    assert plan.cheapest_first([a, b, c], predictions) == [c, a, b]
    assert plan.estimated_seconds(predictions[a.key], 100.0) == 4.0
    assert plan.estimated_seconds(predictions[b.key], 100.0) is None
    assert plan.makespan([1, 2, 3, 4], 2) == 6 and plan.makespan([5, 1], 1) == 6


def test_a_predicted_point_is_done_only_while_the_limit_would_predict_it_again(tmp_path):
    point = SAE[0]
    cache = Cache(tmp_path)
    cache.add(PointResult.from_prediction(point, _prediction(point, 1000), 500.0))
    assert cache.done(point, False, 500.0) and cache.done(point, False, 999.0)
    assert not cache.done(point, False, 1000.0)            # now simulated
    assert not cache.done(point, False, None)              # no limit: simulate everything
    assert Cache(tmp_path).points[point.key]["predicted"] is True


def test_rate_is_measured_from_simulated_points_else_the_default(tmp_path):
    cache = Cache(tmp_path)
    assert plan.rate_of(cache)[0] == plan.DEFAULT_TOKENS_PER_SECOND
    for i, (tokens, seconds) in enumerate([(1000, 1.0), (3000, 1.0)]):
        point = Point("sae", "imagenet", ("unfused", "partial")[i], "tiny")
        cache.add(PointResult(point.key, "sae", "imagenet", point.fusion, "tiny", False,
                              status="ok", tokens=tokens, simulated_tokens=tokens,
                              simulate_seconds=seconds))
    predicted = SAE[2]
    cache.add(PointResult.from_prediction(predicted, _prediction(predicted, 10**9), 1.0))
    rate, source = plan.rate_of(cache)
    assert rate == 2000.0 and "2 simulated points" in source


def test_extrapolated_points_count_the_tokens_of_both_simulated_models():
    one, two = 1234, 2345
    extrapolated = Extrapolation("decoder", 12).apply(one, two)
    assert simulated_tokens(extrapolated, two, 12) == one + two


def _record(dataset, fusion, cycles, predicted=False):
    point = Point("gcn", dataset, fusion, "small")
    if predicted:
        return vars(PointResult.from_prediction(point, {
            "provenance": "synthetic", "cycles": cycles, "ops": 100, "bytes_moved": 1000,
            "tokens": 10 * cycles, "simulated_tokens": 10 * cycles, "kernels": 1}, 5e3))
    return vars(PointResult(point.key, "gcn", dataset, fusion, "small", False, status="ok",
                            provenance="synthetic", cycles=cycles, ops=100, bytes_moved=1000,
                            wall_seconds=1.0))


def test_ratios_mixing_a_prediction_are_predictions(tmp_path):
    points = [_record("cora", "unfused", 1000), _record("cora", "partial", 500),
              _record("cora", "full", 4000, predicted=True),
              _record("dblp", "unfused", 2000, predicted=True), _record("dblp", "partial", 1000),
              _record("dblp", "full", 500)]
    doc = figures.document("fig12", "small", points, None)
    cora, dblp = doc["rows"]
    assert cora["predicted"] == {"unfused": False, "partial": False, "full": True}
    assert dblp["predicted"] == {"unfused": True, "partial": True, "full": True}
    assert cora["speedup"] == {"partial": 2.0, "full": 0.25}
    table = figures.markdown(doc)
    assert "| gcn | cora | synthetic | 1,000 | 2.00× | ≈0.25× |" in table
    assert "| gcn | dblp | synthetic | ≈2,000 | ≈2.00× | ≈4.00× |" in table
    assert "5e+03 tokens" in table and figures.MODEL_ACCURACY in table
    # Predicted points are not timed.
    assert doc["point_wall_seconds"] == 4.0
    assert figures.write(doc, tmp_path)["plot"].read_bytes().startswith(b"\x89PNG")


def test_a_sweep_records_predicted_points_cheapest_first_without_simulating(tmp_path):
    works = dict(zip(SAE, (300, 200, 100)))
    predictions = {p.key: _prediction(p, w) for p, w in works.items()}
    seen = []
    records = run_sweep(SAE, tmp_path, SweepSettings(simulate_up_to=50.0),
                        lambda result, done, total: seen.append((result.key, done, total)),
                        predictions)
    assert seen == [(SAE[2].key, 1, 3), (SAE[1].key, 2, 3), (SAE[0].key, 3, 3)]
    assert [r["key"] for r in records] == [p.key for p in SAE]           # figure order
    assert all(r["status"] == "predicted" and r["wall_seconds"] is None for r in records)


def test_a_prediction_over_its_memory_budget_is_an_error_not_a_crash():
    assert plan.memory_budget(2) > 0
    # 1 MiB of address space: the group's process fails (MemoryError, or whatever a failed
    # allocation breaks first) or dies, and its points are recorded as errors.
    records = plan.predict_points(SAE[:2], memory=1 << 20)
    assert set(records) == {p.key for p in SAE[:2]}
    assert all(r["status"] == "error" and r["error"] for r in records.values())


def test_plan_and_limit_apply_to_the_sweep_figures_only(capsys):
    assert main(["reproduce", "fig15", "--plan"]) == 2
    assert "apply to fig12 and fig14, not to fig15" in capsys.readouterr().err


def test_the_plan_table_says_what_a_sweep_would_do_with_each_point(tmp_path):
    a, b, c = SAE
    cache = Cache(tmp_path)
    cache.add(PointResult(a.key, "sae", "imagenet", a.fusion, "tiny", False, status="ok",
                          tokens=900, simulated_tokens=900, simulate_seconds=3.0,
                          wall_seconds=5.0))
    predictions = {a.key: _prediction(a, 1000), b.key: _prediction(b, 600),
                   c.key: _prediction(c, 3000)}
    table = plan.Table(SAE, predictions, cache, SweepSettings(workers=2, simulate_up_to=2000))
    assert [r["status"] for r in table.rows] == ["simulated", "to simulate", "to predict"]
    assert table.rate == 300.0                            # measured from the simulated point
    assert table.rows[1]["estimated_seconds"] == 1.0 + 600 / 300.0
    totals = table.summary()["totals"]
    assert (totals["done"], totals["to_simulate"], totals["to_predict"]) == (1, 1, 1)
    assert totals["to_simulate_tokens"] == 600 and totals["tokens"] == 4600
    text = table.markdown()
    assert "| sae | imagenet | unfused | simulated | 1e+03 | 1e+03 | 100 | 4 s | 5 s |" in text
    assert "1 over --simulate-up-to 2e+03 left to the cost model" in text

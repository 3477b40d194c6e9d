"""``fuseflow reproduce``: the sweep's points, its resumable cache and worker processes, the
figures beside the published ratios."""

import json

import pytest

from fuseflow.reproduce import figures
from fuseflow.reproduce.published import FIG12_SPEEDUP, format_reference
from fuseflow.reproduce.sweep import (
    Cache,
    Point,
    PointResult,
    SweepSettings,
    run_point,
    run_sweep,
    sweep_points,
)
from fuseflow.tools.cli import main

SAE = sweep_points("tiny", ("sae",), ("imagenet",))


def test_points_cover_every_application_data_set_and_configuration():
    tiny = sweep_points("tiny")
    assert len(tiny) == 3 * (3 + 5 + 5 + 1)
    assert {p.dataset for p in tiny if p.app == "gpt3"} == {"b4"}
    published = sweep_points("published")
    assert {p.dataset for p in published if p.app == "gpt3"} == {"b16", "b32", "b64"}
    assert {p.dataset for p in published if p.app == "gcn"} == set(FIG12_SPEEDUP["gcn"])
    assert [p.fusion for p in SAE] == ["unfused", "partial", "full"]
    assert SAE[0].key == "tiny/published/sae/imagenet/unfused"
    assert sweep_points("tiny", ("sae",), dense_weights=True)[0].key.startswith("tiny/dense/")
    with pytest.raises(ValueError, match="valid: sae, gcn, graphsage, gpt3"):
        sweep_points("tiny", ("bert",))


def test_sweep_runs_points_in_workers_caches_them_and_resumes(tmp_path):
    seen = []
    settings = SweepSettings(workers=2)
    records = run_sweep(SAE, tmp_path, settings, lambda r, done, total: seen.append(
        (r.key, done, total)))
    assert sorted(key for key, _, _ in seen) == sorted(p.key for p in SAE)
    assert [(done, total) for _, done, total in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [r["key"] for r in records] == [p.key for p in SAE]
    assert all(r["status"] == "ok" and r["provenance"] == "synthetic" for r in records), \
        [(r["key"], r["status"], r["provenance"], r["error"]) for r in records]
    assert all(r["peak_rss_bytes"] > 0 and r["wall_seconds"] > 0 for r in records)
    # A worker computes what the point computes in this process.
    direct = run_point(SAE[2], settings)
    assert (records[2]["cycles"], records[2]["ops"]) == (direct.cycles, direct.ops)
    cached = json.loads((tmp_path / "points.json").read_text())["points"]
    assert set(cached) == {p.key for p in SAE}
    # Resuming runs nothing.
    seen.clear()
    assert run_sweep(SAE, tmp_path, settings, lambda *a: seen.append(a)) == records
    assert seen == []


def test_a_point_over_its_time_is_killed_and_retried_on_request(tmp_path):
    point = SAE[:1]
    [record] = run_sweep(point, tmp_path, SweepSettings(timeout=0.01))
    assert record["status"] == "timeout" and "timed out after 0.01 s" in record["error"]
    assert not Cache(tmp_path).done(point[0], retry_failed=True)
    assert run_sweep(point, tmp_path, SweepSettings()) == [record]      # kept
    [again] = run_sweep(point, tmp_path, SweepSettings(retry_failed=True))
    assert again["status"] == "ok"


def _record(app, dataset, fusion, cycles, ops=100, bytes_moved=1000, status="ok"):
    point = Point(app, dataset, fusion, "small")
    return vars(PointResult(point.key, app, dataset, fusion, "small", False, status=status,
                            provenance="synthetic", cycles=cycles, ops=ops,
                            bytes_moved=bytes_moved, wall_seconds=1.0))


def test_figures_give_ratios_to_unfused_beside_the_published_ones(tmp_path):
    points = [_record("gcn", "cora", "unfused", 1000), _record("gcn", "cora", "partial", 500,
                                                               ops=90, bytes_moved=700),
              _record("gcn", "cora", "full", 4000, ops=1000, bytes_moved=9000),
              _record("gpt3", "b16", "unfused", 300), _record("gpt3", "b16", "partial", 100),
              _record("gpt3", "b16", "full", None, status="timeout")]
    fig12 = figures.document("fig12", "small", points, 12.0)
    [gcn, gpt3] = fig12["rows"]
    assert gcn["speedup"] == {"partial": 2.0, "full": 0.25}
    assert gcn["published"] == {"partial": 1.63, "full": 0.29}
    assert gpt3["speedup"] == {"partial": 3.0}
    assert fig12["failed"] == ["small/published/gpt3/b16/full"]
    table = figures.markdown(fig12)
    assert "| gcn | cora | synthetic | 1,000 | 2.00× | 0.25× | 1.63× | 0.29× |" in table
    assert "| gpt3 | b16 | synthetic | 300 | 3.00× | timeout | 1.75× | 2.70× |" in table
    fig14 = figures.document("fig14", "small", points, None)
    gcn14 = fig14["rows"][0]
    assert gcn14["flops"] == {"partial": 0.9, "full": 10.0}
    assert gcn14["bytes"] == {"partial": 0.7, "full": 9.0}
    assert "8.50–18.60×" in figures.markdown(fig14)
    paths = figures.write(fig14, tmp_path)
    assert paths["plot"].read_bytes().startswith(b"\x89PNG")
    assert json.loads(paths["json"].read_text())["figure"] == "fig14"
    assert format_reference((None, 1.0)) == "≤ 1.00×" and format_reference(0.019) == "0.019×"


def test_reproduce_command_writes_both_figures(tmp_path, capsys):
    out = tmp_path / "figs"
    argv = ["reproduce", "fig12", "fig14", "--apps", "sae", "--datasets", "imagenet",
            "--out", str(out), "--workers", "1"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "3 points (0 cached" in printed and "Figure 14" in printed
    for name in ("points.json", "fig12.json", "fig12.md", "fig12.png", "fig14.md", "fig14.png"):
        assert (out / name).exists(), name
    assert main(argv) == 0
    assert "3 points (3 cached" in capsys.readouterr().out
    assert main(["reproduce", "fig12", "--apps", "sae", "--datasets", "none"]) == 2
    assert "select nothing" in capsys.readouterr().err

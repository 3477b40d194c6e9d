"""``fuseflow reproduce``: the sweep's points, its resumable cache and worker processes, the
figures beside the published ratios."""

import json
import os
import signal

import pytest

from fuseflow.reproduce import figures, plan, sweep
from fuseflow.reproduce.published import FIG12_SPEEDUP, format_reference
from fuseflow.reproduce.sweep import (
    Cache,
    Point,
    PointResult,
    SweepSettings,
    current_key,
    died,
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
    assert SAE[0].key == "tiny/sae/imagenet/unfused"
    assert sweep_points("tiny", ("sae",), dense_weights=True)[0].key == \
        "tiny/sae/imagenet/unfused/dense"
    # The preset is named once, also at the published preset (not published/published/...).
    assert Point("gcn", "cora", "full", "published").key == "published/gcn/cora/full"
    assert all(p.key.count("published") == 1 for p in published)
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


def test_a_point_alone_on_spare_cores_simulates_its_kernels_in_processes(tmp_path, monkeypatch):
    """The last point of a sweep (or the only one, as a --retry-failed of one point) gets the
    cores no other point uses and forks a process per kernel from its worker process: it
    finishes as in one process (it failed when the worker was daemonic, which may not have
    children)."""
    from fuseflow import runtime

    start = runtime.KernelProcesses.start
    marks = tmp_path / "forked"
    marks.mkdir()

    def recording(self, graph, bound, **options):   # runs in the point's worker process
        kernel = start(self, graph, bound, **options)
        if kernel.process != os.getpid():
            (marks / str(kernel.process)).touch()
        return kernel

    monkeypatch.setattr(runtime, "FORK_MIN_VALUES", 0)        # every kernel in a child
    monkeypatch.setattr(runtime.KernelProcesses, "start", recording)
    [record] = run_sweep(SAE[:1], tmp_path / "sweep", SweepSettings(workers=2))
    assert record["status"] == "ok", record["error"]
    assert len(list(marks.iterdir())) > 1                    # its kernels ran in children
    direct = run_point(SAE[0], SweepSettings())
    assert (record["cycles"], record["ops"]) == (direct.cycles, direct.ops)


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
    assert fig12["failed"] == ["small/gpt3/b16/full"]
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


def _old_cache(folder, records):
    """A ``points.json`` as sweeps wrote it before keys named the preset once."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "points.json").write_text(json.dumps(
        {"schema": sweep.CACHE_SCHEMA, "points": {r["key"]: r for r in records}}))


def test_keys_of_an_older_cache_are_read_in_the_current_form_and_resume(tmp_path):
    assert current_key("published/published/gcn/cora/unfused") == "published/gcn/cora/unfused"
    assert current_key("tiny/dense/sae/imagenet/full") == "tiny/sae/imagenet/full/dense"
    assert current_key("tiny/sae/imagenet/full") == "tiny/sae/imagenet/full"        # current
    assert current_key("tiny/gcn/cora/full/dense") == "tiny/gcn/cora/full/dense"
    settings = SweepSettings()
    records = run_sweep(SAE, tmp_path / "new", settings)
    old = [dict(r, key=r["key"].replace("tiny/", "tiny/published/", 1)) for r in records]
    assert old[0]["key"] == "tiny/published/sae/imagenet/unfused"
    _old_cache(tmp_path / "old", old)
    cache = Cache(tmp_path / "old")
    assert set(cache.points) == {p.key for p in SAE}
    assert all(cache.done(p, retry_failed=True) for p in SAE)
    # Resuming the older folder simulates nothing and gives the records under current keys.
    seen = []
    assert run_sweep(SAE, tmp_path / "old", settings, lambda *a: seen.append(a)) == records
    assert seen == []
    # The next point written rewrites the whole cache under current keys.
    Cache(tmp_path / "old").add(PointResult(**dict(records[0], status="timeout")))
    saved = json.loads((tmp_path / "old" / "points.json").read_text())["points"]
    assert set(saved) == {p.key for p in SAE}
    # So are an older plan's predictions.
    plan.save(tmp_path / "old", 0, {k["key"]: dict(k, status="ok", simulated_tokens=5)
                                    for k in old})
    assert set(plan.load(tmp_path / "old", 0)) == {p.key for p in SAE}


def test_a_killed_or_failing_worker_records_what_happened_and_its_data(tmp_path, monkeypatch):
    point = SAE[:1]
    monkeypatch.setattr(sweep, "run_point", lambda *a: os.kill(os.getpid(), signal.SIGKILL))
    [killed] = run_sweep(point, tmp_path, SweepSettings())
    assert killed["status"] == "killed" and killed["provenance"] == "synthetic"
    assert killed["error"] == "worker killed by SIGKILL (out of memory?)"
    assert not Cache(tmp_path).done(point[0], retry_failed=True)          # --retry-failed

    def boom(*_):
        raise RuntimeError("boom")

    monkeypatch.setattr(sweep, "run_point", boom)
    [failed] = run_sweep(point, tmp_path / "e", SweepSettings())
    assert (failed["status"], failed["error"], failed["provenance"]) == (
        "error", "RuntimeError: boom", "synthetic")
    exited = died(point[0], 3, 1.0)
    assert (exited.status, exited.error, exited.provenance) == (
        "error", "worker died: exit code 3", "synthetic")
    assert died(point[0], -signal.SIGSEGV, 1.0).error == "worker killed by SIGSEGV"
    # The figures name the data and the failure.
    others = [_record("sae", "imagenet", f, c) for f, c in (("partial", 500), ("full", 400))]
    doc = figures.document("fig12", "tiny", [killed, *others], None)
    assert doc["rows"][0]["provenance"] == "synthetic"
    assert doc["failed"] == [killed["key"]]
    assert "| sae | imagenet | synthetic | killed | - | - |" in figures.markdown(doc)


def test_failed_records_of_an_older_cache_get_a_provenance_and_status(tmp_path):
    old = {"key": "published/published/sae/nih_cxr/unfused", "app": "sae",
           "dataset": "nih_cxr", "fusion": "unfused", "preset": "published",
           "dense_weights": False, "status": "error", "provenance": None,
           "error": "worker died: killed (out of memory?)"}
    broken = dict(old, key="published/published/sae/nih_cxr/partial", fusion="partial",
                  error="ValueError: bad")
    _old_cache(tmp_path, [old, broken])
    points = Cache(tmp_path).points
    killed = points["published/sae/nih_cxr/unfused"]
    assert (killed["status"], killed["provenance"], killed["key"]) == (
        "killed", "synthetic", "published/sae/nih_cxr/unfused")
    assert "out of memory" in killed["error"]
    error = points["published/sae/nih_cxr/partial"]
    assert (error["status"], error["error"], error["provenance"]) == (
        "error", "ValueError: bad", "synthetic")


def test_points_of_one_application_share_kernels_through_the_kernel_cache(tmp_path):
    """GPT-3's full fusion reads partial fusion's attention kernels, simulated by another
    worker process, and records how many it read; the figures' numbers do not change."""
    gpt3 = sweep_points("tiny", ("gpt3",))
    shared = SweepSettings(workers=1, kernel_cache=tmp_path / "kernels")
    records = {r["fusion"]: r for r in run_sweep(gpt3, tmp_path / "shared", shared)}
    alone = {r["fusion"]: r for r in run_sweep(gpt3, tmp_path / "alone", SweepSettings(workers=2))}
    assert records["full"]["kernels_cached"] > 0
    assert alone["full"]["kernels_cached"] == 0
    for fusion in records:
        assert records[fusion]["status"] == "ok"
        assert [records[fusion][k] for k in ("cycles", "ops", "bytes_moved", "tokens")] == \
            [alone[fusion][k] for k in ("cycles", "ops", "bytes_moved", "tokens")]
    # the tokens of kernels read from the cache were not simulated
    assert records["full"]["simulated_tokens"] < alone["full"]["simulated_tokens"]


def test_with_a_kernel_cache_points_of_a_running_data_set_wait_their_turn():
    running = [sweep._Running(Point("gpt3", "b16", "partial", "published"), None, None)]
    pending = [Point("gpt3", "b16", "full", "published"), Point("gpt3", "b32", "full", "published")]
    assert sweep.next_point(list(pending), running, shared=True) == pending[1]
    assert sweep.next_point(list(pending), running, shared=False) == pending[0]
    only = [Point("gpt3", "b32", "full", "published")]
    assert sweep.next_point(list(only), running, shared=True) == only[0]

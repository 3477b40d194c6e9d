"""``fuseflow explore`` / ``fuseflow.explore``: plans predicted without emitting IR,
reassociation from the linalg graph, the on-disk cache of simulated points (a sweep killed
half way resumes without re-simulating), and an existing Dask scheduler."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import fuseflow
from fuseflow.apps import APPLICATIONS
from fuseflow.explore.opgraph import program_graph
from fuseflow.explore.plangraph import plan_graph
from fuseflow.explore.reassociate import chains, reassociate
from fuseflow.explore.sweep import Point, PointCache
from fuseflow.sim.loader import load_graph


def _blocks(graph):
    return [(b.name, b.kind, b.inputs, b.outputs, b.attrs) for b in graph.blocks]


@pytest.mark.parametrize("fusion", ["unfused", "full"])
def test_plan_graph_is_the_loaded_graph_of_the_emitted_plan(gcn, fusion):
    compiled = gcn[3].compile(fuseflow.Schedule(fusion=fusion))
    fn = compiled.module.body.operations[0]
    graphs = [op.operation for op in fn.regions[0].blocks[0].operations
              if op.operation.name == "sam.graph"]
    assert len(graphs) == len(compiled.kernels)
    for op, info in zip(graphs, compiled.kernels):
        planned = plan_graph(compiled._plans[info.name], [v.type for v in op.operands])
        loaded = load_graph(op)
        assert _blocks(planned) == _blocks(loaded)
        assert planned.outputs == loaded.outputs


def test_reassociation_flips_the_chain_and_keeps_the_result(gcn):
    model, inputs, _, program = gcn
    found = chains(program.module)
    assert len(found) == 2                      # (A·X)·W1 and (A·H)·W2
    variant = __import__("copy").copy(program)
    variant.module = reassociate(program.module, found[:1])
    graph = program_graph(variant)
    assert "layer1.transform" in graph.units[:1]               # X·W1 first now
    assert graph.preds["layer1.aggregate"] == frozenset({"layer1.transform"})
    result = variant.compile(fuseflow.Schedule(fusion="unfused")).simulate(*inputs)
    torch.testing.assert_close(result.output, model(*inputs), rtol=1e-4, atol=1e-5)
    assert len(chains(variant.module)) == 1      # the other chain is untouched


def test_point_cache_is_atomic_and_keyed(tmp_path):
    cache = PointCache(tmp_path)
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, {"cycles": 5})
    assert cache.get("ab" * 32) == {"cycles": 5}
    assert not list(tmp_path.rglob("*.tmp"))
    assert Point("x", (("a",),)).to_dict()["fusion"] == [["a"]]


def _explore(out: Path, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fuseflow", "explore", "gcn", "-o", str(out),
                             "--workers", "1", "--top", "2", "--orders", "1", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def _simulated_points(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*.json") if "searches" not in p.relative_to(cache).parts]


def test_killed_sweep_resumes_without_resimulating(tmp_path):
    out = tmp_path / "out"
    cache = out / "cache"
    run = _explore(out)
    deadline = time.time() + 600
    done: list = []
    while time.time() < deadline and run.poll() is None:
        done = _simulated_points(cache)
        if done:
            break
        time.sleep(0.005)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    done = _simulated_points(cache)
    assert run.returncode == -signal.SIGKILL, "the sweep finished before it was killed"
    assert done, "nothing was simulated before the kill"
    stamps = {p: p.stat().st_mtime_ns for p in done}
    rerun = _explore(out)
    output = rerun.communicate(timeout=900)[0].decode()
    assert rerun.returncode == 0, output
    doc = json.loads((out / "explore.json").read_text())
    total = len(doc["points"])
    assert len(done) < total
    assert doc["counters"]["cached"] == len(done)
    assert doc["counters"]["simulated"] == total - len(done)
    assert doc["counters"]["search_cached"]        # the killed run saved its search
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())   # not rewritten
    assert (out / "pareto.png").stat().st_size > 0
    # A rerun simulates nothing.
    again = _explore(out)
    assert again.communicate(timeout=900)[0] is not None and again.returncode == 0
    doc = json.loads((out / "explore.json").read_text())
    assert doc["counters"] == {**doc["counters"], "cached": total, "simulated": 0,
                               "search_cached": True}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_explore_on_an_existing_scheduler(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                  "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=env)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                               "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        app = APPLICATIONS["sae"]
        model, inputs = app.build("tiny")
        plan = app.plan(model)
        found = fuseflow.explore(model, inputs, plan, top=2, orders=1, scheduler=address,
                                 cache=tmp_path / "cache")
        assert found.counters["simulated"] == len(found.points) > 0
        cycles = [p["simulated"]["cycles"] for p in found.points]
        assert cycles == sorted(cycles)
        # The explorer compiles the published workload: the plan's declared formats.
        unfused = fuseflow.compile(model, inputs, plan.schedule("unfused"),
                                   plan=plan).simulate(*inputs).cycles
        assert {p["name"]: p["simulated"]["cycles"] for p in found.points}["unfused"] == unfused
    finally:
        for proc in (worker, scheduler):
            proc.terminate()
            proc.wait(timeout=60)


def test_a_saved_search_round_trips_to_the_same_points():
    from fuseflow.explore.evaluate import Cost, Option
    from fuseflow.explore.explorer import Candidate, _candidate, _saved
    from fuseflow.explore.search import Solution

    kernels = (Option(frozenset({"a", "b"}), ("d0", "d1"), Cost(10.5, 4.0, 8.0), 3.0, 16.0),
               Option(frozenset({"c"}), ("d1", "d0"), Cost(5.25, 1.0, 2.0)))
    found = Candidate(Solution(kernels, kernels[0].cost + kernels[1].cost), ("(A·X)·W",),
                      ("a", "b", "c"))
    back = _candidate(json.loads(json.dumps(_saved(found))))
    assert back.point("p") == found.point("p")
    assert back.cost == found.cost and back.fusion == found.fusion
    assert back.solution.kernels == kernels


def test_explore_predict_only_ranks_points_by_the_cost_model(tmp_path):
    """Without simulating (models too large to simulate), every point is compiled and
    predicted: the searched best is predicted no slower than any named configuration."""
    from fuseflow.explore import CostModel, Measured
    from fuseflow.sim.formats import FiberTree

    app = APPLICATIONS["gcn"]
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    found = fuseflow.explore(model, inputs, plan, top=1, orders=1, simulate=False,
                             reassociate_chains=False)
    assert found.counters["predicted"] == len(found.points) == 4
    assert found.counters["simulated"] == 0
    assert all(p["simulated"]["source"] == "cost model" for p in found.points)
    by_name = {p["name"]: p["simulated"]["cycles"] for p in found.points}
    assert by_name["searched-1"] <= min(by_name[n] for n in ("unfused", "partial", "full"))
    # print(found): the ranked table, then the best point's kernels, as plain text
    text = str(found).splitlines()
    assert text[0].split() == ["rank", "point", "kernels", "lanes", "cycles", "vs", "best",
                               "predicted", "vs", "PyTorch", "cached"]
    assert [line.split()[1] for line in text[1:5]] == [p["name"] for p in found.points]
    best = found.best
    assert text[5] == f"best: {best['name']} with {len(best['fusion'])} kernels"
    assert all(text[6 + i].startswith(f"  [{', '.join(group)}]")
               for i, group in enumerate(best["fusion"]))
    compiled = fuseflow.compile(model, inputs, plan.schedule("partial"), plan=plan)
    direct = CostModel(compiled).predict(
        *[Measured(FiberTree.from_torch(t.detach())) for t in inputs]).cycles
    assert by_name["partial"] == pytest.approx(direct)


def test_points_that_share_kernels_simulate_them_once(tmp_path):
    """GPT-3's candidates share kernels (full fusion is partial fusion's attention kernels plus
    one): a point reads what another stored in the kernel cache, with the same cycles."""
    app = APPLICATIONS["gpt3"]
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    found = fuseflow.explore(model, inputs, plan, top=2, orders=1, workers=1,
                             cache=tmp_path / "cache")
    assert 0 < found.counters["kernels_cached"] < found.counters["kernels"]
    simulated = {p["name"]: p["simulated"] for p in found.points}
    read = [name for name, s in simulated.items() if any(k["cached"] for k in s["kernels"])]
    named = set(read) & set(plan.fusion_groups)
    assert named, read
    for name in named:
        direct = fuseflow.compile(model, inputs, plan.schedule(name), plan=plan).simulate(*inputs)
        assert simulated[name]["cycles"] == direct.cycles


def test_explore_without_a_cache_simulates_every_point_and_keeps_nothing(tmp_path):
    """``cache=None`` (the default): points are simulated on Dask, none read from or written
    to disk, and no kernel cache is used."""
    app = APPLICATIONS["sae"]
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    before = set(Path.cwd().iterdir())
    found = fuseflow.explore(model, inputs, plan, top=1, orders=1, workers=1)
    assert found.counters["simulated"] == len(found.points) > 0
    assert found.counters["cached"] == 0 and found.counters["kernels_cached"] == 0
    assert all(p["simulated"]["matches"] for p in found.points)
    assert set(Path.cwd().iterdir()) == before


NO_MAIN_GUARD = """
import fuseflow
from fuseflow.apps import APPLICATIONS
app = APPLICATIONS["sae"]
model, inputs = app.build("tiny")
fuseflow.explore(model, inputs, app.plan(model), top=1, orders=1, workers=1)
"""


def test_a_script_without_a_main_guard_is_told_how_to_call_explore(tmp_path):
    """Dask's worker processes import the calling script first: a script that calls explore
    at its top level cannot start them, and is told so (not just that a nanny failed)."""
    script = tmp_path / "explore_me.py"
    script.write_text(NO_MAIN_GUARD)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert run.returncode != 0
    assert "ClusterError" in run.stderr
    assert 'if __name__ == "__main__":' in run.stderr
    assert "simulate=False" in run.stderr


@pytest.mark.parametrize("kwargs, message", [
    ({"top": -1}, "top (fastest predicted solutions to simulate) must be an int >= 0, got -1"),
    ({"orders": 0}, "orders (legal orders evaluated per candidate group) must be an int >= 1"),
    ({"max_units": 0}, "max_units must be an int >= 1, got 0"),
    ({"workers": 0}, "workers must be an int >= 1, got 0"),
    ({"arch": "small"}, "arch must be a fuseflow.Arch or None, got str"),
    ({"lanes": (0,)}, "lanes must be counts >= 1"),
])
def test_explore_rejects_bad_arguments_naming_them(kwargs, message):
    """Before searching anything: a negative ``top`` would slice the ranking from the end and
    ``orders=0`` would find no point at all, silently."""
    from fuseflow.errors import ArgumentError

    app = APPLICATIONS["gcn"]
    model, inputs = app.build("tiny")
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fuseflow.explore(model, inputs, app.plan(model), simulate=False, **kwargs)


def test_points_that_do_not_compile_are_reported_and_the_rest_ranked():
    """GCN with a BSR adjacency: its tiled kernels are searched (a tile shape a kernel cannot
    take is left out of the search), but the named partial and full configurations fuse a
    ReLU and a softmax into the tiled aggregation, which the lowering does not support yet.
    Those points fail with the compiler's error, as a failed simulation does; the others
    are predicted and ranked."""
    app = APPLICATIONS["gcn"]
    model, inputs = app.build("tiny")
    found = fuseflow.explore(model, inputs, app.plan(model), top=2, orders=1,
                             formats={"adjacency": "bsr:2"}, blocks=((), (2, 2)),
                             simulate=False)
    failed = dict(found.failures())
    assert set(failed) == {"partial", "full"}
    assert all(error.startswith("CompileError: ") and "not supported yet" in error
               for error in failed.values())
    assert found.counters["failed"] == 2
    assert found.counters["predicted"] == len(found.points) - 2
    assert found.best["name"] == "searched-1" and found.best["simulated"]["cycles"] > 0
    assert any(found.best["blocks"].values())       # the best tiles some kernel
    table = str(found)
    assert "failed: partial: CompileError" in table and "failed: full: CompileError" in table


BLOCKED = {"fusion": "unfused", "formats": {"adjacency": "bsr:2"},
           "kernels": {"g4:layer2.aggregate": {"block": (2, 2)}}}


def test_plan_graph_of_a_kernel_on_tiles_is_the_loaded_graph(gcn):
    """Tiles included: the blocks of a kernel whose values are 2x2 tiles carry the tile
    shapes (``tiles``) the loader gives them, which the cost model prices them by."""
    compiled = gcn[3].compile(fuseflow.Schedule(**BLOCKED))
    fn = compiled.module.body.operations[0]
    graphs = [op.operation for op in fn.regions[0].blocks[0].operations
              if op.operation.name == "sam.graph"]
    tiled = 0
    for op, info in zip(graphs, compiled.kernels):
        planned = plan_graph(compiled._plans[info.name], [v.type for v in op.operands])
        assert _blocks(planned) == _blocks(load_graph(op))
        tiled += any("tiles" in b.attrs for b in planned.blocks)
    assert tiled == 1


def test_a_blocked_adjacency_is_predicted_near_the_simulator(gcn):
    """GCN with a 2x2-block adjacency: the accumulator of layer 1's aggregation merges fibers
    that cover their whole 2-coordinate level (keys held by a tenth of a coordinate on
    average were counted as held by every fiber: 8x the cycles), and layer 2's aggregation
    on tiles is priced by its tile blocks (it was predicted at half its cycles) and its ops
    and bytes counted per element, as the simulator counts them (they were per tile). Layer
    1's aggregation stores the zeros of the blocks times one-hot rows: each key merges one
    value, so its nonzero fraction stays that of the values (it was taken as merging the
    fiber's two, and the transform reading the result converted to CSR, nonzeros only, saw
    1.6 times its entries)."""
    from fuseflow.explore import CostModel

    model, inputs, _, program = gcn
    compiled = program.compile(fuseflow.Schedule(**BLOCKED))
    simulated = compiled.simulate(*inputs)
    predicted = CostModel(compiled).predict(*inputs)
    by_name = {k.name: k for k in predicted.kernels}
    for run in simulated.run.kernels:
        want = run.result.summary()
        got = by_name[run.name].summary()
        if run.name in ("g0:layer1.aggregate", "g4:layer2.aggregate"):
            assert got["cycles"] == pytest.approx(want["cycles"], rel=0.05), run.name
            assert got["tokens"] == pytest.approx(want["tokens"], rel=0.05), run.name
            assert got["ops"] == pytest.approx(want["ops"], rel=1e-9), run.name
            assert got["bytes_read"] == pytest.approx(want["bytes_read"], rel=1e-9), run.name
        if run.name == "g4:layer2.aggregate":         # the scans and writes are exact
            assert got["bytes_written"] == pytest.approx(want["bytes_written"], rel=1e-9)
        if run.name == "g1:layer1.transform":
            assert got["ops"] == pytest.approx(want["ops"], rel=0.1)
    assert predicted.cycles == pytest.approx(simulated.cycles, rel=0.05)

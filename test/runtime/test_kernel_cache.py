"""Kernel results kept by content (``fuseflow.KernelCache``): a kernel simulated before on the
same inputs, engine and architecture is read instead of simulated, with the same outputs,
cycles and statistics; anything that could change a result changes the key."""

import json
import pickle

import numpy as np
import pytest
import torch

import fuseflow
from fuseflow import kernel_cache
from fuseflow.apps import get_application
from fuseflow.errors import ArgumentError
from fuseflow.tools.cli import main


@pytest.fixture(scope="module")
def gpt3():
    app = get_application("gpt3")
    model, inputs = app.build("tiny", "b4", 0)
    plan = app.plan(model)
    program = fuseflow.Program(model, inputs, plan=plan)
    with torch.no_grad():
        compiled = {f: program.compile(plan.schedule(f)) for f in ("partial", "full")}
    return compiled, inputs


def _same(a, b) -> None:
    """Same outputs (bit for bit), cycles and per-kernel statistics."""
    assert all(torch.equal(x, y) for x, y in zip(a.outputs, b.outputs))
    assert a.cycles == b.cycles
    for ka, kb in zip(a.run.kernels, b.run.kernels):
        assert ka.result.cycles == kb.result.cycles
        assert {n: s.to_dict() for n, s in ka.result.blocks.items()} == \
            {n: s.to_dict() for n, s in kb.result.blocks.items()}


def test_a_configuration_reads_the_kernels_another_simulated(gpt3, tmp_path):
    """GPT-3's full fusion runs partial fusion's attention kernels: simulated once."""
    compiled, inputs = gpt3
    cache = fuseflow.KernelCache(tmp_path)
    partial = compiled["partial"].simulate(*inputs, kernel_cache=cache)
    assert not any(k.cached for k in partial.run.kernels)
    assert cache.stats.stored == len(partial.run.kernels)
    full = compiled["full"].simulate(*inputs, kernel_cache=cache)
    reused = [k.name for k in full.run.kernels if k.cached]
    assert any("attn.scores" in name for name in reused)
    assert len(reused) < len(full.run.kernels)  # the kernel fusing across layers is new
    _same(full, compiled["full"].simulate(*inputs))
    # Read back entirely, with the same results; a folder path works like the object.
    again = compiled["partial"].simulate(*inputs, kernel_cache=str(tmp_path))
    assert all(k.cached for k in again.run.kernels)
    _same(again, partial)


def test_inputs_engine_and_architecture_are_part_of_the_key(gpt3, tmp_path):
    compiled, inputs = gpt3
    cache = fuseflow.KernelCache(tmp_path)
    compiled["partial"].simulate(*inputs, kernel_cache=cache)
    other = [inputs[0] + 1.0, *inputs[1:]]
    run = compiled["partial"].simulate(*other, kernel_cache=cache)
    assert not run.run.kernels[0].cached
    _same(run, compiled["partial"].simulate(*other))
    slow = fuseflow.Arch(initiation_interval=2)
    run = compiled["partial"].simulate(*inputs, kernel_cache=cache, arch=slow)
    assert not any(k.cached for k in run.run.kernels)
    assert run.cycles == compiled["partial"].simulate(*inputs, arch=slow).cycles
    run = compiled["partial"].simulate(*inputs, kernel_cache=cache, engine="reference")
    assert not any(k.cached for k in run.run.kernels)


def test_the_key_ignores_names_and_locations_but_not_attributes(gpt3):
    compiled, inputs = gpt3
    from fuseflow.sim.formats import FiberTree
    from fuseflow.sim.graph import BlockGraph, Block
    from fuseflow.sim.loader import load_graph

    op = next(op for op in compiled["partial"].module.body.operations[0].regions[0].blocks[0]
              .operations if op.operation.name == "sam.graph")
    graph = load_graph(op.operation)
    trees = [FiberTree.from_torch(inputs[0])]
    cache = fuseflow.KernelCache("unused")
    key = cache.key(graph, trees, engine="fast", arch=fuseflow.Arch())
    renamed = BlockGraph([Block(b.name, b.kind, b.inputs, b.outputs, dict(b.attrs), "elsewhere")
                          for b in graph.blocks], graph.outputs, "another name")
    assert cache.key(renamed, trees, engine="fast", arch=fuseflow.Arch()) == key
    changed = next(b for b in renamed.blocks if b.attrs)
    name = sorted(changed.attrs)[0]
    changed.attrs[name] = ("changed", changed.attrs[name])
    assert cache.key(renamed, trees, engine="fast", arch=fuseflow.Arch()) != key


def test_kernels_simulated_in_forked_processes_are_stored_and_read(gpt3, tmp_path, monkeypatch):
    from fuseflow import runtime

    monkeypatch.setattr(runtime, "FORK_MIN_VALUES", 0)
    compiled, inputs = gpt3
    first = compiled["partial"].simulate(*inputs, workers=2, kernel_cache=tmp_path)
    assert len(list(tmp_path.rglob("*.pkl"))) == len(first.run.kernels)
    again = compiled["partial"].simulate(*inputs, workers=2, kernel_cache=tmp_path)
    assert all(k.cached for k in again.run.kernels)
    _same(again, first)


def test_an_unreadable_entry_is_simulated_again_and_replaced(gpt3, tmp_path, caplog):
    compiled, inputs = gpt3
    first = compiled["partial"].simulate(*inputs, kernel_cache=tmp_path)
    broken = sorted(tmp_path.rglob("*.pkl"))[0]
    broken.write_bytes(b"not a pickle")
    run = compiled["partial"].simulate(*inputs, kernel_cache=tmp_path)
    assert sum(not k.cached for k in run.run.kernels) == 1
    assert "unreadable" in caplog.text
    _same(run, first)
    assert pickle.loads(broken.read_bytes()).cycles in {k.result.cycles for k in run.run.kernels}


def test_a_result_over_the_size_limit_is_not_stored(gpt3, tmp_path):
    compiled, inputs = gpt3
    cache = fuseflow.KernelCache(tmp_path, max_bytes=1)
    compiled["partial"].simulate(*inputs, kernel_cache=cache)
    assert cache.stats.stored == 0 and cache.stats.too_large > 0
    assert not list(tmp_path.rglob("*.pkl"))


def test_traced_runs_are_not_cached(gpt3, tmp_path):
    compiled, inputs = gpt3
    compiled["partial"].simulate(*inputs, kernel_cache=tmp_path, trace=True)
    assert not list(tmp_path.rglob("*.pkl"))


def test_a_cache_that_cannot_be_written_does_not_fail_the_simulation(gpt3, tmp_path, caplog):
    compiled, inputs = gpt3
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    run = compiled["partial"].simulate(*inputs, kernel_cache=blocker)
    assert "cannot store" in caplog.text
    _same(run, compiled["partial"].simulate(*inputs))


def test_a_wrong_kernel_cache_argument_names_the_valid_choices(gpt3):
    compiled, inputs = gpt3
    with pytest.raises(ArgumentError, match="kernel_cache must be a folder"):
        compiled["partial"].simulate(*inputs, kernel_cache=3)


def test_inputs_that_differ_only_in_one_array_entry_have_different_keys():
    from fuseflow.sim.formats import FiberTree

    a = torch.zeros(4, 4)
    b = a.clone()
    b[3, 3] = 1e-30
    keys = {kernel_cache.KernelCache("unused").key(_EMPTY_GRAPH, [FiberTree.from_torch(t)],
                                                   engine="fast", arch=fuseflow.Arch())
            for t in (a, b, a.to_sparse_csr())}
    assert len(keys) == 3


def _empty_graph():
    from fuseflow.sim.graph import BlockGraph

    return BlockGraph([], [])


_EMPTY_GRAPH = _empty_graph()


def test_fuseflow_run_reports_the_kernels_it_read(tmp_path, capsys):
    folder = tmp_path / "kernels"
    out = tmp_path / "run.json"
    args = ["run", "gpt3", "--fusion", "all", "--kernel-cache", str(folder), "--json", str(out)]
    assert main(args) == 0
    first = json.loads(out.read_text())["runs"]
    full = next(r for r in first if r["configuration"] == "full")
    assert any(k["cached"] for k in full["kernels"])
    assert main(args) == 0
    assert "0 simulated" in capsys.readouterr().out
    second = json.loads(out.read_text())["runs"]
    assert [r["cycles"] for r in second] == [r["cycles"] for r in first]
    assert all(k["cached"] for r in second for k in r["kernels"])


def test_fuseflow_run_rejects_a_kernel_cache_that_is_a_file(tmp_path, capsys):
    path = tmp_path / "file"
    path.write_text("")
    assert main(["run", "gpt3", "--kernel-cache", str(path)]) == 2
    assert "--kernel-cache" in capsys.readouterr().err


def test_hashing_reads_every_byte_of_a_strided_array():
    h1, h2 = (kernel_cache.hashlib.blake2b() for _ in range(2))
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    kernel_cache._hash_array(h1, a[:, ::2])
    kernel_cache._hash_array(h2, np.ascontiguousarray(a[:, ::2]))
    assert h1.digest() == h2.digest()


def test_an_extrapolated_run_counts_the_tokens_both_models_read_from_the_cache(tmp_path):
    """GPT-3 full fusion simulates the 1- and the 2-decoder models; after partial fusion, both
    read attention kernels, whose tokens the extrapolation records as not simulated."""
    from fuseflow.apps.layers import Extrapolation
    from fuseflow.reproduce.sweep import _NoSteps
    from fuseflow.tools.execute import Settings, run_application

    app = get_application("gpt3")
    one, two = (app.build("tiny", layers=n) for n in (1, 2))
    settings = Settings("fast", fuseflow.Arch(), 0, 1e-4, 1e-5, kernel_cache=tmp_path)
    runs = {level: run_application(app, *one, "b4", "tiny", (level,), {}, settings, _NoSteps(),
                                   extrapolation=Extrapolation("decoder", 4), deeper=two)[0].run
            for level in ("partial", "full")}
    full = runs["full"]
    assert full.extrapolation["simulated"] == [1, 2]
    read = [k["summary"]["tokens"] for k in full.kernels if k["cached"]]
    assert full.extrapolation["cached_tokens"] > sum(read) > 0  # the 1-decoder model's too
    assert "cached_tokens" not in runs["partial"].extrapolation
    plain = run_application(app, *one, "b4", "tiny", ("full",), {},
                            Settings("fast", fuseflow.Arch(), 0, 1e-4, 1e-5), _NoSteps(),
                            extrapolation=Extrapolation("decoder", 4), deeper=two)[0].run
    assert (full.cycles, full.totals) == (plain.cycles, plain.totals)


def test_another_simulator_source_never_reads_these_results(monkeypatch):
    """The key holds a hash of the simulator's source as this process loaded it."""
    cache = kernel_cache.KernelCache("unused")
    key = cache.key(_EMPTY_GRAPH, [], engine="fast", arch=fuseflow.Arch())
    assert kernel_cache._FINGERPRINT == kernel_cache._fingerprint_sources()
    monkeypatch.setattr(kernel_cache, "_FINGERPRINT", "an edited engine")
    assert cache.key(_EMPTY_GRAPH, [], engine="fast", arch=fuseflow.Arch()) != key


def test_no_architecture_is_the_default_one():
    cache = kernel_cache.KernelCache("unused")
    assert cache.key(_EMPTY_GRAPH, [], engine="fast", arch=None) == \
        cache.key(_EMPTY_GRAPH, [], engine="fast", arch=fuseflow.Arch())

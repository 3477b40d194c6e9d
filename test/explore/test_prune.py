"""Pruning before simulation: dominated candidates are dropped with an explanation; on the
applications (tiny) the best configuration by simulation is never pruned, and GCN and
GraphSAGE full fusion are pruned on every data set from predictions alone."""

import warnings

import pytest

import fuseflow
from fuseflow.apps import APPLICATIONS
from fuseflow.apps.graph_inputs import GRAPH_DATASETS
from fuseflow.explore import CostModel
from fuseflow.explore.prediction import BlockPrediction, KernelPrediction, Prediction
from fuseflow.explore.prune import prune

warnings.filterwarnings("ignore")


def _prediction(cycles, bytes_read, ops):
    block = BlockPrediction("b", "alu", cycles=cycles, val_reads=bytes_read / 4, ops=ops)
    return Prediction([KernelPrediction("k", {"b": block}, [], [])])


def test_dominated_candidate_is_pruned_with_its_reasons():
    decisions = {d.name: d for d in prune({
        "fast": _prediction(100, 400, 10), "slow": _prediction(200, 800, 40),
        "lean": _prediction(150, 100, 10)})}
    assert decisions["fast"].kept and decisions["lean"].kept   # lean moves fewer bytes
    slow = decisions["slow"]
    assert not slow.kept and slow.dominated_by == "fast"
    assert slow.recomputation == 4.0
    assert "200 cycles" in slow.reason and "2.00x faster" in slow.reason


def test_margin_keeps_candidates_within_the_model_error():
    decisions = prune({"a": _prediction(100, 400, 10), "b": _prediction(110, 400, 10)}, margin=0.2)
    assert all(d.kept for d in decisions)
    with pytest.raises(ValueError, match="at least one"):
        prune({})


@pytest.fixture(scope="module")
def compiled_apps():
    """(application, data set) -> every fusion configuration compiled, and the inputs."""
    return {}


def _configurations(cache, name, dataset, simulate):
    """Predictions (and, with ``simulate``, simulated cycles) of every fusion configuration."""
    app = APPLICATIONS[name]
    key = (name, dataset or app.default_datasets["tiny"])
    if key not in cache:
        model, inputs = app.build("tiny", key[1])
        plan = app.plan(model)
        compiled = {level: fuseflow.compile(model, inputs, fuseflow.Schedule(fusion=level),
                                            plan=plan) for level in plan.fusion_groups}
        cache[key] = (compiled, inputs)
    compiled, inputs = cache[key]
    preds = {level: CostModel(c).predict(*inputs) for level, c in compiled.items()}
    cycles = {level: c.simulate(*inputs, engine="fast").cycles
              for level, c in compiled.items()} if simulate else None
    return preds, cycles


@pytest.mark.parametrize("name", ["gcn", "graphsage"])
@pytest.mark.parametrize("dataset", GRAPH_DATASETS)
def test_gnn_full_fusion_is_pruned_without_simulating(compiled_apps, name, dataset):
    preds, _ = _configurations(compiled_apps, name, dataset, simulate=False)
    full = next(d for d in prune(preds) if d.name == "full")
    assert not full.kept, full.reason
    assert full.recomputation > 2.0


@pytest.mark.parametrize("name", ["sae", "gcn", "graphsage"])
def test_best_configuration_by_simulation_is_never_pruned(compiled_apps, name):
    preds, cycles = _configurations(compiled_apps, name, None, simulate=True)
    best = min(cycles, key=cycles.get)
    kept = {d.name for d in prune(preds) if d.kept}
    assert best in kept

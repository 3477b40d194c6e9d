"""Reassociation inside one search (:mod:`fuseflow.explore.joint`): on GCN tiny (two chains,
four associations) the joint search returns the front and optimum of the per-variant
searches merged, and of exhaustive enumeration of every variant, while evaluating shared
candidate kernels once."""

import pytest

from fuseflow.explore.evaluate import KernelEvaluator, pareto
from fuseflow.explore.explorer import MAX_CHAINS, search_variants, variants
from fuseflow.explore.joint import joint_graph
from fuseflow.explore.reassociate import chains
from fuseflow.explore.search import exhaustive


def _costs(front):
    return sorted(c.cost.as_tuple() for c in front)


@pytest.fixture(scope="module")
def searched(gcn):
    _, inputs, plan, program = gcn           # GCN tiny (conftest.py)
    return {joint: search_variants(program, inputs, orders=3, joint=joint,
                                   formats=plan.formats()) for joint in (True, False)}


def test_joint_search_equals_the_per_variant_searches(searched):
    (joint, stats), (merged, per_variant) = searched[True], searched[False]
    assert len(per_variant) == 4                   # 2 chains: 4 associations
    assert _costs(joint) == _costs(merged)
    assert joint[0].cost.cycles == min(c.cost.cycles for c in merged)
    assert {(c.solution.key(), c.reassociated) for c in joint} == \
        {(c.solution.key(), c.reassociated) for c in merged}
    # Shared candidate kernels are evaluated once: fewer than the variants evaluate.
    assert stats[0]["joint"] and stats[0]["candidates"] < \
        sum(s["candidates"] for s in per_variant)
    assert stats[0]["joint_units"] == 8 + 4        # each chain's two units, both ways


def test_joint_search_equals_exhaustive_enumeration_of_every_variant(gcn, searched):
    _, inputs, plan, program = gcn
    everything, first = [], None
    for _, variant in variants(program):
        from fuseflow.explore.opgraph import program_graph

        graph = program_graph(variant)
        evaluator = KernelEvaluator(variant, inputs, orders=3, formats=plan.formats())
        if first is None:
            first = evaluator
        else:
            evaluator.share_with(first)
        groups = graph.groups()
        evaluator.graph = graph
        evaluator.baseline(graph.units)
        evaluator.evaluate(groups, graph.units)
        everything += exhaustive(graph, {g: evaluator.options(g) for g in groups})
    assert _costs(searched[True][0]) == _costs(pareto(everything))


def test_joint_graph_names_chain_units_per_association(gcn):
    *_, program = gcn
    found = chains(program.module)[:MAX_CHAINS]
    jg = joint_graph(program, found, list(variants(program)))
    assert len(found) == 2 and jg.size == 8
    held = sorted(u for u in jg.units if "@" in u)
    assert len(held) == 8
    # A unit reading a chain's result depends on the unit computing it in each association.
    bias = "layer1.bias"
    preds = {frozenset(jg.preds[v][bias]) for v in range(len(jg.variants))}
    assert len(preds) == 2
    # A cut cannot hold one chain both ways.
    both = [u for u in jg.units if u.startswith("layer1.aggregate@")]
    assert jg.fixed(both) is None

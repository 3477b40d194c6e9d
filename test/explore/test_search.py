"""The fusion search (FFM join of Pareto partial solutions) against exhaustive enumeration,
at tiny sizes, scored by the cost model: GCN (8 units) and one GPT-3 decoder (18 units)."""

import pytest

import fuseflow
from fuseflow.explore.evaluate import ZERO, Cost, KernelEvaluator, Option, pareto
from fuseflow.explore.opgraph import OpGraph, program_graph
from fuseflow.explore.scaling import gpt3_decoders
from fuseflow.explore.search import count_space, exhaustive, join, search


def _searched(program, inputs, orders):
    graph = program_graph(program)
    evaluator = KernelEvaluator(program, inputs, orders=orders)
    return graph, evaluator, search(graph, evaluator)


@pytest.fixture(scope="module")
def gcn(gcn):
    """GCN tiny (conftest.py) searched."""
    _, inputs, _, program = gcn
    return _searched(program, inputs, orders=3)


@pytest.fixture(scope="module")
def decoder():
    model, inputs, plan = gpt3_decoders(1)
    return _searched(fuseflow.Program(model, inputs, plan), inputs, orders=2)


def _costs(front):
    return sorted(s.cost.as_tuple() for s in front)


@pytest.mark.parametrize("case", ["gcn", "decoder"])
def test_search_equals_exhaustive_enumeration(case, request):
    graph, evaluator, result = request.getfixturevalue(case)
    assert len(graph) == {"gcn": 8, "decoder": 18}[case]
    options = {g: evaluator.options(g) for g in graph.groups()}
    everything = exhaustive(graph, options)
    assert _costs(result.front) == _costs(everything)
    fastest = min(everything, key=lambda s: s.cost.cycles)
    assert result.best.cost.cycles == fastest.cost.cycles
    # Each candidate kernel was evaluated once: as many predictions as options.
    assert evaluator.evaluated == sum(len(o) for o in options.values())
    assert result.candidates < result.space


def test_best_partition_covers_every_unit_once(gcn):
    graph, _, result = gcn
    for solution in result.front:
        units = [u for group in solution.fusion(graph.units) for u in group]
        assert sorted(units) == sorted(graph.units)
        assert graph.is_acyclic([frozenset(g) for g in solution.groups])


def test_decoder_attention_is_not_fused_with_its_projection(decoder):
    """The fastest decoder keeps attention apart from the QKV projection (its product
    would be recomputed per score), as the published partial configuration does."""
    graph, _, result = decoder
    groups = result.best.fusion(graph.units)
    qkv = next(g for g in groups if "layers.0.attn.qkv_matmul" in g)
    assert "layers.0.attn.scores" not in qkv


def _chain(n):
    units = [f"u{i}" for i in range(n)]
    return OpGraph(units, {u: frozenset([units[i - 1]]) if i else frozenset()
                           for i, u in enumerate(units)})


def test_convex_groups_of_a_diamond_include_non_contiguous_ones():
    #   a -> b -> d, a -> c -> d: {b, c} is convex (no path between them) but not
    #   contiguous in program order a, b, c, d only if connected groups are not required.
    g = OpGraph(["a", "b", "c", "d"], {"a": frozenset(), "b": frozenset("a"),
                                       "c": frozenset("a"), "d": frozenset("bc")})
    groups = set(g.groups())
    assert frozenset("abd") not in groups          # c leaves and re-enters: not convex
    assert frozenset("abcd") in groups and frozenset("bcd") in groups
    assert frozenset("bc") in set(g.groups(connected=False))
    assert not g.is_acyclic([frozenset("ad")])


def test_join_keeps_the_pareto_front_with_a_max_objective():
    graph = _chain(3)
    u0, u1, u2 = (frozenset([u]) for u in graph.units)
    from fuseflow.explore.evaluate import Option

    def opt(group, cycles, buffer, mat):
        return [Option(group, ("d0",), Cost(cycles, buffer, mat))]

    options = {u0: opt(u0, 10, 5, 1), u1: opt(u1, 10, 1, 1), u2: opt(u2, 10, 1, 1),
               u0 | u1: opt(u0 | u1, 15, 8, 0), u1 | u2: opt(u1 | u2, 25, 1, 0),
               u0 | u1 | u2: opt(u0 | u1 | u2, 50, 1, 0)}
    result_front = exhaustive(graph, options)
    from fuseflow.explore.search import join

    front, _ = join(graph, options)
    assert _costs(front) == _costs(result_front)
    # Unfused: 30 cycles, buffer max(5, 1, 1) = 5, 3 bytes, 1 lane.
    assert (30, 5, 3, 1) in _costs(front)
    assert count_space(graph, options) == 4
    assert [s.cost for s in pareto(front)] == [s.cost for s in front]


def test_lanes_are_an_objective_so_more_lanes_do_not_dominate():
    """A kernel forked into 4 lanes is faster but uses more lanes: both stay on the front,
    and a partition's lanes are its widest kernel's."""
    graph = _chain(2)
    u0, u1 = (frozenset([u]) for u in graph.units)
    from fuseflow.explore.evaluate import Option
    from fuseflow.explore.search import join

    options = {u0: [Option(u0, ("d0",), Cost(40, 1, 1)),
                    Option(u0, ("d0",), Cost(12, 4, 1, 4.0), parallel=(("d0", 4),))],
               u1: [Option(u1, ("d0",), Cost(10, 1, 1)),
                    Option(u1, ("d0",), Cost(6, 2, 1, 2.0), parallel=(("d0", 2),))]}
    front, _ = join(graph, options)
    assert _costs(front) == _costs(exhaustive(graph, options))
    costs = _costs(front)
    assert (50, 1, 2, 1) in costs and (18, 4, 2, 4) in costs and (46, 2, 2, 2) in costs
    assert (22, 4, 2, 4) not in costs          # dominated by (18, 4, 2, 4)


def test_decoder_layers_share_analyses_and_plans_with_the_same_costs():
    """Structurally identical kernels (one per decoder layer; their bodies' ops may be in
    another order) are read and planned once, and one with the same input statistics as
    an isomorphic kernel takes its prediction; every candidate (forked ones too) keeps the
    cost of planning and predicting it on its own."""
    from fuseflow.explore.axes import default_axes

    model, inputs, plan = gpt3_decoders(3)
    program = fuseflow.Program(model, inputs, plan)
    graph = program_graph(program)
    groups = graph.groups(max_units=2)
    found = {}
    reused = {}
    for share in (True, False):
        evaluator = KernelEvaluator(program, inputs, orders=2, share=share,
                                    axes=default_axes(2, (1, 2)))
        evaluator.graph = graph
        evaluator.baseline(graph.units)
        # Layers 0 and 1 first: layer 2's kernels then match theirs by text, unread.
        evaluator.evaluate([g for g in groups if not _in_layer(g, 2)], graph.units)
        read = evaluator.read
        evaluator.evaluate(groups, graph.units)
        if share:
            assert evaluator.read == read
        found[share] = ({g: [(o.order, o.parallel, o.cost, o.ops, o.bytes_read)
                             for o in evaluator.options(g)] for g in groups},
                        evaluator.analyzed)
        reused[share] = evaluator.reused
    assert found[True][0] == found[False][0]
    # Layer 2 reads what layer 1 does (layer 0 reads the model's input): its candidates
    # are not predicted again.
    layer2 = sum(len(found[True][0][g]) for g in groups if _in_layer(g, 2))
    assert reused[False] == 0 and reused[True] >= layer2 > 0
    lowered = sum(1 for g in groups if found[True][0][g])
    assert found[False][1] == lowered
    # Layer 1 repeats layer 0: only groups crossing the boundary are new structures.
    layer0 = [g for g in groups if all(u.startswith("layers.0.") for u in g)
              and found[True][0][g]]
    assert found[True][1] <= len(layer0) < found[False][1]


def _in_layer(group, layer):
    return all(u.startswith(f"layers.{layer}.") for u in group)


def test_statistics_keys_are_exact():
    """The prediction cache's key of input statistics: equal for statistics measured twice
    from equal data, different when any count or measured array differs (-0.0 vs 0.0
    too)."""
    import dataclasses

    import numpy as np

    from fuseflow.explore.evaluate import stats_key
    from fuseflow.explore.stats import TensorStats
    from fuseflow.sim.formats import TensorFormat

    csr = TensorFormat.csr((2, 3))
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    one, two = TensorStats.measure(a, csr), TensorStats.measure(a.copy(), csr)
    assert one is not two and stats_key(one) == stats_key(two)
    b = a.copy()
    b[1, 0] = 4.0                                  # one more nonzero in row 1
    assert stats_key(TensorStats.measure(b, csr)) != stats_key(one)
    c = a[:, [2, 1, 0]]                            # same counts, other columns
    assert stats_key(TensorStats.measure(c, csr)) != stats_key(one)
    assert stats_key(TensorStats.measure(a)) != stats_key(one)      # dense format
    assert (stats_key(dataclasses.replace(one, nonzeros=-0.0))
            != stats_key(dataclasses.replace(one, nonzeros=0.0)))
    hash(stats_key(one))


def test_front_rows_equal_pareto_on_ties_and_duplicates():
    """The array front (the join's) keeps the rows pareto() keeps: the same costs, the
    first of equal ones, in the same order; across block boundaries too."""
    import numpy as np

    from fuseflow.explore.search import front_rows

    rng = np.random.default_rng(0)
    for n, block in ((1, 4), (7, 4), (300, 16), (2000, 512)):
        rows = np.column_stack([rng.integers(0, 12, n), rng.integers(0, 4, n),
                                rng.integers(0, 6, n), rng.choice([1.0, 2.0, 4.0], n)])
        rows = rows.astype(float)
        items = [(i, Cost(*map(float, r))) for i, r in enumerate(rows)]
        expected = [i for i, _ in pareto(items, key=lambda x: x[1])]
        assert front_rows(rows, block=block).tolist() == expected


def test_join_rebuilds_kernels_and_costs_of_each_solution():
    """Every solution of the join's front is its kernels' costs summed (max for buffer and
    lanes), its kernels covering every unit once in a dependence order."""
    graph = _chain(5)
    u = graph.units
    options = {}
    for i in range(5):
        for j in range(i + 1, min(i + 3, 5) + 1):
            group = frozenset(u[i:j])
            options[group] = [Option(group, (f"d{k}",),
                                     Cost(10.0 * (j - i) ** 0.5 + k, float(j - i + k),
                                          float(5 - j + k), float(1 + k)))
                              for k in range(2)]
    front, _ = join(graph, options)
    assert _costs(front) == _costs(exhaustive(graph, options))
    for sol in front:
        total = ZERO
        for kernel in sol.kernels:
            total = total + kernel.cost
        assert total == sol.cost
        covered = [x for kernel in sol.kernels for x in sorted(kernel.group)]
        assert sorted(covered) == sorted(u)
        assert [min(graph.position[x] for x in k.group) for k in sol.kernels] == sorted(
            min(graph.position[x] for x in k.group) for k in sol.kernels)


_KERNEL = """
^bb0(%arg4: tensor<4xf32>, %arg5: tensor<4xf32>):
  %c = arith.constant 2.0 : f32
  %1 = linalg.generic ins(%arg4 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.mulf %in, %c : f32
    linalg.yield %9 : f32
  } -> tensor<4xf32>
  %2 = linalg.generic ins(%arg5 : tensor<4xf32>) {
  ^bb0(%in_0: f32, %out: f32):
    linalg.yield %in_0 : f32
  } -> tensor<4xf32>
  %3 = arith.addf %1, %2 : tensor<4xf32>
  gpu.yield %3, %1 : tensor<4xf32>, tensor<4xf32>
}) {name = ""} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)"""


def test_canonical_kernel_text_ignores_op_order_and_value_numbers():
    """Kernels differing in the order of independent ops and in the printer's value numbers
    have one canonical text; rewiring an operand or swapping results changes it."""
    from fuseflow.explore.evaluate import canonical_body

    base = canonical_body(_KERNEL)
    assert base is not None
    lines = _KERNEL.split("\n")
    # The two generics swapped (independent), values renumbered.
    moved = "\n".join(lines[:3] + lines[8:12] + lines[3:8] + lines[12:])
    moved = moved.replace("%1", "%7").replace("%2", "%1").replace("%7", "%2")
    moved = moved.replace("%arg4", "%arg9").replace("%9", "%11")
    assert moved != _KERNEL and canonical_body(moved) == base
    assert canonical_body(_KERNEL.replace("ins(%arg4", "ins(%arg5", 1)) != base
    assert canonical_body(_KERNEL.replace("gpu.yield %3, %1", "gpu.yield %1, %3")) != base
    assert canonical_body(_KERNEL.replace("%3 = arith.addf %1, %2",
                                          "%3 = arith.addf %2, %1")) != base
    assert canonical_body("not a kernel") is None

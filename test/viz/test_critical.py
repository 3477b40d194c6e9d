"""The critical path: the chain of last-finishing producers and each block's added cycles."""

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.viz.critical import critical_path


def _graph(edges: dict[str, tuple[str, ...]]) -> BlockGraph:
    """Blocks named by ``edges`` keys, each reading one channel from each listed producer."""
    blocks = []
    for name, preds in edges.items():
        outs = tuple(f"{name}>{c}" for c, ps in edges.items() if name in ps)
        blocks.append(Block(name, "broadcast", tuple(f"{p}>{name}" for p in preds), outs))
    return BlockGraph(blocks, [])


def test_path_follows_the_latest_producer():
    graph = _graph({"a": (), "b": ("a",), "c": ("a",), "d": ("b", "c")})
    path = critical_path(graph, {"a": 2, "b": 10, "c": 30, "d": 33})
    assert path.blocks == ("a", "c", "d")
    assert path.contribution == {"a": 2, "c": 28, "d": 3}
    assert path.cycles == 33
    assert path.share("c") == 28 / 33 and path.share("b") == 0.0


def test_a_producer_finishing_after_its_consumer_adds_nothing():
    graph = _graph({"a": (), "b": ("a",)})
    path = critical_path(graph, {"a": 9, "b": 5})
    assert path.blocks == ("a",)          # a finishes last: the path ends there
    path = critical_path(_graph({"a": (), "b": ("a",), "c": ("b",)}), {"a": 9, "b": 5, "c": 12})
    assert path.contribution == {"a": 9, "b": 0, "c": 3}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_contributions_sum_to_the_cycles_along_a_chain_of_streams(data):
    n = data.draw(st.integers(1, 12))
    edges = {}
    for i in range(n):
        preds = data.draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set()
        edges[f"b{i}"] = tuple(f"b{p}" for p in sorted(preds))
    clocks = {name: data.draw(st.integers(0, 1000)) for name in edges}
    graph = _graph(edges)
    path = critical_path(graph, clocks)
    assert sum(path.contribution.values()) == path.cycles == max(clocks.values())
    for before, after in zip(path.blocks, path.blocks[1:]):
        assert before in edges[after]
    assert edges[path.blocks[0]] == ()     # the path starts at a block without inputs

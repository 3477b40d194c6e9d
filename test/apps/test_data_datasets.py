"""Karate Club, the packaged real Cora graph, the synthetic data-set generators and the
registry."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.data import DATASETS, PROVENANCES, karate_club, load_dataset
from fuseflow.data.synthetic import binary_features, power_law_graph

SYNTHETIC = [name for name, spec in DATASETS.items() if spec.source == "synthetic"]
SCALE = 0.02


def test_karate_club_statistics():
    graph = load_dataset("karate")
    assert graph.num_nodes == 34
    assert graph.num_edges == 156
    assert graph.is_symmetric() and not graph.has_self_loops()
    assert set(np.unique(graph.adjacency.data)) == {1.0}
    assert graph.feature_dim == 34 and sp.issparse(graph.features)
    np.testing.assert_array_equal(graph.features.toarray(), np.eye(34))
    # Nodes 0 (Mr. Hi) and 33 (the officer) are the hubs.
    assert sorted(np.argsort(graph.degrees)[-2:]) == [0, 33]


def test_karate_club_cannot_be_scaled():
    with pytest.raises(ValueError, match="cannot be scaled"):
        load_dataset("karate", scale=0.5)


def test_cora_is_the_real_citation_graph_with_synthetic_features():
    graph = load_dataset("cora", seed=0)
    assert (graph.num_nodes, graph.num_edges, graph.feature_dim) == (2708, 10556, 1433)
    assert graph.is_symmetric() and not graph.has_self_loops()
    # Paper ids sorted ascending number the nodes: the file's first line, 35 <- 1033, and its
    # best-cited paper (35, 166 citing papers + 2 it cites) are where the file puts them.
    ids = np.unique(np.loadtxt(_cora_file(), dtype=np.int64))
    first, second = np.searchsorted(ids, [35, 1033])
    assert graph.adjacency[first, second] == 1 and graph.adjacency[second, first] == 1
    assert graph.degrees[first] == graph.degrees.max() == 168
    assert graph.feature_density == pytest.approx(0.0127, rel=0.01)
    same, other = load_dataset("cora", seed=0), load_dataset("cora", seed=1)
    assert (same.features != graph.features).nnz == 0
    assert (other.features != graph.features).nnz > 0
    assert (other.adjacency != graph.adjacency).nnz == 0, "the graph does not depend on the seed"
    with pytest.raises(ValueError, match="real graph and cannot be scaled"):
        load_dataset("cora", scale=0.1)


def _cora_file():
    from importlib import resources

    return resources.files("fuseflow.data").joinpath("cora/cora.cites")


def test_cora_ships_with_its_attribution():
    readme = _cora_file().parent.joinpath("README.md").read_text()
    assert "McCallum" in readme and "tkipf/pygcn" in readme


def test_every_data_set_states_its_provenance():
    provenance = {name: spec.provenance for name, spec in DATASETS.items()}
    assert set(provenance.values()) <= set(PROVENANCES)
    assert provenance == {"karate": "real", "cora": "real graph, synthetic features",
                          "cora_ml": "synthetic", "dblp": "synthetic", "collab": "synthetic",
                          "mag": "synthetic"}


def test_unknown_data_set_lists_valid_names():
    with pytest.raises(ValueError, match="karate, cora, cora_ml, dblp, collab, mag"):
        load_dataset("citeseer")


@pytest.mark.parametrize("name", SYNTHETIC)
def test_scaled_generator_matches_requested_statistics(name):
    spec = DATASETS[name]
    graph = load_dataset(name, seed=3, scale=SCALE)
    nodes, edges = spec.scaled(SCALE)
    assert graph.num_nodes == nodes == round(spec.num_nodes * SCALE)
    assert graph.num_edges == edges
    mean_degree = spec.num_edges / spec.num_nodes
    assert graph.num_edges / graph.num_nodes == pytest.approx(mean_degree, rel=0.02)
    assert graph.feature_dim == spec.feature_dim
    assert graph.feature_density == pytest.approx(spec.feature_density, rel=0.05)
    assert not graph.has_self_loops()
    assert graph.is_symmetric() == spec.symmetric
    assert graph.adjacency.dtype == np.float32 and set(np.unique(graph.adjacency.data)) == {1.0}
    in_degrees = np.bincount(graph.adjacency.indices, minlength=graph.num_nodes)
    assert np.all(graph.degrees + in_degrees > 0), "isolated node"


@pytest.mark.parametrize("name", ["cora", "cora_ml"])
def test_full_size_citation_graphs_match_published_counts(name):
    spec = DATASETS[name]
    graph = load_dataset(name)
    assert (graph.num_nodes, graph.num_edges, graph.feature_dim) == (
        spec.num_nodes, spec.num_edges, spec.feature_dim)
    assert graph.feature_density == pytest.approx(spec.feature_density, rel=0.02)
    assert graph.is_symmetric() and not graph.has_self_loops()
    features = graph.features
    assert sp.issparse(features) and set(np.unique(features.data)) == {1.0}
    assert np.all(np.diff(features.indptr) > 0), "node without features"


def test_cora_degrees_are_heavy_tailed():
    degrees = load_dataset("cora").degrees
    mean = degrees.mean()
    assert degrees.max() > 15 * mean
    # Power law: most nodes are below the mean, a few are far above it.
    assert np.median(degrees) < mean
    assert np.mean(degrees > 5 * mean) < 0.02


@pytest.mark.parametrize("name", SYNTHETIC)
def test_generators_are_reproducible_per_seed(name):
    a = load_dataset(name, seed=7, scale=SCALE)
    b = load_dataset(name, seed=7, scale=SCALE)
    c = load_dataset(name, seed=8, scale=SCALE)
    assert (a.adjacency != b.adjacency).nnz == 0
    assert (a.adjacency != c.adjacency).nnz > 0
    dense = not sp.issparse(a.features)
    if dense:
        np.testing.assert_array_equal(a.features, b.features)
    else:
        assert (a.features != b.features).nnz == 0


def test_normalized_adjacency_is_gcn_renormalization():
    graph = karate_club()
    a = graph.adjacency.toarray() + np.eye(34)
    d = a.sum(axis=1)
    expected = a / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]
    normalized = graph.normalized_adjacency()
    assert normalized.dtype == np.float32
    np.testing.assert_allclose(normalized.toarray(), expected, rtol=1e-6)


def test_mean_adjacency_rows_sum_to_one():
    graph = load_dataset("cora_ml", scale=SCALE)
    np.testing.assert_allclose(np.asarray(graph.mean_adjacency().sum(axis=1)).ravel(), 1.0,
                               rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(5, 60), fill=st.floats(0.0, 0.9), symmetric=st.booleans(),
       seed=st.integers(0, 2**16))
def test_power_law_graph_has_exact_edge_count(n, fill, symmetric, seed):
    capacity = n * (n - 1)
    edges = int(fill * capacity)
    edges -= edges % 2 if symmetric else 0
    adjacency = power_law_graph(n, edges, rng=np.random.default_rng(seed), symmetric=symmetric)
    assert adjacency.nnz == edges
    assert not adjacency.diagonal().any()
    if symmetric:
        assert (adjacency != adjacency.T).nnz == 0


def test_power_law_graph_rejects_impossible_requests():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="even"):
        power_law_graph(10, 7, rng=rng)
    with pytest.raises(ValueError, match="do not fit"):
        power_law_graph(4, 14, rng=rng)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 40), dim=st.integers(1, 50), density=st.floats(0.0, 1.0),
       seed=st.integers(0, 2**16))
def test_binary_features_hit_the_density(n, dim, density, seed):
    features = binary_features(n, dim, density, rng=np.random.default_rng(seed))
    expected = min(max(round(density * n * dim), n), n * dim)
    assert features.nnz == expected
    assert np.all(np.diff(features.indptr) > 0)

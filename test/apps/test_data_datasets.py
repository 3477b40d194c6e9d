"""Karate Club, the synthetic data-set generators and the registry."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.data import DATASETS, karate_club, load_dataset
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
    graph = load_dataset("cora", scale=SCALE)
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

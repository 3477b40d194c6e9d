"""Graph file loaders round-trip small files written here."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import torch

from fuseflow.data import GraphData, load_edge_list, load_graph, load_matrix_market, load_npz

# A 5-node directed graph with one isolated node (4) that only the node count reveals.
EDGES = np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 1]])


def dense_adjacency(edges, n, symmetric=False):
    a = np.zeros((n, n), dtype=np.float32)
    a[edges[:, 0], edges[:, 1]] = 1.0
    if symmetric:
        a = np.maximum(a, a.T)
    return a


def test_edge_list_with_comments_and_explicit_node_count(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("# a directed graph\n" + "\n".join(f"{u} {v}" for u, v in EDGES) + "\n")
    graph = load_edge_list(path, num_nodes=5)
    assert isinstance(graph, GraphData)
    assert graph.name == "graph"
    assert graph.num_nodes == 5 and graph.num_edges == 5
    assert graph.adjacency.dtype == np.float32
    np.testing.assert_array_equal(graph.adjacency.toarray(), dense_adjacency(EDGES, 5))
    # Featureless files get one-hot features.
    np.testing.assert_array_equal(graph.features.toarray(), np.eye(5, dtype=np.float32))


def test_edge_list_symmetrize_collapses_duplicates_and_drops_self_loops(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("0 1\n1 0\n0 1\n2 2\n1 2\n")
    graph = load_edge_list(path, symmetrize=True, remove_self_loops=True)
    assert graph.num_nodes == 3
    np.testing.assert_array_equal(graph.adjacency.toarray(),
                                  [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    assert graph.is_symmetric() and not graph.has_self_loops()


def test_edge_list_weights_survive_symmetrization(tmp_path):
    path = tmp_path / "weighted.txt"
    path.write_text("0 1 2.5\n1 2 0.5\n")
    graph = load_edge_list(path, symmetrize=True)
    np.testing.assert_allclose(graph.adjacency.toarray(),
                               [[0, 2.5, 0], [2.5, 0, 0.5], [0, 0.5, 0]])


def test_edge_list_rejects_out_of_range_ids(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("0 7\n")
    with pytest.raises(ValueError, match="out of range"):
        load_edge_list(path, num_nodes=3)


def test_matrix_market_general_and_symmetric(tmp_path):
    general = tmp_path / "general.mtx"
    scipy.io.mmwrite(general, sp.coo_matrix(dense_adjacency(EDGES, 5)))
    graph = load_matrix_market(general)
    np.testing.assert_array_equal(graph.adjacency.toarray(), dense_adjacency(EDGES, 5))

    symmetric = tmp_path / "symmetric.mtx"
    lower = sp.tril(sp.coo_matrix(dense_adjacency(EDGES, 5, symmetric=True)))
    symmetric.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n5 5 "
                         f"{lower.nnz}\n" + "".join(f"{r + 1} {c + 1}\n"
                                                    for r, c in zip(lower.row, lower.col)))
    graph = load_graph(symmetric)
    assert graph.is_symmetric()
    np.testing.assert_array_equal(graph.adjacency.toarray(), dense_adjacency(EDGES, 5, True))


def test_npz_pyg_layout_with_features_and_num_nodes(tmp_path):
    path = tmp_path / "pyg.npz"
    x = np.arange(10, dtype=np.float64).reshape(5, 2)
    np.savez(path, edge_index=EDGES.T, x=x, num_nodes=5)
    graph = load_npz(path)
    assert graph.num_nodes == 5 and graph.num_edges == 5
    np.testing.assert_array_equal(graph.adjacency.toarray(), dense_adjacency(EDGES, 5))
    assert graph.features.dtype == np.float32
    np.testing.assert_array_equal(graph.features, x.astype(np.float32))


def test_npz_ogb_layout_keys(tmp_path):
    path = tmp_path / "ogb.npz"
    np.savez(path, edge_index=EDGES.T, node_feat=np.ones((6, 3)), num_nodes_list=np.array([6]))
    graph = load_graph(path)
    assert graph.num_nodes == 6 and graph.feature_dim == 3


def test_npz_scipy_save_npz_layout(tmp_path):
    path = tmp_path / "scipy.npz"
    sp.save_npz(path, sp.csr_matrix(dense_adjacency(EDGES, 5, symmetric=True)))
    graph = load_npz(path)
    assert graph.num_nodes == 5
    np.testing.assert_array_equal(graph.adjacency.toarray(), dense_adjacency(EDGES, 5, True))


def test_npz_citation_full_layout_with_sparse_attributes(tmp_path):
    path = tmp_path / "cora_ml.npz"
    adj = sp.csr_matrix(dense_adjacency(EDGES, 5))
    attr = sp.csr_matrix(np.eye(5, 7, dtype=np.float32))
    np.savez(path, adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr,
             adj_shape=adj.shape, attr_data=attr.data, attr_indices=attr.indices,
             attr_indptr=attr.indptr, attr_shape=attr.shape)
    graph = load_npz(path)
    assert sp.issparse(graph.features) and graph.feature_dim == 7
    np.testing.assert_array_equal(graph.features.toarray(), attr.toarray())


def test_npz_unknown_layout_lists_the_known_ones(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, weights=np.ones(3))
    with pytest.raises(ValueError, match="pyg, scipy, citation_full"):
        load_npz(path)


def test_torch_conversions_agree_with_scipy(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("\n".join(f"{u} {v}" for u, v in EDGES))
    graph = load_edge_list(path, num_nodes=5, symmetrize=True)
    expected = graph.adjacency.toarray()
    for layout in ("csr", "coo", "dense"):
        tensor = graph.adjacency_torch(layout)
        dense = tensor if layout == "dense" else tensor.to_dense()
        np.testing.assert_array_equal(dense.numpy(), expected)
    assert graph.adjacency_torch("csr").layout == torch.sparse_csr
    assert graph.features_torch(sparse=True).layout == torch.sparse_csr
    assert graph.features_torch(sparse=False).layout == torch.strided
    with pytest.raises(ValueError, match="csr, coo, dense"):
        graph.adjacency_torch("bsr")

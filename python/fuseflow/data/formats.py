"""Loaders for the standard graph file forms.

* Edge lists: text, one ``u v`` (or ``u v w``) per line, ``#`` comments (SNAP style).
* Matrix Market ``.mtx`` (SuiteSparse), read with :func:`scipy.io.mmread`.
* ``.npz`` archives in the layouts graph libraries use:

  - PyG / OGB: ``edge_index`` (``2 x E`` integer array), optional node features under
    ``x``, ``node_feat`` or ``feat``, optional ``num_nodes`` (or OGB's ``num_nodes_list``
    for a one-graph archive);
  - scipy ``save_npz`` of a sparse adjacency (keys ``format``, ``shape``, ``indices``,
    ``indptr``, ``data``);
  - the citation-full layout of the Cora-ML / DBLP files PyG's ``CitationFull`` reads
    (``adj_data``/``adj_indices``/``adj_indptr``/``adj_shape`` and optional ``attr_*``).

Every loader returns a :class:`GraphData`. Without features in the file the node features are
the one-hot identity (as PyG does for featureless graphs), stored sparse.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from fuseflow.data.graph import GraphData, adjacency_from_edges, canonical_csr

log = logging.getLogger(__name__)

NPZ_LAYOUTS = ("pyg", "scipy", "citation_full")


def load_edge_list(path, *, num_nodes: int | None = None, symmetrize: bool = False,
                   remove_self_loops: bool = False, name: str | None = None) -> GraphData:
    """Reads a whitespace-separated edge list (``u v`` or ``u v weight`` per line).

    Node ids are 0-based integers; ``num_nodes`` defaults to ``max id + 1``. ``symmetrize``
    adds the reverse of every edge; duplicate unweighted edges collapse to one.
    """
    path = Path(path)
    table = np.loadtxt(path, comments="#", ndmin=2)
    if table.size == 0:
        table = np.zeros((0, 2))
    if table.shape[1] not in (2, 3):
        raise ValueError(f"{path}: expected 2 or 3 columns per edge, found {table.shape[1]}")
    rows, cols = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    if np.any(table[:, :2] != np.floor(table[:, :2])) or np.any(table[:, :2] < 0):
        raise ValueError(f"{path}: node ids must be non-negative integers")
    weights = table[:, 2] if table.shape[1] == 3 else None
    return _from_edges(rows, cols, weights, num_nodes, symmetrize, remove_self_loops,
                       name or path.stem, features=None)


def load_matrix_market(path, *, symmetrize: bool = False, remove_self_loops: bool = False,
                       name: str | None = None) -> GraphData:
    """Reads a square Matrix Market adjacency (``symmetric`` headers expand to both halves)."""
    path = Path(path)
    matrix = scipy.io.mmread(path)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{path}: adjacency must be square, got {matrix.shape}")
    coo = sp.coo_matrix(matrix)
    return _from_edges(coo.row, coo.col, coo.data, coo.shape[0], symmetrize, remove_self_loops,
                       name or path.stem, features=None)


def load_npz(path, *, symmetrize: bool = False, remove_self_loops: bool = False,
             name: str | None = None) -> GraphData:
    """Reads a graph ``.npz`` in any of :data:`NPZ_LAYOUTS`, detected from its keys."""
    path = Path(path)
    name = name or path.stem
    with np.load(path, allow_pickle=False) as archive:
        keys = set(archive.files)
        layout = _npz_layout(keys, path)
        log.debug("%s: npz layout %s", path, layout)
        if layout == "scipy":
            adjacency = sp.load_npz(path).tocoo()
            return _from_edges(adjacency.row, adjacency.col, adjacency.data, adjacency.shape[0],
                               symmetrize, remove_self_loops, name, features=None)
        if layout == "citation_full":
            adjacency = sp.csr_matrix(
                (archive["adj_data"], archive["adj_indices"], archive["adj_indptr"]),
                shape=tuple(archive["adj_shape"])).tocoo()
            features = None
            if "attr_data" in keys:
                features = sp.csr_matrix(
                    (archive["attr_data"], archive["attr_indices"], archive["attr_indptr"]),
                    shape=tuple(archive["attr_shape"]))
            elif "attr_matrix" in keys:
                features = archive["attr_matrix"]
            return _from_edges(adjacency.row, adjacency.col, adjacency.data, adjacency.shape[0],
                               symmetrize, remove_self_loops, name, features)
        edge_index = np.asarray(archive["edge_index"])
        if edge_index.ndim != 2 or edge_index.shape[0] != 2:
            raise ValueError(f"{path}: edge_index must be 2 x E, got {edge_index.shape}")
        features = next((archive[k] for k in ("x", "node_feat", "feat") if k in keys), None)
        num_nodes = _npz_num_nodes(archive, keys, features, path)
        weights = archive["edge_weight"] if "edge_weight" in keys else None
        return _from_edges(edge_index[0], edge_index[1], weights, num_nodes, symmetrize,
                           remove_self_loops, name, features)


def load_graph(path, **kwargs) -> GraphData:
    """Dispatches on the file suffix: ``.npz``, ``.mtx``, otherwise an edge list."""
    suffix = Path(path).suffix.lower()
    if suffix == ".npz":
        return load_npz(path, **kwargs)
    if suffix == ".mtx":
        return load_matrix_market(path, **kwargs)
    return load_edge_list(path, **kwargs)


def _npz_layout(keys: set[str], path: Path) -> str:
    if "edge_index" in keys:
        return "pyg"
    if {"indptr", "indices", "data", "shape", "format"} <= keys:
        return "scipy"
    if {"adj_data", "adj_indices", "adj_indptr", "adj_shape"} <= keys:
        return "citation_full"
    raise ValueError(
        f"{path}: unrecognized npz layout (keys {sorted(keys)}); expected one of "
        f"{', '.join(NPZ_LAYOUTS)}: 'edge_index' (PyG/OGB), scipy save_npz keys, or 'adj_*' "
        "(citation-full)")


def _npz_num_nodes(archive, keys, features, path) -> int | None:
    if "num_nodes" in keys:
        return int(np.asarray(archive["num_nodes"]).reshape(-1)[0])
    if "num_nodes_list" in keys:
        counts = np.asarray(archive["num_nodes_list"]).reshape(-1)
        if counts.size != 1:
            raise ValueError(f"{path}: holds {counts.size} graphs; expected one")
        return int(counts[0])
    if features is not None:
        return int(features.shape[0])
    return None


def _from_edges(rows, cols, weights, num_nodes, symmetrize, remove_self_loops, name,
                features) -> GraphData:
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    inferred = int(max(rows.max(initial=-1), cols.max(initial=-1))) + 1
    if num_nodes is None:
        num_nodes = inferred
    elif inferred > num_nodes:
        raise ValueError(f"{name}: node id {inferred - 1} out of range for {num_nodes} nodes")
    if weights is not None and np.all(np.asarray(weights) == 1):
        weights = None
    if remove_self_loops:
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
        weights = None if weights is None else np.asarray(weights)[keep]
    adjacency = adjacency_from_edges(rows, cols, num_nodes, weights)
    if symmetrize:
        # max, not sum: an edge listed in both directions must not double its weight.
        adjacency = canonical_csr(adjacency.maximum(adjacency.T))
    if features is None:
        features = sp.identity(num_nodes, dtype=np.float32, format="csr")
    elif sp.issparse(features):
        features = sp.csr_matrix(features, dtype=np.float32)
    else:
        features = np.asarray(features, dtype=np.float32)
        if features.ndim == 1:
            features = features[:, None]
    return GraphData(name=name, num_nodes=num_nodes, adjacency=adjacency, features=features)

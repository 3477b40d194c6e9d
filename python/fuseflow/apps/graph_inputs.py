"""Graph data for the GNN applications at each size preset."""

from __future__ import annotations

import scipy.sparse as sp

from fuseflow.data import DATASETS, GraphData, dataset_spec, load_dataset, scipy_to_torch

GRAPH_DATASETS = tuple(DATASETS)

GRAPH_INPUTS = ("adjacency", "features")
"""The inputs of a graph application, which can run on any loaded graph."""

PRESET_SCALE = {"tiny": 0.02, "small": 0.1, "published": None}
"""Scale of synthetic graphs per preset (the real graphs, Karate Club and Cora, are always
whole)."""

DEFAULT_DATASETS = {"tiny": "karate", "small": "cora", "published": "cora"}


def load_for_preset(preset: str, dataset: str | GraphData, seed: int) -> GraphData:
    """``dataset`` at the size of ``preset``; a loaded graph (a file) is used whole."""
    if isinstance(dataset, GraphData):
        return dataset
    scale = None if dataset_spec(dataset).real_graph else PRESET_SCALE[preset]
    return load_dataset(dataset, seed=seed, scale=scale)


def output_width(dataset: str | GraphData, hidden: int) -> int:
    """Classes of the data set's task; the hidden width for ogbl-collab (link prediction)
    and for a graph file (its task is unknown)."""
    if isinstance(dataset, GraphData):
        return hidden
    return dataset_spec(dataset).num_classes or hidden


def graph_tensors(graph: GraphData, adjacency: sp.csr_matrix):
    """``(adjacency, features)`` torch inputs: adjacency CSR; features CSR when stored sparse
    (one-hot and bag-of-words), strided when dense (OGB embeddings)."""
    sparse_features = sp.issparse(graph.features)
    return scipy_to_torch(adjacency, "csr"), graph.features_torch(sparse=sparse_features)

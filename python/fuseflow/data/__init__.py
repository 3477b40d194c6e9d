"""Graph data: file loaders, the real Karate Club and Cora graphs, and seeded synthetic
stand-ins for the evaluation's other data sets (see ``docs/applications.md``)."""

from fuseflow.data.datasets import (
    DATASETS,
    FEATURE_KINDS,
    PROVENANCES,
    DatasetSpec,
    dataset_spec,
    karate_club,
    load_dataset,
    packaged_graph,
    synthesize,
)
from fuseflow.data.formats import (
    NPZ_LAYOUTS,
    load_edge_list,
    load_graph,
    load_matrix_market,
    load_npz,
)
from fuseflow.data.graph import ADJACENCY_LAYOUTS, GraphData, scipy_to_torch

__all__ = [
    "ADJACENCY_LAYOUTS", "DATASETS", "FEATURE_KINDS", "NPZ_LAYOUTS", "PROVENANCES", "DatasetSpec",
    "GraphData", "dataset_spec", "karate_club", "load_dataset", "load_edge_list", "load_graph",
    "load_matrix_market", "load_npz", "packaged_graph", "scipy_to_torch", "synthesize",
]

"""Graph data: file loaders, Karate Club, and seeded synthetic stand-ins for the evaluation's
data sets (see ``docs/applications.md``)."""

from fuseflow.data.datasets import (
    DATASETS,
    FEATURE_KINDS,
    DatasetSpec,
    dataset_spec,
    karate_club,
    load_dataset,
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
    "ADJACENCY_LAYOUTS", "DATASETS", "FEATURE_KINDS", "NPZ_LAYOUTS", "DatasetSpec", "GraphData",
    "dataset_spec", "karate_club", "load_dataset", "load_edge_list", "load_graph",
    "load_matrix_market", "load_npz", "scipy_to_torch", "synthesize",
]

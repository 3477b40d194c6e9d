"""Two-layer graph convolutional network (Kipf & Welling), hidden width 16.

``H1 = ReLU((A·X)·W1 + b1)``, ``Z = (A·H1)·W2 + b2``, output ``softmax(Z, dim=1)``, with ``A``
the GCN-normalized adjacency ``D^-1/2 (A + I) D^-1/2``: each layer aggregates first, the order
of the published model (and of its fusion results). ``aggregate_first=False`` computes
``A·(H·W)`` instead; both are legal and the order is itself a design choice: fused per layer,
``A·(H·W)`` re-evaluates ``H·W`` for every edge while ``(A·H)·W`` recomputes nothing. Weights
are 50% sparse (a seeded random half of the entries zeroed).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from fuseflow.apps.base import WEIGHT_FORMAT, Application, FusionPlan, Stage, prune_
from fuseflow.apps.gnn import TwoLayerGNN
from fuseflow.apps.graph_inputs import (
    DEFAULT_DATASETS,
    GRAPH_DATASETS,
    graph_tensors,
    load_for_preset,
    output_width,
)

HIDDEN = 16
WEIGHT_SPARSITY = 0.5


class GraphConvolution(nn.Module):
    """``A·(H·W) + b`` (or ``(A·H)·W + b`` when ``aggregate_first``)."""

    def __init__(self, in_features: int, out_features: int, aggregate_first: bool = True):
        super().__init__()
        self.aggregate_first = aggregate_first
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Glorot-uniform weight, zero bias (the GCN paper's initialization)."""
        bound = math.sqrt(6.0 / sum(self.weight.shape))
        nn.init.uniform_(self.weight, -bound, bound, generator=generator)
        nn.init.zeros_(self.bias)

    def forward(self, adjacency: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        if self.aggregate_first:
            return (adjacency @ h) @ self.weight + self.bias
        return adjacency @ (h @ self.weight) + self.bias


class GCN(TwoLayerGNN):
    """Two GCN layers with ReLU between and a row softmax on the output."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = HIDDEN,
                 aggregate_first: bool = True):
        super().__init__()
        self.layer1 = GraphConvolution(in_features, hidden, aggregate_first)
        self.layer2 = GraphConvolution(hidden, num_classes, aggregate_first)


def build(preset: str, dataset: str, seed: int):
    """GCN on ``dataset`` at ``preset`` size; inputs ``(normalized adjacency CSR, features)``."""
    graph = load_for_preset(preset, dataset, seed)
    model = GCN(graph.feature_dim, output_width(dataset, HIDDEN))
    generator = torch.Generator().manual_seed(seed)
    for layer in (model.layer1, model.layer2):
        layer.reset_parameters(generator)
        prune_(layer.weight, WEIGHT_SPARSITY, generator)
    return model, graph_tensors(graph, graph.normalized_adjacency())


def plan(model: GCN) -> FusionPlan:
    """Unfused: 8 kernels; partial: one per layer (softmax joins layer 2); full: one kernel."""
    layers = []
    for name, layer in (("layer1", model.layer1), ("layer2", model.layer2)):
        mm = (f"{name}.aggregate", f"{name}.transform")
        if not layer.aggregate_first:
            mm = mm[::-1]
        layers.append([Stage(mm[0], name, ("matmul",)), Stage(mm[1], name, ("matmul",)),
                       Stage(f"{name}.bias", name, ("add",))])
    layers[0].append(Stage("relu", "", ("relu",)))
    layers[1].append(Stage("softmax", "", ("softmax",)))
    stages = tuple(layers[0] + layers[1])
    names = [[s.name for s in layer] for layer in layers]
    weights = ("layer1.weight", "layer2.weight")
    return FusionPlan(
        stages=stages,
        fusion_groups={
            "unfused": tuple((s.name,) for s in stages),
            "partial": (tuple(names[0]), tuple(names[1])),
            "full": (tuple(names[0] + names[1]),),
        },
        sparse_parameters=dict.fromkeys(weights, WEIGHT_SPARSITY),
        sparse_formats=dict.fromkeys(weights, WEIGHT_FORMAT),
    )


APPLICATION = Application(
    name="gcn",
    title="2-layer GCN",
    equations="H1 = ReLU((A·X)·W1 + b1); Z = (A·H1)·W2 + b2; Y = softmax_rows(Z)",
    inputs=("adjacency", "features"),
    sparse_inputs=("adjacency", "features"),
    sparsifiable_inputs=(),
    datasets=GRAPH_DATASETS,
    default_datasets=DEFAULT_DATASETS,
    builder=build,
    planner=plan,
)

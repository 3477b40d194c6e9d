"""Two-layer GraphSAGE (mean aggregator), hidden width 16.

Per layer ``H' = (H·Ws + bs) + ((A·H)·Wn + bn)`` with ``A`` the row-normalized adjacency
``D^-1 A`` (the mean over neighbours). Layer 1 is followed by ReLU; layer 2 has no activation
and the output is ``softmax(Z, dim=1)``, as in the GCN, so the two GNNs end alike. Weights are
50% sparse like the GCN's (workloads.md gives no GraphSAGE sparsity; this is our choice).
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


class SAGEConv(nn.Module):
    """``(H·Ws + bs) + ((A·H)·Wn + bn)``: a self and a neighbour transform, summed."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.self_weight = nn.Parameter(torch.empty(in_features, out_features))
        self.self_bias = nn.Parameter(torch.empty(out_features))
        self.neighbor_weight = nn.Parameter(torch.empty(in_features, out_features))
        self.neighbor_bias = nn.Parameter(torch.empty(out_features))
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Glorot-uniform weights, zero biases."""
        for weight in (self.self_weight, self.neighbor_weight):
            bound = math.sqrt(6.0 / sum(weight.shape))
            nn.init.uniform_(weight, -bound, bound, generator=generator)
        nn.init.zeros_(self.self_bias)
        nn.init.zeros_(self.neighbor_bias)

    def forward(self, adjacency: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        self_part = h @ self.self_weight + self.self_bias
        neighbor_part = (adjacency @ h) @ self.neighbor_weight + self.neighbor_bias
        return self_part + neighbor_part


class GraphSAGE(TwoLayerGNN):
    """Two SAGE layers with ReLU between and a row softmax on the output."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = HIDDEN):
        super().__init__()
        self.layer1 = SAGEConv(in_features, hidden)
        self.layer2 = SAGEConv(hidden, num_classes)


def build(preset: str, dataset: str, seed: int):
    """GraphSAGE on ``dataset`` at ``preset`` size; inputs ``(mean adjacency CSR, features)``."""
    graph = load_for_preset(preset, dataset, seed)
    model = GraphSAGE(graph.feature_dim, output_width(dataset, HIDDEN))
    generator = torch.Generator().manual_seed(seed)
    for layer in (model.layer1, model.layer2):
        layer.reset_parameters(generator)
        prune_(layer.self_weight, WEIGHT_SPARSITY, generator)
        prune_(layer.neighbor_weight, WEIGHT_SPARSITY, generator)
    return model, graph_tensors(graph, graph.mean_adjacency())


def plan(model: GraphSAGE) -> FusionPlan:
    """Unfused: 14 kernels; partial: one per layer (softmax joins layer 2); full: one kernel."""
    layers = []
    for name in ("layer1", "layer2"):
        layers.append([
            Stage(f"{name}.self_transform", name, ("matmul",)),
            Stage(f"{name}.self_bias", name, ("add",)),
            Stage(f"{name}.aggregate", name, ("matmul",)),
            Stage(f"{name}.neighbor_transform", name, ("matmul",)),
            Stage(f"{name}.neighbor_bias", name, ("add",)),
            Stage(f"{name}.combine", name, ("add",)),
        ])
    layers[0].append(Stage("relu", "", ("relu",)))
    layers[1].append(Stage("softmax", "", ("softmax",)))
    stages = tuple(layers[0] + layers[1])
    names = [tuple(s.name for s in layer) for layer in layers]
    weights = [f"{layer}.{weight}" for layer in ("layer1", "layer2")
               for weight in ("self_weight", "neighbor_weight")]
    return FusionPlan(
        stages=stages,
        fusion_groups={
            "unfused": tuple((s.name,) for s in stages),
            "partial": (names[0], names[1]),
            "full": (names[0] + names[1],),
        },
        sparse_parameters=dict.fromkeys(weights, WEIGHT_SPARSITY),
        sparse_formats=dict.fromkeys(weights, WEIGHT_FORMAT),
    )


APPLICATION = Application(
    name="graphsage",
    title="2-layer GraphSAGE (mean)",
    equations="H' = ReLU((H·Ws + bs) + ((A·H)·Wn + bn)) (no ReLU on layer 2); "
              "Y = softmax_rows(Z)",
    inputs=("adjacency", "features"),
    sparse_inputs=("adjacency", "features"),
    sparsifiable_inputs=(),
    datasets=GRAPH_DATASETS,
    default_datasets=DEFAULT_DATASETS,
    builder=build,
    planner=plan,
)

"""The shape the two GNN applications share: two graph layers, ReLU between, a row softmax."""

from __future__ import annotations

import torch
from torch import nn


class TwoLayerGNN(nn.Module):
    """``softmax(layer2(A, relu(layer1(A, X))), dim=1)``; subclasses set ``layer1`` and
    ``layer2`` (modules called as ``layer(adjacency, features)``)."""

    layer1: nn.Module
    layer2: nn.Module

    def forward(self, adjacency: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.layer1(adjacency, features))
        z = self.layer2(adjacency, h)
        return torch.softmax(z, dim=1)

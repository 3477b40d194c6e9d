"""Sparse autoencoder: ``Y = ReLU(X·We + be)·Wd + bd`` on a batch of 32 sparse images.

Weights are 90% sparse (a seeded random 90% of the entries zeroed). The input batch ``X`` is a
``torch.sparse_csr`` tensor of flattened images; its density (10%) is our assumption, as
workloads.md only says ``X`` is sparse. Data sets are the published input sizes:

=========  ===============  ======
data set   input D          hidden
=========  ===============  ======
imagenet   224² = 50,176    256
luna16     512² = 262,144   512
nih_cxr    1024² = 1,048,576  512
=========  ===============  ======

Presets shrink the images: ``tiny`` 8² → 16, ``small`` (side / 8)² → hidden / 8 (at least 16).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from fuseflow.apps.base import WEIGHT_FORMAT, Application, FusionPlan, Stage, prune_
from fuseflow.data import scipy_to_torch

BATCH = 32
WEIGHT_SPARSITY = 0.9
INPUT_DENSITY = 0.1

IMAGE_SIZES = {"imagenet": (224, 256), "luna16": (512, 512), "nih_cxr": (1024, 512)}
"""Data set -> (image side, hidden width) of the published runs."""


class SparseAutoencoder(nn.Module):
    """One-hidden-layer autoencoder with explicit weight matrices (``x @ W + b``)."""

    def __init__(self, input_dim: int, hidden_dim: int, generator: torch.Generator | None = None):
        """Parameters drawn by :meth:`reset_parameters` from ``generator`` (torch's default
        generator when None)."""
        super().__init__()
        self.encoder_weight = nn.Parameter(torch.empty(input_dim, hidden_dim))
        self.encoder_bias = nn.Parameter(torch.empty(hidden_dim))
        self.decoder_weight = nn.Parameter(torch.empty(hidden_dim, input_dim))
        self.decoder_bias = nn.Parameter(torch.empty(input_dim))
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Uniform ``±1/sqrt(fan_in)`` weights and biases (``nn.Linear``'s default bounds)."""
        for weight, bias in ((self.encoder_weight, self.encoder_bias),
                             (self.decoder_weight, self.decoder_bias)):
            bound = 1.0 / math.sqrt(weight.shape[0])
            nn.init.uniform_(weight, -bound, bound, generator=generator)
            nn.init.uniform_(bias, -bound, bound, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(torch.mm(x, self.encoder_weight) + self.encoder_bias)
        return torch.mm(hidden, self.decoder_weight) + self.decoder_bias


def sizes(preset: str, dataset: str) -> tuple[int, int]:
    """``(input_dim, hidden_dim)`` of ``dataset`` at ``preset``."""
    side, hidden = IMAGE_SIZES[dataset]
    if preset == "tiny":
        side, hidden = 8, 16
    elif preset == "small":
        side, hidden = side // 8, max(16, hidden // 8)
    return side * side, hidden


def sparse_batch(batch: int, dim: int, density: float, rng: np.random.Generator) -> sp.csr_matrix:
    """``batch x dim`` CSR with ``round(density * dim)`` non-zeros per row, values in (0, 1]."""
    per_row = max(1, int(round(density * dim)))
    cols = np.stack([rng.choice(dim, per_row, replace=False) for _ in range(batch)])
    rows = np.repeat(np.arange(batch), per_row)
    values = 1.0 - rng.random(batch * per_row, dtype=np.float32)
    return sp.csr_matrix((values, (rows, cols.ravel())), shape=(batch, dim), dtype=np.float32)


def build(preset: str, dataset: str, seed: int):
    """SAE at ``preset`` size; input a CSR batch of 32 flattened images."""
    input_dim, hidden_dim = sizes(preset, dataset)
    generator = torch.Generator().manual_seed(seed)
    model = SparseAutoencoder(input_dim, hidden_dim, generator)  # drawn once (published: 1.1e9 weights)
    prune_(model.encoder_weight, WEIGHT_SPARSITY, generator)
    prune_(model.decoder_weight, WEIGHT_SPARSITY, generator)
    batch = sparse_batch(BATCH, input_dim, INPUT_DENSITY, np.random.default_rng(seed))
    return model, (scipy_to_torch(batch, "csr"),)


def plan(model: SparseAutoencoder) -> FusionPlan:
    """Unfused: 5 kernels; partial: encoder (with ReLU) | decoder; full: one kernel."""
    encoder = (Stage("encoder.matmul", "", ("mm",)), Stage("encoder.bias", "", ("add",)),
               Stage("encoder.relu", "", ("relu",)))
    decoder = (Stage("decoder.matmul", "", ("mm",)), Stage("decoder.bias", "", ("add",)))
    enc, dec = tuple(s.name for s in encoder), tuple(s.name for s in decoder)
    weights = ("encoder_weight", "decoder_weight")
    return FusionPlan(
        stages=encoder + decoder,
        fusion_groups={
            "unfused": tuple((name,) for name in enc + dec),
            "partial": (enc, dec),
            "full": (enc + dec,),
        },
        sparse_parameters=dict.fromkeys(weights, WEIGHT_SPARSITY),
        sparse_formats=dict.fromkeys(weights, WEIGHT_FORMAT),
    )


APPLICATION = Application(
    name="sae",
    title="Sparse autoencoder",
    equations="Y = ReLU(X·We + be)·Wd + bd",
    inputs=("x",),
    sparse_inputs=("x",),
    sparsifiable_inputs=(),
    datasets=tuple(IMAGE_SIZES),
    default_datasets={"tiny": "imagenet", "small": "imagenet", "published": "imagenet"},
    builder=build,
    planner=plan,
)

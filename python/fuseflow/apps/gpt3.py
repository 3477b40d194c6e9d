"""GPT-3 decoder layers with BigBird block-sparse attention.

Per decoder layer (pre-layernorm, as GPT-3)::

    h = LN1(x)
    q, k, v = split(h·Wqkv + bqkv)                      # per head: T x dh
    S_head = Σ_d q[:, None, d] · k[None, :, d]          # Q·Kᵀ, written as a broadcast product
    O_head = softmax(masked_fill(S_head, M == 0, -inf) / sqrt(dh)) · V
    x = x + (concat_heads(O)·Wo + bo)
    x = x + (ReLU(LN2(x)·W1 + b1)·W2 + b2)

``M`` is the BigBird block mask (:func:`bigbird_mask`), a dense 0/1 forward input (torch-mlir
cannot import ``masked_fill`` with a sparse mask) that the published workload *declares* CSR
(``FusionPlan.sparse_formats``): masked-out scores are then never exponentiated, normalized or
multiplied with ``V``, and where the scores are computed in the attention kernel, only the
mask's non-zeros are: the block size and the mask's density set the attention's work.

Why ``Q·Kᵀ`` is a broadcast product summed over ``d`` rather than ``q @ k.transpose(-2, -1)``:
the two are the same function, but the matmul form imports as a transpose (hoisted to the host)
and a matmul whose default dataflow order walks ``d`` outside the key index (the order rule
keeps dense operands in storage order before it avoids sparse accumulators), which computes
every score of a row before the mask is applied. The broadcast form reads ``k`` untransposed,
so the default order is the inner product per (query, key) pair, and fused with the mask the
compiler evaluates it only at the mask's non-zeros (a sampled product, SDDMM). Unfused, the
scores kernel computes every score (as the published unfused schedule does).

The input ``x`` is one sequence, ``seq x d_model`` (batch 1 without the batch axis).
Projections are written ``h @ W + b`` with explicit parameters rather than ``nn.Linear``
because the unfused schedule counts the product and the bias as separate kernels. Weights are
90% sparse and declared CSR. No causal mask is applied: the published workload masks with the
BigBird pattern alone. Each decoder's weights come from its own seeded generator, so a model
with fewer decoders is a prefix of one with more (see :mod:`fuseflow.apps.layers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn

from fuseflow.apps.base import WEIGHT_FORMAT, Application, FusionPlan, Stage, prune_


@dataclass(frozen=True)
class GPT3Config:
    """Shape of the decoder stack; defaults are the published GPT-3 configuration."""

    d_model: int = 768
    """Model width."""
    heads: int = 12
    """Attention heads; ``d_model`` must be a multiple."""
    seq: int = 1024
    """Sequence length; a multiple of ``block``."""
    ffn: int = 3072
    """Feed-forward hidden width."""
    block: int = 64
    """BigBird block size (16, 32 or 64 in the published runs)."""
    layers: int = 12
    """Decoder layers."""
    window: int = 3
    """BigBird sliding window in blocks (the diagonal block and its neighbours)."""
    random_blocks: int = 2
    """Random blocks per block row."""
    global_blocks: int = 2
    """Global block rows and columns."""
    weight_sparsity: float = 0.9
    """Fraction of zeroed projection and FFN weights."""
    layer_norm_eps: float = 1e-5
    """LayerNorm epsilon."""

    def __post_init__(self) -> None:
        if self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of heads {self.heads}")
        if self.seq % self.block:
            raise ValueError(f"seq {self.seq} is not a multiple of block {self.block}")

    @property
    def head_dim(self) -> int:
        """Width of one head."""
        return self.d_model // self.heads


PRESET_CONFIGS = {
    "tiny": GPT3Config(d_model=8, heads=2, seq=32, ffn=16, block=4, layers=2, random_blocks=1,
                       global_blocks=1),
    "small": GPT3Config(d_model=256, heads=4, seq=512, ffn=1024, block=32, layers=2),
    "published": GPT3Config(),
}
MASK_FORMAT = "csr"
"""The format the BigBird mask is declared with."""
BLOCK_DATASETS = {"b4": 4, "b16": 16, "b32": 32, "b64": 64}
"""``dataset`` values of the GPT-3 application: the BigBird block size (b4 for the tiny
preset, whose 32-token sequence has 8 blocks)."""


def bigbird_block_mask(num_blocks: int, window: int = 3, random_blocks: int = 2,
                       global_blocks: int = 2, seed: int = 0) -> np.ndarray:
    """The ``num_blocks x num_blocks`` boolean BigBird pattern.

    Each block row keeps its diagonal block and ``window // 2`` neighbours either side (no
    wrap-around), ``random_blocks`` further blocks drawn from those not yet kept (fewer if not
    enough remain), and the global blocks: the first ``ceil(g/2)`` and last ``floor(g/2)``
    blocks (BigBird-ITC: first and last for ``g = 2``) are kept as whole rows and columns.
    """
    rng = np.random.default_rng(seed)
    index = np.arange(num_blocks)
    mask = np.abs(index[:, None] - index[None, :]) <= window // 2
    first, last = (global_blocks + 1) // 2, global_blocks // 2
    global_ids = np.union1d(index[:first], index[num_blocks - last:num_blocks])
    mask[global_ids, :] = True
    mask[:, global_ids] = True
    for row in np.setdiff1d(index, global_ids):
        free = np.flatnonzero(~mask[row])
        mask[row, rng.permutation(free)[:random_blocks]] = True
    return mask


def bigbird_mask(seq: int, block: int, window: int = 3, random_blocks: int = 2,
                 global_blocks: int = 2, seed: int = 0) -> torch.Tensor:
    """The ``seq x seq`` float32 0/1 token mask expanding :func:`bigbird_block_mask`."""
    if seq % block:
        raise ValueError(f"seq {seq} is not a multiple of block {block}")
    blocks = bigbird_block_mask(seq // block, window, random_blocks, global_blocks, seed)
    tokens = np.kron(blocks, np.ones((block, block), dtype=bool))
    return torch.from_numpy(tokens.astype(np.float32))


class BlockSparseSelfAttention(nn.Module):
    """Multi-head self-attention with a fused QKV projection and an externally given mask."""

    def __init__(self, config: GPT3Config):
        super().__init__()
        d = config.d_model
        self.heads = config.heads
        self.qkv_weight = nn.Parameter(torch.empty(d, 3 * d))
        self.qkv_bias = nn.Parameter(torch.zeros(3 * d))
        self.out_weight = nn.Parameter(torch.empty(d, d))
        self.out_bias = nn.Parameter(torch.zeros(d))

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        seq, d_model = h.shape
        head_dim = d_model // self.heads
        qkv = h @ self.qkv_weight + self.qkv_bias
        q, k, v = qkv.split(d_model, dim=-1)
        q = q.view(seq, self.heads, head_dim).transpose(0, 1)
        k = k.view(seq, self.heads, head_dim).transpose(0, 1)
        v = v.view(seq, self.heads, head_dim).transpose(0, 1)
        scores = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1)
        scores = scores.masked_fill(mask == 0, float("-inf"))
        scores = scores / math.sqrt(head_dim)
        attention = torch.softmax(scores, dim=-1)
        context = (attention @ v).transpose(0, 1).reshape(seq, d_model)
        return context @ self.out_weight + self.out_bias


class FeedForward(nn.Module):
    """``ReLU(h·W1 + b1)·W2 + b2``."""

    def __init__(self, config: GPT3Config):
        super().__init__()
        self.weight1 = nn.Parameter(torch.empty(config.d_model, config.ffn))
        self.bias1 = nn.Parameter(torch.zeros(config.ffn))
        self.weight2 = nn.Parameter(torch.empty(config.ffn, config.d_model))
        self.bias2 = nn.Parameter(torch.zeros(config.d_model))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.relu(h @ self.weight1 + self.bias1) @ self.weight2 + self.bias2


class DecoderLayer(nn.Module):
    """Pre-LN decoder layer: ``x + attn(LN1(x))`` then ``x + ffn(LN2(x))``."""

    def __init__(self, config: GPT3Config):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.attn = BlockSparseSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.ffn = FeedForward(config)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """GPT initialization: weights ``N(0, 0.02)``, biases 0, layernorms identity."""
        for param in self.parameters():
            if param.dim() == 2:
                nn.init.normal_(param, 0.0, 0.02, generator=generator)
            else:
                nn.init.zeros_(param)
        for module in (self.ln1, self.ln2):
            nn.init.ones_(module.weight)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), mask)
        return x + self.ffn(self.ln2(x))


class GPT3(nn.Module):
    """A stack of ``config.layers`` decoder layers sharing one attention mask."""

    def __init__(self, config: GPT3Config):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.layers))
        for layer in self.layers:
            layer.reset_parameters()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)
        return x


def sparse_weight_names(model: GPT3) -> list[str]:
    """Qualified names of the pruned weights (projections and FFN)."""
    return [name for name, param in model.named_parameters() if param.dim() == 2]


def _generator(seed: int, stream: int) -> torch.Generator:
    """The generator of one decoder's weights (``stream`` = its index) or of ``x`` (-1)."""
    return torch.Generator().manual_seed(int(np.random.SeedSequence([seed, stream + 1])
                                             .generate_state(1)[0]))


def build(preset: str, dataset: str, seed: int, layers: int | None = None):
    """GPT-3 at ``preset`` size with block size ``dataset``; inputs ``(x, mask)``.

    ``layers`` overrides the preset's decoder count; decoder ``i`` has the same weights in
    every model built from ``seed``."""
    config = replace(PRESET_CONFIGS[preset], block=BLOCK_DATASETS[dataset])
    if layers is not None:
        config = replace(config, layers=layers)
    model = GPT3(config)
    for i, layer in enumerate(model.layers):
        generator = _generator(seed, i)
        layer.reset_parameters(generator)
        for param in layer.parameters():
            if param.dim() == 2:
                prune_(param, config.weight_sparsity, generator)
    x = torch.randn(config.seq, config.d_model, generator=_generator(seed, -1))
    mask = bigbird_mask(config.seq, config.block, config.window, config.random_blocks,
                        config.global_blocks, seed)
    return model, (x, mask)


def plan(model: GPT3) -> FusionPlan:
    """18 unfused kernels per decoder; partial: {LN1+QKV}, {attention}, {out-proj .. residual 2}
    per decoder; full: the partial kernels with the next decoder's LN1+QKV fused into the FFN
    kernel."""
    groups = []
    for i in range(model.config.layers):
        p, a, f = f"layers.{i}", f"layers.{i}.attn", f"layers.{i}.ffn"
        groups.append((
            (Stage(f"{p}.ln1", f"{p}.ln1", ("layer_norm",)),
             Stage(f"{a}.qkv_matmul", a, ("matmul",)),
             Stage(f"{a}.qkv_bias", a, ("add",))),
            (Stage(f"{a}.scores", a, ("mul", "sum")),
             Stage(f"{a}.mask", a, ("eq", "masked_fill")),
             Stage(f"{a}.scale", a, ("div",)),
             Stage(f"{a}.softmax", a, ("softmax",)),
             Stage(f"{a}.context", a, ("matmul",))),
            (Stage(f"{a}.out_matmul", a, ("matmul",)),
             Stage(f"{a}.out_bias", a, ("add",)),
             Stage(f"{p}.residual1", p, ("add",)),
             Stage(f"{p}.ln2", f"{p}.ln2", ("layer_norm",)),
             Stage(f"{f}.linear1_matmul", f, ("matmul",)),
             Stage(f"{f}.linear1_bias", f, ("add",)),
             Stage(f"{f}.relu", f, ("relu",)),
             Stage(f"{f}.linear2_matmul", f, ("matmul",)),
             Stage(f"{f}.linear2_bias", f, ("add",)),
             Stage(f"{p}.residual2", p, ("add",))),
        ))
    stages = tuple(s for layer in groups for group in layer for s in group)
    partial = [tuple(s.name for s in group) for layer in groups for group in layer]
    full = [partial[0]]
    for i in range(len(groups)):
        attention, tail = partial[3 * i + 1], partial[3 * i + 2]
        following = partial[3 * i + 3] if i + 1 < len(groups) else ()
        full += [attention, tail + following]
    sparsity = model.config.weight_sparsity
    return FusionPlan(
        stages=stages,
        fusion_groups={
            "unfused": tuple((s.name,) for s in stages),
            "partial": tuple(partial),
            "full": tuple(full),
        },
        sparse_parameters={name: sparsity for name in sparse_weight_names(model)},
        sparse_formats={"mask": MASK_FORMAT,
                        **dict.fromkeys(sparse_weight_names(model), WEIGHT_FORMAT)},
    )


APPLICATION = Application(
    name="gpt3",
    title="GPT-3 decoder with BigBird block-sparse attention",
    equations="x += softmax(masked_fill(Q·Kᵀ, M == 0, -inf) / sqrt(dh))·V·Wo + bo, M CSR "
              "(Q, K, V from LN1(x)·Wqkv + bqkv); x += ReLU(LN2(x)·W1 + b1)·W2 + b2",
    inputs=("x", "mask"),
    sparse_inputs=(),
    sparsifiable_inputs=("mask",),
    datasets=tuple(BLOCK_DATASETS),
    default_datasets={"tiny": "b4", "small": "b32", "published": "b64"},
    builder=build,
    planner=plan,
    repeated="decoder",
    layer_counts={preset: config.layers for preset, config in PRESET_CONFIGS.items()},
)

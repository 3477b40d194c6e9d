"""Figure 16: BigBird multi-head attention at blocks 16, 32 and 64, scalar values against
values as tiles (sparsity blocking).

The workload is one BigBird attention block, fused into one kernel:
``O[h] = softmax(masked_fill(Q[h]·K[h]ᵀ, M == 0, -inf) / √d)·V[h]`` for ``heads`` heads of
``seq`` tokens and width ``width``, ``M`` the BigBird mask of block ``b``
(:func:`fuseflow.apps.gpt3.bigbird_mask`: window 3, 2 random blocks, 2 global rows and
columns). Both variants compute only inside the mask:

* **scalar**: ``M`` declared CSR: every score, exponential and product is a scalar token;
* **blocked**: ``M`` declared BSR ``b×b`` and the kernel scheduled with ``block = (b, b)``:
  the block rows and columns are streamed, every value is a ``b``-wide tile (scores and
  probabilities ``b×b``, row maxima and sums ``b``), with the tile timing of
  ``docs/timing.md``.

(BSR with scalar values does not lower this kernel: the softmax's row maximum would have to
reduce over the block column above the in-block row, a max over a non-innermost variable.)
Every point is simulated and checked against PyTorch. The speedup is scalar over blocked
cycles. ``shared/reference/workloads.md`` lists the study (BigBird attention at blocks
16/32/64, scalar vs blocked) but no published numbers for it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from fuseflow.reproduce.studies import (
    AttentionSize,
    attention_shape,
    new_figure,
    save_figure,
    study_document,
)


@dataclass(frozen=True)
class Size(AttentionSize):
    """The attention block of one preset and the block sizes measured."""

    blocks: tuple[int, ...]


PRESETS = {
    "tiny": Size(heads=2, seq=32, width=4, blocks=(4, 8)),
    "small": Size(heads=2, seq=512, width=16, blocks=(16, 32, 64)),
    "published": Size(heads=12, seq=1024, width=64, blocks=(16, 32, 64)),
}
"""Preset -> size. ``published`` is GPT-3's attention (12 heads of 64, 1024 tokens);
``small`` keeps the published blocks on 512 tokens, 2 heads of 16."""

PUBLISHED: dict[int, float | None] = {16: None, 32: None, 64: None}
"""Block -> the published speedup of blocked over scalar (the reference lists none)."""


class BigBirdAttention(torch.nn.Module):
    """Multi-head attention inside a 0/1 mask: ``q``, ``k``, ``v`` ``[heads, seq, width]``,
    ``mask`` ``[seq, seq]``."""

    def forward(self, q, k, v, mask):
        scores = torch.matmul(q, k.transpose(-1, -2)).masked_fill(mask == 0, float("-inf"))
        return torch.matmul(torch.softmax(scores / math.sqrt(q.shape[-1]), dim=-1), v)


def inputs(size: Size, block: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Q, K, V (standard normal, seeded) and the BigBird mask of ``block``."""
    from fuseflow.apps.gpt3 import bigbird_mask

    return size.qkv(torch.randn, seed) + (bigbird_mask(size.seq, block, 3, 2, 2, seed),)


def variants(block: int) -> dict[str, Any]:
    """The two schedules of one block size: scalar (CSR mask) and blocked (BSR, tiles)."""
    import fuseflow

    return {"scalar": fuseflow.Schedule(fusion="full", formats={"mask": "csr"}),
            "blocked": fuseflow.Schedule(fusion="full", formats={"mask": f"bsr:{block}"},
                                         kernels={0: {"block": (block, block)}})}


def measure(preset: str = "tiny", engine: str = "fast", seed: int = 0,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Compiles, simulates and checks both variants at every block size; the document."""
    import fuseflow

    size = PRESETS[preset]
    model = BigBirdAttention()
    start = time.perf_counter()
    points = []
    for block in size.blocks:
        data = inputs(size, block, seed)
        with torch.no_grad():
            expected = model(*data)
        mask = data[-1]
        point: dict[str, Any] = {"block": block,
                                 "mask_density": round(float(mask.mean()), 4),
                                 "published_speedup": PUBLISHED.get(block)}
        for name, schedule in variants(block).items():
            if progress is not None:
                progress(f"block {block}, {name}")
            compiled = fuseflow.compile(model, data, schedule)
            t0 = time.perf_counter()
            result = compiled.simulate(*data, engine=engine)
            point[name] = {
                "cycles": result.cycles,
                "matches_pytorch": bool(torch.allclose(result.output, expected, rtol=1e-4,
                                                       atol=1e-5)),
                "ops": sum(s.ops for k in result.run.kernels
                           for s in k.result.blocks.values()),
                "tokens": sum(sum(s.tokens_out.values()) for k in result.run.kernels
                              for s in k.result.blocks.values()),
                "simulate_seconds": round(time.perf_counter() - t0, 1),
            }
        point["speedup"] = round(point["scalar"]["cycles"] / point["blocked"]["cycles"], 2)
        points.append(point)
    workload = size.workload(mask="BigBird: window 3, 2 random blocks, 2 global blocks")
    return study_document("fig16", preset, engine, workload, points, start)


def markdown(doc: dict[str, Any]) -> str:
    """The figure's table: cycles of both variants and the speedup per block size."""
    w = doc["workload"]
    lines = [f"# Figure 16: BigBird attention, scalar against blocked values "
             f"({doc['preset']} preset)", "",
             f"{attention_shape(w)}, fused; {w['mask']}; "
             f"{doc['engine']} engine, {doc['wall_seconds']:.0f} s.", "",
             "| block | mask density | scalar cycles | blocked cycles | speedup | published | "
             "scalar tokens | blocked tokens | matches PyTorch |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for p in doc["points"]:
        s, b = p["scalar"], p["blocked"]
        published = f"{p['published_speedup']:.2f}×" if p["published_speedup"] else "n/a"
        ok = "yes" if s["matches_pytorch"] and b["matches_pytorch"] else "NO"
        lines.append(f"| {p['block']} | {p['mask_density']:.3f} | {s['cycles']:,} | "
                     f"{b['cycles']:,} | {p['speedup']:.2f}× | {published} | {s['tokens']:,} | "
                     f"{b['tokens']:,} | {ok} |")
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path) -> Path:
    """Cycles of both variants per block size (log scale), speedups above the bars."""
    points = doc["points"]
    x = range(len(points))
    fig, ax = new_figure(figsize=(6.0, 4.2))
    ax.bar([i - 0.2 for i in x], [p["scalar"]["cycles"] for p in points], 0.4,
           label="scalar values (CSR mask)", color="tab:blue")
    ax.bar([i + 0.2 for i in x], [p["blocked"]["cycles"] for p in points], 0.4,
           label="tiles (BSR mask)", color="tab:orange")
    for i, p in zip(x, points):
        ax.annotate(f"{p['speedup']:.1f}×", (i, p["scalar"]["cycles"]), ha="center",
                    va="bottom", fontsize=9)
    ax.set_xticks(list(x), [f"block {p['block']}" for p in points])
    ax.set_yscale("log")
    ax.set_ylabel("cycles")
    ax.set_title(f"Figure 16: BigBird attention, sparsity blocking ({doc['preset']})")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def failed(doc: dict[str, Any]) -> list[str]:
    """The points where a variant differs from PyTorch or blocking is not faster."""
    return [f"block {p['block']}" for p in doc["points"]
            if not (p["scalar"]["matches_pytorch"] and p["blocked"]["matches_pytorch"])
            or p["speedup"] <= 1.0]

"""Figure 15: parallelizing multi-head attention at stream level 1 (heads) and level 2 (query
rows), and 4 × 4 on both.

The workload is one multi-head attention block, dense, fused into one kernel:
``O[h] = softmax(Q[h]·K[h]ᵀ / √d)·V[h]`` for ``heads`` heads of ``seq`` queries and keys of
width ``width``. Its dataflow order visits the heads first (level 1) and the query rows second
(level 2); ``sam-parallelize`` forks either level, or both, into lanes
(``Schedule(kernels={0: {"parallel": {...}}})``, each variant rescheduled from one compile).
Every point is simulated (fast engine) and checked against PyTorch; the speedup is over one
lane, the efficiency the speedup over the lanes.

Published (``shared/reference/workloads.md``): 2.00× with 2 lanes and 4.00× with 4 at either
level, 16.0× for 4 × 4; near-linear up to 64.
"""

from __future__ import annotations

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

PUBLISHED = {("level1", 2): 2.00, ("level1", 4): 4.00, ("level2", 2): 2.00,
             ("level2", 4): 4.00, ("4x4", 16): 16.0}
"""(series, lanes) -> the published speedup."""
TARGETS = {("level1", 2): 1.9, ("level1", 4): 3.7, ("4x4", 16): 14.0}
"""(series, lanes) -> the speedup this reproduction must reach (``small`` and ``published``
presets: the tiny block has 2 heads per lane at 4 lanes, too few to hide a lane's latency)."""


@dataclass(frozen=True)
class Size(AttentionSize):
    """The attention block of one preset and the lane counts swept."""

    factors: tuple[int, ...]


PRESETS = {
    "tiny": Size(heads=8, seq=16, width=8, factors=(1, 2, 4, 8)),
    "small": Size(heads=64, seq=64, width=16, factors=(1, 2, 4, 8, 16, 32, 64)),
    "published": Size(heads=64, seq=64, width=64, factors=(1, 2, 4, 8, 16, 32, 64)),
}
"""Preset -> size. ``small`` keeps the published 64 heads and 64-token block (so 64 lanes
have a unit each at either level) with heads 16 wide; ``published`` has GPT-3's 64-wide
heads."""


class MultiHeadAttention(torch.nn.Module):
    """``softmax(Q·Kᵀ/√d)·V`` per head; ``q``, ``k``, ``v``: ``[heads, seq, width]``."""

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def inputs(size: Size, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Q, K and V, uniform in [0, 1), seeded."""
    return size.qkv(torch.rand, seed)


def measure(preset: str = "tiny", engine: str = "fast", seed: int = 0,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Compiles, simulates and checks every point; returns the figure's document."""
    import fuseflow

    size = PRESETS[preset]
    data = inputs(size, seed)
    model = MultiHeadAttention()
    with torch.no_grad():
        expected = model(*data)
    start = time.perf_counter()
    base = fuseflow.Program(model, data).compile(fuseflow.Schedule(fusion="full"))
    info = base.kernels[0]
    heads, rows = info.schedule.order[:2]
    if info.parallel_variables()[:2] != (heads, rows):
        raise RuntimeError(f"the attention kernel's two outer levels ({heads}, {rows}) are not "
                           f"both parallelizable: {info.parallel_variables()}")
    series = {"level1": [({heads: p}, p) for p in size.factors],
              "level2": [({rows: p}, p) for p in size.factors],
              "4x4": [({heads: 4, rows: 4}, 16)]}
    points = []
    one = None
    for name, variants in series.items():
        for parallel, lanes in variants:
            if progress is not None:
                progress(f"{name} × {lanes}")
            if lanes == 1 and one is not None:
                cycles, matches = one
            else:
                compiled = base if lanes == 1 else base.reschedule(0, parallel=parallel)
                result = compiled.simulate(*data, engine=engine)
                cycles = result.cycles
                matches = bool(torch.allclose(result.output, expected, rtol=1e-4, atol=1e-5))
                if lanes == 1:
                    one = (cycles, matches)
            points.append({
                "series": name, "lanes": lanes,
                "parallel": {v: f for v, f in parallel.items()} if lanes > 1 else {},
                "cycles": cycles, "speedup": round(one[0] / cycles, 3),
                "efficiency": round(one[0] / cycles / lanes, 3),
                "published": PUBLISHED.get((name, lanes)),
                "target": TARGETS.get((name, lanes)) if preset != "tiny" else None,
                "matches_pytorch": matches,
            })
    workload = size.workload(levels={"level1": heads, "level2": rows}, einsum=info.einsum)
    return study_document("fig15", preset, engine, workload, points, start)


def markdown(doc: dict[str, Any]) -> str:
    """The figure's table: cycles, speedup and efficiency per series and lane count, beside
    the published speedups and our targets."""
    w = doc["workload"]
    lines = [f"# Figure 15: parallelizing multi-head attention ({doc['preset']} preset)", "",
             f"{attention_shape(w)}, dense, fused; level 1 = heads ({w['levels']['level1']}), "
             f"level 2 = query rows ({w['levels']['level2']}); {doc['engine']} engine, "
             f"{doc['wall_seconds']:.0f} s.",
             "", "| series | lanes | cycles | speedup | efficiency | published | target | "
                 "matches PyTorch |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for p in doc["points"]:
        published = f"{p['published']:.2f}×" if p["published"] else "-"
        target = f"≥ {p['target']:.1f}×" if p["target"] else "-"
        lines.append(f"| {p['series']} | {p['lanes']} | {p['cycles']:,} | {p['speedup']:.2f}× "
                     f"| {p['efficiency']:.2f} | {published} | {target} | "
                     f"{'yes' if p['matches_pytorch'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path) -> Path:
    """Speedup against lanes for both levels (log-log), the ideal line, 4 × 4 and the
    published points."""
    fig, ax = new_figure(figsize=(6.0, 4.2))
    for name, color in (("level1", "tab:blue"), ("level2", "tab:orange")):
        pts = [p for p in doc["points"] if p["series"] == name]
        ax.plot([p["lanes"] for p in pts], [p["speedup"] for p in pts], "o-", color=color,
                label=f"{name} ({doc['workload']['levels'][name]})")
    nested = [p for p in doc["points"] if p["series"] == "4x4"]
    ax.plot([p["lanes"] for p in nested], [p["speedup"] for p in nested], "s", color="tab:green",
            markersize=8, label="4 × 4")
    top = max(p["lanes"] for p in doc["points"])
    ax.plot([1, top], [1, top], "--", color="grey", lw=0.8, label="linear")
    published = [p for p in doc["points"] if p["published"]]
    ax.plot([p["lanes"] for p in published], [p["published"] for p in published], "k_",
            markersize=14, mew=2, label="published")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("lanes")
    ax.set_ylabel("speedup over 1 lane")
    ax.set_title(f"Figure 15: multi-head attention in lanes ({doc['preset']})")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def failed(doc: dict[str, Any]) -> list[str]:
    """The points that differ from PyTorch or miss their target."""
    return [f"{p['series']} × {p['lanes']}" for p in doc["points"]
            if not p["matches_pytorch"] or (p["target"] and p["speedup"] < p["target"])]

"""The published numbers of Figures 12 and 14 (``shared/reference/workloads.md``) and the data
sets each application is swept over.

Speedups are over the unfused configuration, within one simulator: compare ratios, not cycles.
Where the published artifact gives a range (SAE, the GCN work inflation) the value is a
``(low, high)`` pair.
"""

from __future__ import annotations

SWEEP_DATASETS = {
    "sae": ("imagenet", "nih_cxr", "luna16"),
    "gcn": ("cora", "cora_ml", "dblp", "collab", "mag"),
    "graphsage": ("cora", "cora_ml", "dblp", "collab", "mag"),
    "gpt3": ("b16", "b32", "b64"),
}
"""Application -> the data sets of Figure 12, in the published order."""

PRESET_DATASETS = {("gpt3", "tiny"): ("b4",)}
"""Overrides of :data:`SWEEP_DATASETS` per (application, preset): the tiny GPT-3's 32 tokens
hold no block of 64, so it runs its own block size of 4."""

FIG12_SPEEDUP = {
    "sae": {d: {"partial": (1.00, 1.00), "full": (0.63, 0.67)}
            for d in ("imagenet", "nih_cxr", "luna16")},
    "gcn": {d: {"partial": p, "full": f} for d, p, f in (
        ("cora", 1.63, 0.29), ("cora_ml", 1.88, 0.14), ("dblp", 1.49, 0.26),
        ("collab", 2.58, 0.019), ("mag", 2.13, 0.086))},
    "graphsage": {d: {"partial": p, "full": f} for d, p, f in (
        ("cora", 2.10, 0.48), ("cora_ml", 1.85, 0.22), ("dblp", 2.02, 0.35),
        ("collab", 3.11, 0.028), ("mag", 3.92, 0.035))},
    "gpt3": {d: {"partial": p, "full": f} for d, p, f in (
        ("b16", 1.75, 2.70), ("b32", 1.65, 2.46), ("b64", 1.69, 2.52))},
}
"""Application -> data set -> configuration -> published speedup over unfused (a number, or a
``(low, high)`` range where the artifact's values look like placeholders: SAE)."""

FIG14_GCN = {
    "partial": {"flops": (None, 1.0), "bytes": (0.62, 0.79)},
    "full": {"flops": (8.5, 18.6), "bytes": (6.9, 15.8)},
}
"""GCN work normalized to unfused, as ranges over the data sets: ``(low, high)``, ``None``
where only a bound is published (per-layer FLOPs at most 1.0×)."""


def published_speedup(app: str, dataset: str, level: str):
    """The published speedup (number or range), or None where none is published."""
    return FIG12_SPEEDUP.get(app, {}).get(dataset, {}).get(level)


def fig14_reference(app: str, level: str, measure: str):
    """The published ``(low, high)`` work ratio of ``measure`` (``flops`` or ``bytes``), GCN
    only; None elsewhere."""
    if app != "gcn":
        return None
    return FIG14_GCN.get(level, {}).get(measure)


def format_reference(value) -> str:
    """``1.63×``, ``0.63–0.67×``, ``≤ 1.00×`` or ``-``."""
    if value is None:
        return "-"
    if isinstance(value, tuple):
        low, high = value
        if low is None:
            return f"≤ {high:.2f}×"
        return f"{low:.2f}×" if low == high else f"{low:.2f}–{high:.2f}×"
    return f"{value:.3g}×" if value < 0.1 else f"{value:.2f}×"

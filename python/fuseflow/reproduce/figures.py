"""Figures 12 and 14 from a sweep's points: a JSON document, a markdown table beside the
published ratios, and a PNG.

* Figure 12: speedup of partial and full fusion over unfused (cycles) per application and data
  set.
* Figure 14: work of partial and full fusion normalized to unfused: FLOPs (the ALU and reducer
  operations) and bytes moved (every read and write of coordinates, references and values).

Points left to the cost model (``fuseflow reproduce --simulate-up-to``, status ``predicted``)
and every ratio computed from one are marked: ``≈`` in the tables with a footnote, ``predicted``
in the JSON rows, hatched hollow bars in the PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fuseflow.reproduce.published import (
    fig14_reference,
    format_reference,
    published_speedup,
)
from fuseflow.reproduce.studies import new_figure, save_figure, write_study
from fuseflow.reproduce.sweep import FAILED

FIGURES = ("fig12", "fig14")
MEASURES = {"fig12": ("cycles",), "fig14": ("ops", "bytes_moved")}
FUSED = ("partial", "full")
COLORS = ("tab:blue", "tab:orange")
"""Bar colours of :data:`FUSED`."""

MODEL_ACCURACY = (
    "its error against the fast engine, measured on every application and configuration at "
    "the tiny and small presets (`docs/costmodel.md`), is a median of 0.03% or less and at "
    "most 5.0% on FLOPs, 4.3% on bytes, 1.2% on tokens and 4.1% on cycles; at the published "
    "preset, on the 20 points simulated on 2026-11-26 (`bench/results/reproduce_published`), "
    "tokens, FLOPs and bytes were exact and cycles within 0.32%")
"""The cost model's measured accuracy, quoted under figures with predicted points."""


def rows(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per application × data set: the three configurations' records and the ratios
    to unfused (``speedup``: unfused cycles over the configuration's; ``flops`` and
    ``bytes``: the configuration's work over unfused). ``predicted`` says per configuration
    whether its numbers (for a fused one: its ratios) involve a cost-model prediction."""
    grouped: dict[tuple[str, str], dict[str, dict]] = {}
    for point in points:
        grouped.setdefault((point["app"], point["dataset"]), {})[point["fusion"]] = point
    out = []
    for (app, dataset), by_level in grouped.items():
        base = by_level.get("unfused")
        row: dict[str, Any] = {"app": app, "dataset": dataset,
                               "provenance": next((p["provenance"] for p in by_level.values()
                                                   if p.get("provenance")), None),
                               "points": by_level, "speedup": {}, "flops": {}, "bytes": {},
                               "predicted": {"unfused": _predicted(base)}}
        for level in FUSED:
            row["predicted"][level] = _predicted(by_level.get(level)) or (
                level in by_level and _predicted(base))
            point = by_level.get(level)
            if not _usable(base) or not _usable(point):
                continue
            row["speedup"][level] = base["cycles"] / point["cycles"]
            if base["ops"]:
                row["flops"][level] = point["ops"] / base["ops"]
            if base["bytes_moved"]:
                row["bytes"][level] = point["bytes_moved"] / base["bytes_moved"]
        out.append(row)
    return out


def _usable(point) -> bool:
    return (point is not None and point["status"] in ("ok", "mismatch", "predicted")
            and bool(point["cycles"]))


def _predicted(point) -> bool:
    return point is not None and point["status"] == "predicted"


def document(figure: str, preset: str, points: list[dict[str, Any]], wall_seconds: float | None
             ) -> dict[str, Any]:
    """The figure's JSON: its rows with the published references and the sweep's cost."""
    table = rows(points)
    for row in table:
        row["published"] = _published(figure, row["app"], row["dataset"])
    timed = [p for p in points if p.get("wall_seconds") is not None and not _predicted(p)]
    return {
        "figure": figure,
        "preset": preset,
        "rows": table,
        "points": len(points),
        "failed": [p["key"] for p in points if p["status"] in FAILED],
        "mismatched": [p["key"] for p in points if p["status"] == "mismatch"],
        "extrapolated": [p["key"] for p in points if p.get("extrapolation")],
        "predicted": [p["key"] for p in points if _predicted(p)],
        "simulate_up_to": sorted({p["threshold"] for p in points if _predicted(p)}),
        "model_check": model_check(points),
        "sweep_wall_seconds": wall_seconds,
        "point_wall_seconds": round(sum(p["wall_seconds"] for p in timed), 1),
        "slowest": [{"key": p["key"], "wall_seconds": p["wall_seconds"]}
                    for p in sorted(timed, key=lambda p: -p["wall_seconds"])[:5]],
        "peak_rss_bytes": max((p.get("peak_rss_bytes") or 0 for p in points), default=0),
    }


def model_check(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cost model against the simulator on this sweep's simulated points that had a
    prediction: how many, and the largest relative error per measure (None without any)."""
    checked = [p for p in points if p.get("prediction") and p["status"] in ("ok", "mismatch")]
    if not checked:
        return None
    largest = {}
    for measure in ("cycles", "tokens", "ops", "bytes_moved"):
        errors = [abs(p["prediction"][measure] - p[measure]) / p[measure] for p in checked
                  if p.get(measure)]
        largest[measure] = max(errors, default=None)
    return {"points": len(checked), "max_relative_error": largest}


def _published(figure: str, app: str, dataset: str) -> dict[str, Any]:
    if figure == "fig12":
        return {level: published_speedup(app, dataset, level) for level in FUSED}
    return {level: {m: fig14_reference(app, level, m) for m in ("flops", "bytes")}
            for level in FUSED}


def markdown(doc: dict[str, Any]) -> str:
    """The figure as a markdown table beside the published ratios, with its notes."""
    lines = [f"# {_title(doc['figure'])} ({doc['preset']} preset)", ""]
    if doc["figure"] == "fig12":
        lines += ["| application | data set | provenance | unfused cycles | partial | full | "
                  "published partial | published full |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for row in doc["rows"]:
            base = row["points"].get("unfused")
            lines.append(
                f"| {row['app']} | {row['dataset']} | {row['provenance']} | "
                f"{_cycles(base)} | {_ratio(row, 'speedup', 'partial')} | "
                f"{_ratio(row, 'speedup', 'full')} | "
                f"{format_reference(row['published']['partial'])} | "
                f"{format_reference(row['published']['full'])} |")
    else:
        lines += ["| application | data set | provenance | FLOPs partial | FLOPs full | "
                  "bytes partial | bytes full | published FLOPs (partial / full) | "
                  "published bytes (partial / full) |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for row in doc["rows"]:
            pub = row["published"]
            lines.append(
                f"| {row['app']} | {row['dataset']} | {row['provenance']} | "
                f"{_ratio(row, 'flops', 'partial')} | {_ratio(row, 'flops', 'full')} | "
                f"{_ratio(row, 'bytes', 'partial')} | {_ratio(row, 'bytes', 'full')} | "
                f"{format_reference(pub['partial']['flops'])} / "
                f"{format_reference(pub['full']['flops'])} | "
                f"{format_reference(pub['partial']['bytes'])} / "
                f"{format_reference(pub['full']['bytes'])} |")
    lines += ["", *_notes(doc)]
    return "\n".join(lines) + "\n"


def _title(figure: str) -> str:
    return {"fig12": "Figure 12: speedup over unfused",
            "fig14": "Figure 14: work normalized to unfused"}[figure]


def _cycles(point) -> str:
    if point is None:
        return "-"
    if point["status"] in FAILED:
        return point["status"]
    return ("≈" if _predicted(point) else "") + f"{point['cycles']:,}"


def _ratio(row, measure: str, level: str) -> str:
    value = row[measure].get(level)
    if value is None:
        point = row["points"].get(level)
        return point["status"] if point and point["status"] in FAILED else "-"
    mismatch = row["points"][level]["status"] == "mismatch"
    return (("≈" if row["predicted"][level] else "")
            + (f"{value:.3g}×" if value < 0.1 else f"{value:.2f}×")
            + (" (mismatch)" if mismatch else ""))


def _notes(doc: dict[str, Any]) -> list[str]:
    notes = ["Ratios within one simulator: compare them with the published ratios, not the "
             "cycles. Provenance: `synthetic` data sets are seeded stand-ins with the published "
             "statistics; `cora` is the real citation graph with synthetic features."]
    if doc.get("predicted"):
        limits = " or ".join(f"{t:.3g}" for t in doc["simulate_up_to"])
        notes.append(f"≈: cost-model predictions, not simulations (`fuseflow.explore`): these "
                     f"points were predicted to simulate more than {limits} tokens "
                     f"(`--simulate-up-to`), and a ratio involving one is a prediction too; "
                     f"{MODEL_ACCURACY}. Predicted: {', '.join(doc['predicted'])}.")
    check = doc.get("model_check")
    if check:
        errors = ", ".join(f"{name} {check['max_relative_error'][m]:.1%}" for m, name in (
            ("cycles", "cycles"), ("tokens", "tokens"), ("ops", "FLOPs"),
            ("bytes_moved", "bytes")) if check["max_relative_error"][m] is not None)
        notes.append(f"Cost model against this sweep's {check['points']} simulated points that "
                     f"had a prediction: largest error {errors}.")
    if doc["extrapolated"]:
        notes.append(f"Extrapolated from models of 1 and 2 decoders (t(n) = t(1) + (n-1)·(t(2) - "
                     f"t(1)); t(1) read from the 2-decoder simulation where no kernel spans two decoders): "
                     f"{', '.join(doc['extrapolated'])}.")
    for label, keys in (("Failed, timed out or killed", doc["failed"]),
                        ("Differ from PyTorch", doc["mismatched"])):
        if keys:
            notes.append(f"{label}: {', '.join(keys)}.")
    if doc["sweep_wall_seconds"] is not None:
        notes.append(f"This sweep: {doc['sweep_wall_seconds']:.0f} s wall; points "
                     f"{doc['point_wall_seconds']:.0f} s of worker time; peak worker RSS "
                     f"{doc['peak_rss_bytes'] / 2**30:.2f} GiB.")
    if doc["slowest"]:
        notes.append("Slowest points: " + ", ".join(
            f"{s['key']} {s['wall_seconds']:.0f} s" for s in doc["slowest"]) + ".")
    return [f"- {n}" for n in notes]


def plot(doc: dict[str, Any], path) -> Path:
    """The figure as a PNG: bars of our ratios per application and data set (log scale), the
    published values as black marks (ranges as bars); ratios from cost-model predictions as
    hatched hollow bars."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    table = doc["rows"]
    labels = [f"{r['app']}\n{r['dataset']}" for r in table]
    panels = [("speedup", "speedup over unfused")] if doc["figure"] == "fig12" else [
        ("flops", "FLOPs / unfused"), ("bytes", "bytes / unfused")]
    fig, axes = new_figure(len(panels), 1, figsize=(max(6.0, 0.9 * len(table) + 2), 3.6 *
                                                    len(panels)), squeeze=False)
    width = 0.38
    for ax, (measure, ylabel) in zip(axes[:, 0], panels):
        for i, level in enumerate(FUSED):
            xs = [j + (i - 0.5) * width for j in range(len(table))]
            ys = [r[measure].get(level, float("nan")) for r in table]
            color = COLORS[i]
            bars = ax.bar(xs, ys, width, color=color)
            for bar, row in zip(bars, table):
                if row["predicted"].get(level):
                    bar.set(facecolor="none", edgecolor=color, hatch="///", lw=1.2)
            for x, row in zip(xs, table):
                ref = _reference_of(doc["figure"], row, measure, level)
                if ref is None:
                    continue
                low, high = ref
                if low == high:
                    ax.plot([x - width / 2, x + width / 2], [low, low], color="black", lw=2)
                else:
                    ax.vlines(x, low, high, color="black", lw=3)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.set_xticks(range(len(table)), labels, fontsize=7)
    # Explicit handles: a bar container's legend entry takes its first bar's (maybe hatched)
    # style.
    handles = [Patch(color=color, label=f"{level} (ours)")
               for level, color in zip(FUSED, COLORS)]
    handles.append(Line2D([], [], color="black", lw=2, label="published"))
    if doc.get("predicted"):
        handles.append(Patch(facecolor="none", edgecolor="grey", hatch="///",
                             label="cost-model prediction (≈)"))
    axes[0, 0].legend(handles=handles, fontsize=7)
    axes[0, 0].set_title(f"{_title(doc['figure'])} ({doc['preset']} preset)")
    return save_figure(fig, path)


def _reference_of(figure, row, measure, level):
    """The published value of a bar as a ``(low, high)`` pair, or None."""
    if figure == "fig12":
        value = row["published"].get(level)
    else:
        value = row["published"][level][measure]
    if value is None:
        return None
    if isinstance(value, tuple) or isinstance(value, list):
        low, high = value
        return (low if low is not None else high, high)
    return (value, value)


def write(doc: dict[str, Any], folder) -> dict[str, Path]:
    """Writes ``<figure>.json``, ``<figure>.md`` and ``<figure>.png`` into ``folder``."""
    from fuseflow.reproduce import figures

    return write_study(doc["figure"], figures, doc, folder)

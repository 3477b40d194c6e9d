"""``fuseflow reproduce fig15 | fig17``: the parallel-lanes and dataflow-order studies."""

import json
import warnings

import torch

from fuseflow.apps.base import PRESETS
from fuseflow.reproduce import fig15, fig16, fig17
from fuseflow.reproduce.studies import AttentionSize
from fuseflow.tools.cli import main

warnings.filterwarnings("ignore")


def test_fig15_tiny_measures_both_levels_and_4x4(tmp_path, capsys):
    assert main(["reproduce", "fig15", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "fig15.json").read_text())
    assert (tmp_path / "fig15.png").stat().st_size > 0
    assert "| 4x4 | 16 |" in (tmp_path / "fig15.md").read_text()
    assert "Figure 15" in capsys.readouterr().out
    points = {(p["series"], p["lanes"]): p for p in doc["points"]}
    assert set(points) == {(s, n) for s in ("level1", "level2") for n in (1, 2, 4, 8)} | {
        ("4x4", 16)}
    assert all(p["matches_pytorch"] for p in doc["points"])
    for series in ("level1", "level2"):
        speedups = [points[(series, n)]["speedup"] for n in (1, 2, 4, 8)]
        assert speedups == sorted(speedups) and speedups[1] > 1.8
    assert points[("4x4", 16)]["speedup"] > points[("level2", 4)]["speedup"] * 2
    assert points[("level1", 2)]["published"] == 2.0 and points[("4x4", 16)]["target"] is None


def test_fig15_targets_apply_to_the_published_block():
    doc = {"points": [{"series": "level1", "lanes": 4, "speedup": 3.5, "target": 3.7,
                       "matches_pytorch": True},
                      {"series": "level2", "lanes": 4, "speedup": 3.9, "target": None,
                       "matches_pytorch": False}]}
    assert fig15.failed(doc) == ["level1 × 4", "level2 × 4"]


def test_fig17_simulates_every_legal_order_of_the_nested_spmms(tmp_path, capsys):
    assert main(["reproduce", "fig17", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "fig17.json").read_text())
    assert (tmp_path / "fig17.png").stat().st_size > 0
    assert len(doc["orders"]) == 24 and doc["published_legal"] == 15
    legal = [r for r in doc["orders"] if r["legal"]]
    assert doc["legal"] == len(legal) >= 15
    assert all(r["matches_pytorch"] and r["cycles"] > 0 for r in legal)
    assert all(r["reason"] for r in doc["orders"] if not r["legal"])
    assert doc["best_worst_ratio"] > 5
    # each order streams its tensors in its own layout: i before j reads A row-major
    ijkl = next(r for r in doc["orders"] if r["order"] == "ijkl")
    assert ijkl["layouts"] == {"A": "csr", "B": "csr", "C": "csr"}
    assert next(r for r in doc["orders"] if r["order"] == "lkji")["output"].startswith("Xᵀ")
    text = fig17.markdown(doc)
    assert f"**{doc['legal']} legal orders** (published: 15)" in text


def test_attention_studies_size_every_preset_of_the_command():
    """Figures 15 and 16 have one attention block per ``--preset`` choice; its inputs and
    document come from the shared :class:`~fuseflow.reproduce.studies.AttentionSize`."""
    for module in (fig15, fig16):
        assert tuple(module.PRESETS) == PRESETS
        for size in module.PRESETS.values():
            assert isinstance(size, AttentionSize)
            assert size.workload(mask="m") == {"heads": size.heads, "seq": size.seq,
                                               "width": size.width, "mask": "m"}
            q, k, v = size.qkv(torch.rand, 0)
            assert q.shape == v.shape == (size.heads, size.seq, size.width)
            assert not torch.equal(q, k) and torch.equal(size.qkv(torch.rand, 0)[2], v)

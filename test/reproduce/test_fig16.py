"""``fuseflow reproduce fig16``: BigBird attention, scalar against blocked values."""

import json
import warnings

from fuseflow.reproduce import fig16
from fuseflow.tools.cli import main

warnings.filterwarnings("ignore")


def test_fig16_tiny_measures_scalar_and_blocked_at_each_block(tmp_path, capsys):
    assert main(["reproduce", "fig16", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "fig16.json").read_text())
    assert (tmp_path / "fig16.png").stat().st_size > 0
    assert "Figure 16" in capsys.readouterr().out
    assert [p["block"] for p in doc["points"]] == [4, 8]
    for p in doc["points"]:
        assert p["scalar"]["matches_pytorch"] and p["blocked"]["matches_pytorch"]
        assert p["blocked"]["cycles"] < p["scalar"]["cycles"]
        assert p["blocked"]["tokens"] < p["scalar"]["tokens"]
    speedups = [p["speedup"] for p in doc["points"]]
    assert speedups == sorted(speedups)             # bigger tiles, fewer and longer steps
    assert "| 8 |" in (tmp_path / "fig16.md").read_text()


def test_fig16_fails_when_blocking_is_not_faster():
    point = {"block": 16, "speedup": 0.9, "scalar": {"matches_pytorch": True},
             "blocked": {"matches_pytorch": True}}
    assert fig16.failed({"points": [point]}) == ["block 16"]

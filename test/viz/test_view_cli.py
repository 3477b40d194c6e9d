"""``fuseflow view``: kernels, applications and MLIR files to HTML or DOT; option errors."""

import json
import re

import pytest

from fuseflow.tools.cli import main


def _data(path):
    page = path.read_text()
    return json.loads(re.search(r'id="fuseflow-data">(.*?)</script>', page, re.S).group(1))


def test_kernel_view_is_simulated(tmp_path, capsys):
    out = tmp_path / "spmm.html"
    assert main(["view", "spmm", "--sparsity", "0.8", "-o", str(out), "--open", "all"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    data = _data(out)
    assert data["title"] == "spmm · sparsity 0.8" and data["open"] == ["k0"]
    kernel = data["root"]["children"][2]
    assert kernel["stats"]["cycles"] > 0 and all("stats" in c for c in kernel["children"]
                                                  if c["kind"] not in ("tensor", "result"))


def test_application_view_as_dot(tmp_path):
    out = tmp_path / "gcn.dot"
    assert main(["view", "gcn", "--fusion", "partial", "--no-simulate", "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith('digraph "gcn · tiny · partial"') and text.count("subgraph") == 2


def test_mlir_files_at_sam_and_linalg_level(spmm_relu, tmp_path):
    for level in ("sam", "linalg"):
        source = tmp_path / f"{level}.mlir"
        source.write_text(spmm_relu.compiled.mlir(level))
        out = tmp_path / f"{level}.html"
        assert main(["view", str(source), "-o", str(out)]) == 0
        kernels = [c["id"] for c in _data(out)["root"]["children"] if c["kind"] == "kernel"]
        assert kernels == ["k0", "k1"]


@pytest.mark.parametrize("argv, message", [
    (["spmm", "--preset", "small"], "--preset does not apply to kernel 'spmm'"),
    (["gcn", "--sparsity", "0.3", "--scale", "2"], "--sparsity and --scale do not apply"),
    (["nope"], "unknown target 'nope'; valid: a .mlir file, sae, gcn"),
    (["spmm", "--format", "svg"], "invalid value 'svg' for view format; valid choices: html, dot"),
    (["spmm", "--engine", "warp"], "unknown engine 'warp'; valid: fast, reference"),
    (["spmm", "--open", "k3"], "no kernel named 'k3'; valid: all, k0"),
    (["missing.mlir"], "no such file: missing.mlir"),
])
def test_errors_name_the_problem_and_the_choices(argv, message, tmp_path, capsys):
    assert main(["view", *argv, "-o", str(tmp_path / "x.html")]) == 2
    assert message in capsys.readouterr().err


def test_malformed_mlir_is_a_located_error(tmp_path, capsys):
    source = tmp_path / "bad.mlir"
    source.write_text("func.func @main( {\n")
    assert main(["view", str(source), "-o", str(tmp_path / "x.html")]) == 2
    assert "bad.mlir" in capsys.readouterr().err

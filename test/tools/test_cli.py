"""The ``fuseflow`` command: option validation before compiling, the results JSON schema,
plots and reports, logging, version."""

import json
import subprocess
import sys

import jsonschema
import pytest

import fuseflow
from fuseflow.sim.arch import Arch
from fuseflow.sim.memory import MemoryModel
from fuseflow.tools import results
from fuseflow.tools.cli import main
from fuseflow.tools.options import OptionError, parse_arch, parse_formats

SCHEMA = json.loads(results.SCHEMA_PATH.read_text())


def validate(doc):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)


@pytest.fixture
def no_compile(monkeypatch):
    """Fails the test if anything is compiled: bad options must be rejected before."""
    def compile_called(*args, **kwargs):
        raise AssertionError("compiled although an option was invalid")
    monkeypatch.setattr("fuseflow.compiler.compile", compile_called)
    monkeypatch.setattr("fuseflow.compiler.Program", compile_called)


@pytest.mark.parametrize("argv, message", [
    (["run", "gcn", "--sparsity", "0.5"], "--sparsity does not apply to application 'gcn'"),
    (["run", "gcn", "--scale", "2"], "--scale does not apply to application"),
    (["run", "spmm", "--fusion", "full"], "--fusion does not apply to kernel 'spmm'"),
    (["run", "all", "--dataset", "cora", "--preset", "small"],
     "--dataset, --preset does not apply to kernel 'all'"),
    (["run", "spmm", "--sparsity", "1.5"], "--sparsity must be in [0, 1]"),
    (["run", "spmm", "--scale", "0"], "--scale must be >= 1"),
    (["run", "spmm", "--workers", "0"], "--workers must be >= 1"),
    (["run", "nonesuch"], "unknown kernel or application 'nonesuch'; valid: all, add"),
    (["run", "spmm", "--arch", "latency=fast"], "--arch latency: expected an integer"),
    (["run", "spmm", "--arch", "cost.bogus=1:1"],
     "--arch cost.bogus: unknown block kind 'bogus'; valid kinds"),
    (["run", "spmm", "--arch", "latency=0"], "--arch: latency must be an int >= 1, got 0"),
    (["run", "spmm", "--formats", "C=csr"], "kernel 'spmm' has no input or parameter 'C'; "
                                            "valid names: A, B"),
    (["run", "spmm", "--json", "/nonexistent-folder/out.json"], "folder '/nonexistent-folder'"),
    (["run", "gcn", "--preset", "huge"],
     "invalid value 'huge' for preset; valid choices: tiny, small, published"),
    (["run", "gcn", "--fusion", "fastest"],
     "invalid value 'fastest' for fusion configuration; valid choices: unfused"),
    (["run", "gcn", "--dataset", "missing/graph.mtx"], "no graph file 'missing/graph.mtx'"),
    (["run", "gcn", "--formats", "nonesuch=csr"], "application 'gcn' has no input or parameter"),
    (["run", "spmm", "--dense-weights"], "--dense-weights does not apply to kernel 'spmm'"),
])
def test_invalid_options_are_rejected_before_compiling(no_compile, capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("fuseflow: error: ") and message in err
    assert "Traceback" not in err


def test_unknown_engine_is_a_usage_error(no_compile, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "spmm", "--engine", "bogus"])
    assert exit_.value.code == 2
    assert "invalid choice: 'bogus' (choose from 'reference', 'fast')" in capsys.readouterr().err


def test_arch_settings():
    arch = parse_arch(["fifo_depth=4,latency=2", "cost.alu=3:0", "memory.latency_cycles=7"])
    assert arch == Arch(fifo_depth=4, latency=2, block_costs={"alu": (3, 0)},
                        memory=MemoryModel(latency_cycles=7))
    assert parse_arch(None) == Arch()
    assert parse_arch(["memory=on"]).memory == MemoryModel()
    assert parse_arch(["fifo_depth=none"]).fifo_depth is None
    assert parse_arch(["memory.overlap=false"]).memory.overlap is False
    with pytest.raises(OptionError, match="memory=off contradicts"):
        parse_arch(["memory=off,memory.latency_cycles=3"])
    with pytest.raises(OptionError, match="expected LATENCY:INTERVAL"):
        parse_arch(["cost.alu=3"])
    with pytest.raises(OptionError, match="expected KEY=VALUE, got 'latency'"):
        parse_arch(["latency"])
    assert parse_formats(["A=csr,B=bsr:2x2", "A=csc"]) == {"A": "csc", "B": "bsr:2x2"}


def test_kernel_results_follow_the_schema(tmp_path, capsys):
    out = tmp_path / "spmm.json"
    assert main(["run", "spmm", "--sparsity", "0.8", "--seed", "3", "--arch", "latency=2",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["fuseflow_version"] == fuseflow.__version__
    assert (doc["seed"], doc["engine"], doc["arch"]["latency"]) == (3, "fast", 2)
    [run] = doc["runs"]
    assert (run["target"], run["status"], run["sparsity"]) == ("spmm", "ok", 0.8)
    assert run["cycles"] == sum(k["total_cycles"] for k in run["kernels"])
    kernel = run["kernels"][0]
    assert kernel["blocks"] and kernel["summary"]["blocks"] == len(kernel["blocks"])
    assert run["totals"]["ops"] == sum(b["ops"] for k in run["kernels"] for b in k["blocks"])
    printed = capsys.readouterr().out
    assert "spmm" in printed and "match" in printed and "1 of 1 outputs match PyTorch" in printed


def test_application_report_follows_the_schema_and_plots(tmp_path, capsys):
    folder = tmp_path / "report"
    assert main(["run", "sae", "--report", str(folder)]) == 0
    doc = json.loads((folder / "results.json").read_text())
    validate(doc)
    assert [r["configuration"] for r in doc["runs"]] == ["unfused", "partial", "full"]
    assert all(r["status"] == "ok" and r["matches_pytorch"] for r in doc["runs"])
    assert doc["speedups"]["sae"]["unfused"] == 1.0
    unfused, _, full = doc["runs"]
    assert doc["speedups"]["sae"]["full"] == round(unfused["cycles"] / full["cycles"], 4)
    assert (folder / "cycles.png").read_bytes().startswith(b"\x89PNG")
    printed = capsys.readouterr().out
    assert "speedup" in printed and "cycles per kernel" in printed
    assert f"results: {folder / 'results.json'}" in printed
    assert f"plot: {folder / 'cycles.png'}" in printed

    image = tmp_path / "again.png"
    assert main(["plot", str(folder / "results.json"), "-o", str(image)]) == 0
    assert image.read_bytes().startswith(b"\x89PNG")


def test_application_results_name_the_workload_and_the_data_provenance(tmp_path, capsys):
    out = tmp_path / "gcn.json"
    assert main(["run", "gcn", "--fusion", "partial", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "on karate (real), preset tiny" in printed
    assert "workload: published, declared sparse (csr: layer1.weight, layer2.weight)" in printed
    [run] = json.loads(out.read_text())["runs"]
    assert (run["provenance"], run["dense_weights"], run["extrapolation"]) == ("real", False, None)
    assert run["schedule"]["formats"] == {"layer1.weight": "csr", "layer2.weight": "csr"}
    assert main(["run", "gcn", "--dataset", "cora_ml", "--fusion", "partial", "--dense-weights",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "on cora_ml (synthetic)" in printed and "dense variant (--dense-weights)" in printed
    doc = json.loads(out.read_text())
    validate(doc)
    [dense] = doc["runs"]
    assert (dense["provenance"], dense["dense_weights"]) == ("synthetic", True)
    # The dense variant declares the pruned weights dense, explicitly.
    assert dense["schedule"]["formats"] == {"layer1.weight": "dense", "layer2.weight": "dense"}


def test_list_labels_every_synthetic_data_set(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): line for line in printed.splitlines()
            if line.count("│") == 4}
    assert "real graph, synthetic features" in rows["cora"]
    assert "synthetic" in rows["dblp"] and "synthetic" in rows["imagenet"]
    assert rows["karate"].rstrip(" │").endswith("real")


def test_failed_runs_follow_the_schema():
    run = results.Run("gcn", "application", "full", {"fusion": "full", "order": [],
                                                     "formats": {}},
                      dataset="karate", preset="tiny", error="simulate failed: StreamError: x")
    doc = results.document([run], command=["fuseflow", "run", "gcn"], seed=0, engine="fast",
                           arch=Arch(memory=MemoryModel()))
    validate(doc)
    assert doc["speedups"] == {}
    run.error = None
    with pytest.raises(jsonschema.ValidationError):
        validate(results.document([run], command=[], seed=0, engine="fast", arch=Arch()))


def test_plot_rejects_other_files(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text('{"records": []}')
    assert main(["plot", str(other)]) == 2
    assert "is not a FuseFlow results file" in capsys.readouterr().err


def test_verbose_shows_fuseflow_progress_not_third_party_debug(capsys):
    assert main(["-v", "run", "scale"]) == 0
    err = capsys.readouterr().err
    assert "INFO fuseflow.tools.execute: compiled scale" in err
    assert "DEBUG" not in err and "torch_mlir" not in err


def test_version_and_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "fuseflow", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"fuseflow {fuseflow.__version__}"
    assert fuseflow.__version__[0].isdigit()
    assert {"compile", "Schedule", "Arch"} <= set(dir(fuseflow))


def test_application_runs_on_a_graph_file(tmp_path, capsys):
    import numpy as np

    ring = np.array([[0, 1, 2, 3, 4, 5, 0, 2], [1, 2, 3, 4, 5, 0, 3, 5]])
    path = tmp_path / "ring.npz"
    np.savez(path, edge_index=np.concatenate([ring, ring[::-1]], axis=1),
             x=np.eye(6, 3, dtype=np.float32))
    out = tmp_path / "ring.json"
    assert main(["run", "gcn", "--dataset", str(path), "--fusion", "partial",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate(doc)
    [run] = doc["runs"]
    assert run["status"] == "ok" and run["dataset"].startswith("ring (")
    # 16 directed edges and the 6 self loops of the GCN normalization.
    assert "adjacency 6x6 (22 non-zeros), features 6x3" in capsys.readouterr().out
    assert main(["run", "sae", "--dataset", str(path)]) == 2
    assert "'sae' does not run on graph files" in capsys.readouterr().err


def test_report_writes_a_graph_view_per_compiled_configuration(tmp_path):
    from fuseflow.tools.execute import Outcome
    from fuseflow.tools.report import write_report

    class Viewable:
        """Stands for a CompiledModel with the graph view (fuseflow.viz)."""

        def view(self, path, result=None, *, title="model"):
            path.write_text(f"<html>{title}: {result}</html>")
            return path

    done = results.Run("gcn", "application", "full", {"fusion": "full", "order": [],
                                                      "formats": {}}, status="ok", cycles=10,
                       kernels=[{"name": "g0:all", "total_cycles": 10}])
    failed = results.Run("gcn", "application", "partial", done.schedule, error="failed")
    doc = results.document([done, failed], command=[], seed=0, engine="fast", arch=Arch())
    written = write_report(doc, [Outcome(done, Viewable(), "stats"), Outcome(failed)],
                           tmp_path / "r")
    [view] = written["views"]
    assert view == tmp_path / "r" / "graph-gcn-full.html"
    assert view.read_text() == "<html>gcn full: stats</html>"
    assert written["plot"] == [tmp_path / "r" / "cycles.png"]

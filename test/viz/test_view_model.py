"""The view model of a compiled model: kernels, blocks, streams and the simulation's statistics,
each block linked to its sam op and PyTorch line; the HTML page and the DOT export."""

import json
import math
import re
import shutil
import subprocess

import pytest

from fuseflow.viz import ViewError, build_view, render_dot, render_html, save_view, view_of


def test_model_level_nodes_and_edges(spmm_relu):
    view = view_of(spmm_relu.compiled, spmm_relu.result)
    kinds = [(c.id, c.kind) for c in view.root.children]
    assert kinds == [("in:A", "input"), ("in:B", "input"), ("k0", "kernel"), ("k1", "kernel"),
                     ("out:0", "output")]
    edges = {(view.root.children[e.src].id, view.root.children[e.dst].id) for e in view.root.edges}
    assert edges == {("in:A", "k0"), ("in:B", "k0"), ("k0", "k1"), ("k1", "out:0")}
    assert view.root.stats["cycles"] == spmm_relu.result.cycles


def test_blocks_carry_the_simulators_names_and_statistics(spmm_relu):
    view = view_of(spmm_relu.compiled, spmm_relu.result)
    for kernel_run, kernel in zip(spmm_relu.result.run.kernels, view.root.children[2:4]):
        blocks = [c for c in kernel.children if c.kind not in ("tensor", "result")]
        assert [b.name for b in blocks] == [b.name for b in kernel_run.graph.blocks]
        for node in blocks:
            stats = kernel_run.result.blocks[node.name]
            assert node.stats["cycles"] == stats.cycles
            assert node.stats["tokens_out"] == sum(stats.tokens_out.values())
            assert node.stats["ops"] == stats.ops
        assert kernel.stats["cycles"] == kernel_run.result.cycles
        shares = sum(b.stats["share"] for b in blocks)
        assert shares == pytest.approx(1.0)
        # every stream is an edge carrying the producer's token count
        for e in kernel.edges:
            src, dst = kernel.children[e.src], kernel.children[e.dst]
            if e.label:
                assert e.tokens == kernel_run.result.blocks[src.name].tokens_out[e.label]
                assert e.label in kernel_run.graph.producers() and dst.kind != "tensor"


def test_blocks_link_to_their_sam_op_and_pytorch_line(spmm_relu):
    view = view_of(spmm_relu.compiled, spmm_relu.result)
    k0 = view.root.children[2]
    by_name = {n.name: n for n in k0.children}
    graph = spmm_relu.result.run.kernels[0].graph
    producers = graph.producers()
    for block in graph.blocks:
        node = by_name[block.name]
        if block.kind == "broadcast":         # added by the loader: shows the stream's producer
            assert node.op == by_name[producers[block.inputs[0]].name].op
        else:
            assert re.match(r'(%\S+ = )?"sam\.(\w+)"\(', node.op).group(2) == block.kind
        frame = node.loc.source_frame()
        assert frame.file.endswith("conftest.py") and frame.line == spmm_relu.line
        assert node.loc.source_line() == \
            "return torch.relu(A @ B)   # the view links every block here"


def test_without_a_simulation_there_are_no_statistics(spmm_relu):
    view = build_view(spmm_relu.compiled.module, input_names=spmm_relu.compiled.input_names)
    assert all(n.stats is None for n in view.root.walk())
    assert all(e.tokens is None for n in view.root.walk() for e in n.edges)


def test_errors_name_the_problem(spmm_relu):
    with pytest.raises(ViewError, match="3 input names for 2 function arguments"):
        build_view(spmm_relu.compiled.module, input_names=["a", "b", "c"])
    with pytest.raises(ViewError, match="no kernel named 'k7'; valid: all, k0, k1"):
        view_of(spmm_relu.compiled, open=("k7",))
    with pytest.raises(ValueError, match="valid choices: html, dot"):
        spmm_relu.compiled.view("/dev/null", format="svg")


def test_html_page_is_self_contained(spmm_relu, tmp_path):
    path = spmm_relu.compiled.view(tmp_path / "v.html", spmm_relu.result, open=("k1",))
    page = path.read_text()
    # no fetch of anything: no external script, style, image or font
    assert not re.search(r"<(script|link|img)[^>]*\s(src|href)=", page)
    assert "url(" not in page and "@import" not in page
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}         # an XML namespace name, never fetched
    data = json.loads(re.search(r'id="fuseflow-data">(.*?)</script>', page, re.S).group(1))
    assert data["open"] == ["k1"] and data["root"]["children"][2]["id"] == "k0"
    assert len(page) < 200_000


def test_html_escapes_names_that_could_close_the_script(spmm_relu):
    view = view_of(spmm_relu.compiled, title="</script><b>x")
    page = render_html(view)
    assert page.count("</script>") == 2 and "<b>x" not in page


def test_dot_export_has_a_cluster_per_kernel(spmm_relu, tmp_path):
    view = view_of(spmm_relu.compiled, spmm_relu.result)
    text = render_dot(view)
    assert text.count("subgraph \"cluster_k") == 2
    assert re.search(r'"k0/spacc\w*" \[label="spacc\w*\\n\d+ cycles', text)
    path = save_view(view, tmp_path / "v.dot")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' is not installed")
    svg = subprocess.run(["dot", "-Tsvg", str(path)], capture_output=True, text=True, check=True)
    assert "<svg" in svg.stdout and "cluster_k1" in svg.stdout and "spacc" in svg.stdout


def test_without_a_path_the_view_is_shown_inline_in_jupyter(spmm_relu):
    shown = spmm_relu.compiled.view(result=spmm_relu.result)._repr_html_()
    assert shown.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;')
    assert "<script" not in shown and "&quot;k0&quot;" in shown


def test_infinite_attributes_become_text_in_strict_json():
    from fuseflow.viz.model import Node, View

    alu = Node("k0/alu0", "alu0", "alu", attrs={"op": "max", "scalar": -math.inf})
    kernel = Node("k0", "k0", "kernel", children=[alu])
    page = render_html(View("t", Node("model", "m", "model", children=[kernel])))
    text = re.search(r'id="fuseflow-data">(.*?)</script>', page, re.S).group(1)
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert data["root"]["children"][0]["children"][0]["attrs"]["scalar"] == "-inf"

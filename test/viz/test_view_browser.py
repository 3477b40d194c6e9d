"""The HTML view in a real headless Chromium: load, open a kernel with the mouse, inspect a
block, search, follow a link to a node, take a screenshot."""

import struct

import pytest

from fuseflow.viz.browser import Browser, BrowserError, find_chromium

try:
    find_chromium()
except BrowserError as err:
    pytest.skip(str(err), allow_module_level=True)

IDS = "[...document.querySelectorAll('#viewport .node')].map(e => e.dataset.id)"


def centre(browser, selector):
    return browser.evaluate(f"(() => {{ const r = document.querySelector({selector!r})"
                            ".getBoundingClientRect();"
                            " return [r.x + r.width / 2, r.y + r.height / 2]; })()")


@pytest.fixture(scope="module")
def page(spmm_relu, tmp_path_factory):
    return spmm_relu.compiled.view(tmp_path_factory.mktemp("view") / "model.html",
                                   spmm_relu.result)


@pytest.fixture(scope="module")
def browser():
    with Browser(width=1400, height=900) as b:
        yield b


def test_open_a_kernel_inspect_a_block_and_screenshot(browser, page, spmm_relu, tmp_path):
    browser.open(page)
    assert set(browser.evaluate(IDS)) == {"in:A", "in:B", "k0", "k1", "out:0"}
    assert "2 kernels" in browser.evaluate("document.getElementById('summary').textContent")

    browser.click(*centre(browser, '[data-toggle="k0"]'))
    browser.click(*centre(browser, "#fit"))           # the whole kernel in the window
    graph = spmm_relu.result.run.kernels[0].graph
    stats = spmm_relu.result.run.kernels[0].result.blocks
    shown = set(browser.evaluate(IDS))
    assert {f"k0/{b.name}" for b in graph.blocks} <= shown
    assert not any(i.startswith("k1/") for i in shown)          # k1 stays closed
    spacc = next(b.name for b in graph.blocks if b.kind == "spacc")
    text = browser.evaluate(f"document.querySelector('[data-id=\"k0/{spacc}\"]').textContent")
    assert f"{stats[spacc].cycles:,} cyc" in text
    assert browser.evaluate("document.querySelectorAll('#viewport .edge.crit').length") > 0

    browser.click(*centre(browser, f'[data-id="k0/{spacc}"] rect'))
    panel = browser.evaluate("document.getElementById('panel').innerText")
    assert '"sam.spacc"' in panel and "return torch.relu(A @ B)" in panel
    assert f"conftest.py:{spmm_relu.line}" in panel and f"{stats[spacc].ops:,}" in panel
    assert browser.evaluate("location.hash") == f"#node=k0/{spacc}"

    shot = browser.screenshot(tmp_path / "view.png")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1400, 900)
    assert len(data) > 20_000                       # a drawing, not a blank page

    browser.click(*centre(browser, '[data-toggle="k0"]'))
    assert set(browser.evaluate(IDS)) == {"in:A", "in:B", "k0", "k1", "out:0"}


def test_search_reveals_a_block_inside_a_closed_kernel(browser, page, spmm_relu):
    browser.open(page)
    browser.click(*centre(browser, "#search"))
    browser.type_text("value_write")
    results = browser.evaluate(
        "[...document.querySelectorAll('#results li')].map(e => e.dataset.id)")
    writers = [f"{k.name}/{b.name}" for k in spmm_relu.result.run.kernels
               for b in k.graph.blocks if b.kind == "value_write"]
    assert sorted(results) == sorted(writers)
    browser.click(*centre(browser, f'#results li[data-id="{writers[1]}"]'))
    assert browser.evaluate(f"document.querySelector('#viewport [data-id=\"{writers[1]}\"]')"
                            ".classList.contains('sel')")
    assert browser.evaluate("document.querySelector('#panel h2').textContent") == \
        writers[1].split("/")[1]


def test_a_link_to_a_node_opens_its_kernel(browser, page, spmm_relu):
    graph = spmm_relu.result.run.kernels[1].graph
    alu = next(b.name for b in graph.blocks if b.kind == "alu")
    browser.open(page.as_uri() + f"#node=k1/{alu}")
    shown = set(browser.evaluate(IDS))
    assert f"k1/{alu}" in shown and not any(i.startswith("k0/") for i in shown)
    assert "relu" in browser.evaluate("document.getElementById('panel').innerText")


def test_a_large_kernel_draws_only_the_boxes_near_the_window(browser, tmp_path):
    from fuseflow.viz import save_view
    from fuseflow.viz.model import Edge, Node, View

    kernel = Node("big", "big", "kernel")
    for i in range(3000):
        kernel.children.append(Node(f"big/b{i}", f"alu{i}", "alu"))
        if i:
            kernel.edges.append(Edge(i - 1 - (i % 3 == 0 and i > 5) * 5, i, f"s{i}"))
    root = Node("model", "m", "model", children=[kernel])
    page = save_view(View("big", root, open=("big",)), tmp_path / "big.html")
    browser.open(page)                               # fitted: all 3000 boxes, no text
    assert len(browser.evaluate(IDS)) == 3000
    assert browser.evaluate("document.querySelectorAll('#viewport .node text').length") == 0
    assert browser.evaluate("fuseflowView.reveal('big/b2999')")   # zoomed in on one block
    drawn = browser.evaluate(IDS)
    assert "big/b2999" in drawn and len(drawn) < 300  # the window's surroundings only
    assert "alu2999" in browser.evaluate("document.querySelector('#viewport .sel').textContent")

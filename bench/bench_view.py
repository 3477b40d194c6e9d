"""Time to open and use the dataflow-graph view in headless Chromium.

Cases: synthetic views of 10,000 blocks (``--kernels`` kernels of ``--blocks`` blocks each, and
the same blocks in one kernel: the worst case for opening), and the GPT-3 application at the
``small`` preset (compiled; simulated with the fast engine unless ``--no-simulate``). The
synthetic graphs are DAGs shaped like lowered kernels (each block reads one or two streams
of the 30 blocks before it) with made-up statistics; only their size matters here.

Per case: the HTML size, the Python time to build and write the page, and in the browser the
time from navigation to the load event (``open_s``), the page script's own time to its first
drawing (``first_render_ms``: JSON parse, layout, SVG), navigation to the second animation
frame after it (``painted_ms``, the page on screen), opening the largest kernel (``expand_ms``:
layout, SVG, and the browser's own layout of it), opening every kernel (``expand_all_ms``)
and a search (``search_ms``). One run; prints a table and writes JSON.

    python bench/bench_view.py                             # JSON to bench/results/view.json
    python bench/bench_view.py --screenshots docs/         # also the GPT-3 picture for docs
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import warnings
from pathlib import Path

from bench_common import write_json

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "view.json"
KINDS = ("scan", "repsiggen", "repeat", "intersect", "array", "alu", "reduce", "spacc",
         "crddrop", "level_write", "value_write", "locate", "union")


def synthetic_kernel(name: str, blocks: int, rng: random.Random):
    """A kernel node of ``blocks`` blocks with random edges to recent blocks and statistics."""
    from fuseflow.viz.model import Edge, Node

    kernel = Node(name, name, "kernel", f"synthetic, {blocks} blocks", attrs={"blocks": blocks})
    clock = 0
    for i in range(blocks):
        clock += rng.randint(0, 40)
        tokens = rng.randint(10, 100_000)
        kernel.children.append(Node(f"{name}/b{i}", f"{KINDS[i % len(KINDS)]}{i}",
                                    KINDS[i % len(KINDS)], op=f'"sam.{KINDS[i % len(KINDS)]}"()',
                                    stats={"cycles": clock, "steps": tokens, "tokens_in": tokens,
                                           "tokens_out": tokens, "ops": rng.randint(0, tokens),
                                           "bytes_read": 0, "bytes_written": 0, "critical": 0,
                                           "share": 0.0}))
        if i:
            for src in rng.sample(range(max(0, i - 30), i), min(i, rng.randint(1, 2))):
                kernel.edges.append(Edge(src, i, f"s{src}_{i}", tokens))
    kernel.stats = {"cycles": clock, "total_cycles": clock, "share": 0.0, "blocks": blocks,
                    "ops": 0, "tokens": 0}
    return kernel


def synthetic_view(kernels: int, blocks: int, seed: int = 0):
    """A chain of ``kernels`` synthetic kernels between one input and one output."""
    from fuseflow.viz.model import Edge, Node, View

    rng = random.Random(seed)
    root = Node("model", "synthetic", "model", stats={"cycles": 0})
    root.children.append(Node("in:x", "x", "input"))
    for k in range(kernels):
        root.children.append(synthetic_kernel(f"k{k}", blocks, rng))
        root.edges.append(Edge(k, k + 1))
    root.children.append(Node("out:0", "output 0", "output"))
    root.edges.append(Edge(kernels, kernels + 1))
    total = sum(c.stats["total_cycles"] for c in root.children if c.stats)
    root.stats["cycles"] = total
    for c in root.children:
        if c.stats:
            c.stats["share"] = c.stats["total_cycles"] / total
    return View(f"synthetic {kernels} x {blocks}", root)


def gpt3_view(preset: str, fusion: str, simulate: bool):
    """The view of the GPT-3 application, and the seconds to compile and to simulate it."""
    import fuseflow
    from fuseflow.apps import get_application
    from fuseflow.viz import view_of

    app = get_application("gpt3")
    model, inputs = app.build(preset)
    start = time.perf_counter()
    plan = app.plan(model)          # the published workload: its sparse declarations
    compiled = fuseflow.compile(model, inputs, plan.schedule(fusion), plan=plan)
    compile_s = time.perf_counter() - start
    result, simulate_s = None, None
    if simulate:
        start = time.perf_counter()
        result = compiled.simulate(*inputs, engine="fast")
        simulate_s = time.perf_counter() - start
    return view_of(compiled, result, f"gpt3 · {preset} · {fusion}"), compile_s, simulate_s


def measure(view, browser, folder: Path, shot: Path | None = None) -> dict:
    """Writes ``view`` and times it in ``browser`` (see the module docstring)."""
    from fuseflow.viz import save_view

    start = time.perf_counter()
    path = save_view(view, folder / "view.html")
    write_s = time.perf_counter() - start
    blocks = sum(len(k.children) for k in view.root.children)
    largest = max(view.root.children, key=lambda k: len(k.children))
    row = {"case": view.title, "kernels": sum(k.kind == "kernel" for k in view.root.children),
           "nodes": blocks, "largest_kernel": largest.id,
           "largest_kernel_nodes": len(largest.children),
           "html_bytes": path.stat().st_size, "write_s": round(write_s, 3)}
    row["open_s"] = round(browser.open(path), 3)
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    timings = browser.evaluate("window.fuseflowView.timings")
    row["first_render_ms"] = round(timings["first_render_ms"], 1)
    row["painted_ms"] = round(timings["painted_ms"], 1)
    row["expand_ms"] = round(browser.evaluate(
        "(() => { const t = performance.now(); fuseflowView.expand(%s);"
        " document.getElementById('viewport').getBBox(); return performance.now() - t; })()"
        % json.dumps(largest.id)), 1)
    if shot is not None:
        # Selected, so the panel shows its statistics, source line and op: the block adding
        # most to the critical path, or without a simulation the kernel's first ALU.
        ranked = [c for c in largest.children if c.stats and c.stats.get("share")]
        pick = max(ranked, key=lambda c: c.stats["share"]) if ranked else next(
            (c for c in largest.children if c.kind == "alu"), largest)
        browser.evaluate("fuseflowView.reveal(%s)" % json.dumps(pick.id))
        browser.screenshot(shot)
    row["search_ms"] = round(browser.evaluate(
        "(() => { const t = performance.now(); fuseflowView.search('alu');"
        " return performance.now() - t; })()"), 1)
    row["expand_all_ms"] = round(browser.evaluate(
        "(() => { const t = performance.now(); fuseflowView.expandAll();"
        " document.getElementById('viewport').getBBox(); return performance.now() - t; })()"), 1)
    row["svg_elements_all_open"] = browser.evaluate(
        "document.getElementById('viewport').getElementsByTagName('*').length")
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=20)
    parser.add_argument("--blocks", type=int, default=500)
    parser.add_argument("--preset", default="small", help="GPT-3 preset")
    parser.add_argument("--fusion", default="partial", help="GPT-3 fusion configuration")
    parser.add_argument("--no-simulate", dest="simulate", action="store_false")
    parser.add_argument("--no-gpt3", dest="gpt3", action="store_false")
    parser.add_argument("--screenshots", type=Path, help="folder for the GPT-3 screenshot")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")

    from fuseflow.viz.browser import Browser

    rows = []
    with Browser(width=1600, height=1000) as browser, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kernels, blocks in ((args.kernels, args.blocks), (1, args.kernels * args.blocks)):
            start = time.perf_counter()
            view = synthetic_view(kernels, blocks)
            row = {"build_s": round(time.perf_counter() - start, 3)}
            row.update(measure(view, browser, folder))
            rows.append(row)
            print(json.dumps(row), flush=True)
        if args.gpt3:
            start = time.perf_counter()
            view, compile_s, simulate_s = gpt3_view(args.preset, args.fusion, args.simulate)
            row = {"compile_s": round(compile_s, 2),
                   "simulate_s": round(simulate_s, 2) if simulate_s is not None else None,
                   "build_s": round(time.perf_counter() - start - compile_s - (simulate_s or 0), 3)}
            shot = None
            if args.screenshots:
                shot = args.screenshots / f"view-gpt3-{args.preset}.png"
            row.update(measure(view, browser, folder, shot))
            rows.append(row)
            print(json.dumps(row), flush=True)
    keys = ("case", "nodes", "html_bytes", "open_s", "painted_ms", "expand_ms", "expand_all_ms")
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r.get(k)) for k in keys))
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

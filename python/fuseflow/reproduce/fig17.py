"""Figure 17: every dataflow order of the nested SpMMs ``X = (A·B)·C`` on the Karate Club graph.

``A`` is the Karate Club adjacency (34 × 34, real, from ``networkx``), ``B`` and ``C`` are
34 × 34 with 90% zeros (seeded); all three are sparse and the two products are fused into one
kernel over ``i, j, k, l``: ``X[i,l] = Σ_k (Σ_j A[i,j]·B[j,k])·C[k,l]``. For each of the 24
orders of ``i, j, k, l`` every tensor is stored in the order's layout, as a dataflow
architecture streams it: ``A`` as CSR when the order visits ``i`` before ``j``, else CSC (and
so on for ``B`` over ``j, k`` and ``C`` over ``k, l``), and ``X`` is written row-major when ``i``
comes before ``l``, else as ``Xᵀ`` (the kernel ``Xᵀ = (Cᵀ·Bᵀ)·Aᵀ``). An order is *legal* when
the compiler lowers it; each legal order is simulated (fast engine), checked against PyTorch,
and sized by the cost model. The figure shows the cycles per order and the best/worst ratio.

Published (``shared/reference/workloads.md``): 15 legal orders of ``i, j, k, l``.
"""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path
from typing import Any, Callable

import torch

from fuseflow.reproduce.studies import new_figure, save_figure

PUBLISHED_LEGAL = 15
SPARSITY = 0.9
VARIABLES = "ijkl"


class NestedSpMM(torch.nn.Module):
    """``X = (A·B)·C``."""

    def forward(self, A, B, C):
        return torch.mm(torch.mm(A, B), C)


class NestedSpMMTransposed(torch.nn.Module):
    """``Xᵀ = Cᵀ·(Bᵀ·Aᵀ)``: the same loops, the result written column-major."""

    def forward(self, At, Bt, Ct):
        return torch.mm(Ct, torch.mm(Bt, At))


def operands(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A (the Karate Club adjacency), B and C (90% zeros), dense float32."""
    from fuseflow.data import load_dataset

    a = torch.tensor(load_dataset("karate").adjacency.toarray(), dtype=torch.float32)
    n = a.shape[0]
    generator = torch.Generator().manual_seed(seed)

    def pruned():
        values = torch.rand(n, n, generator=generator) + 0.1
        return values * (torch.rand(n, n, generator=generator) >= SPARSITY)

    return a, pruned(), pruned()


def _variables(einsum: str) -> dict[str, str]:
    """Loop names of ``i, j, k, l`` in a nested-SpMM kernel's fused expression: the output's
    two variables (``i, l`` or ``l, i``), the outer reduction ``k``, the inner ``j``."""
    match = re.match(r"out0\[(\w+),(\w+)\] = sum_\{(\w+)\}\(.*sum_\{(\w+)\}", einsum)
    if match is None:
        raise RuntimeError(f"unexpected nested-SpMM expression: {einsum}")
    first, second, k, j = match.groups()
    return {"first": first, "second": second, "k": k, "j": j}


def _layout(pos: dict[str, int], outer: str, inner: str) -> str:
    return "csr" if pos[outer] < pos[inner] else "csc"


def measure(preset: str = "published", engine: str = "fast", seed: int = 0,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Compiles, simulates and checks every order; returns the figure's document. The
    Karate Club graph exists at one size: every ``preset`` measures the published
    workload."""
    import fuseflow
    from fuseflow.explore.costmodel import CostModelError, predict

    a, b, c = operands(seed)
    start = time.perf_counter()
    programs = {}
    for transposed in (False, True):
        model = NestedSpMMTransposed() if transposed else NestedSpMM()
        data = (a.t().contiguous(), b.t().contiguous(), c.t().contiguous()) if transposed \
            else (a, b, c)
        program = fuseflow.Program(model, data)
        names = _variables(program.compile(fuseflow.Schedule(fusion="full", formats={
            n: "csr" for n in program.input_names})).kernels[0].einsum)
        first, second = ("l", "i") if transposed else ("i", "l")
        programs[transposed] = (program, data, {first: names["first"],
                                                second: names["second"], "k": names["k"],
                                                "j": names["j"]})
    expected = torch.mm(torch.mm(a, b), c)
    rows = []
    for perm in itertools.permutations(VARIABLES):
        label = "".join(perm)
        if progress is not None:
            progress(label)
        pos = {v: p for p, v in enumerate(perm)}
        transposed = pos["l"] < pos["i"]
        program, data, loop = programs[transposed]
        if transposed:
            formats = {"At": _layout(pos, "j", "i"), "Bt": _layout(pos, "k", "j"),
                       "Ct": _layout(pos, "l", "k")}
        else:
            formats = {"A": _layout(pos, "i", "j"), "B": _layout(pos, "j", "k"),
                       "C": _layout(pos, "k", "l")}
        order = tuple(loop[v] for v in perm)
        layouts = {"A": _layout(pos, "i", "j"), "B": _layout(pos, "j", "k"),
                   "C": _layout(pos, "k", "l")}
        row: dict[str, Any] = {"order": label, "loops": list(order), "formats": formats,
                               "layouts": layouts,
                               "output": "Xᵀ (column-major)" if transposed else "X (row-major)"}
        try:
            compiled = program.compile(fuseflow.Schedule(fusion="full", formats=formats,
                                                         order=order))
        except Exception as err:  # noqa: BLE001 - an illegal order is a result, with its reason
            letters = {name: v for v, name in loop.items()}
            row.update(legal=False, reason=re.sub(
                r"\bd\d+\b", lambda m, names=letters: names.get(m.group(0), m.group(0)),
                _reason(err)))
            rows.append(row)
            continue
        result = compiled.simulate(*data, engine=engine)
        output = result.output.t() if transposed else result.output
        row.update(legal=True, cycles=result.cycles,
                   matches_pytorch=bool(torch.allclose(output, expected, rtol=1e-4,
                                                       atol=1e-4)),
                   sam_ops=compiled.kernels[0].size)
        try:
            prediction = predict(compiled, *data).kernels[0]
            row.update(tokens=round(prediction.tokens), predicted_cycles=round(
                prediction.cycles))
        except CostModelError:
            row.update(tokens=None, predicted_cycles=None)
        rows.append(row)
    legal = [r for r in rows if r["legal"]]
    cycles = [r["cycles"] for r in legal]
    return {"figure": "fig17", "engine": engine,
            "workload": {"A": "Karate Club adjacency (34 × 34, "
                              f"{float((a != 0).float().mean()):.1%} nonzero)",
                         "B": f"34 × 34, {1 - SPARSITY:.0%} nonzero (seed {seed})",
                         "C": f"34 × 34, {1 - SPARSITY:.0%} nonzero (seed {seed})"},
            "orders": rows, "legal": len(legal), "published_legal": PUBLISHED_LEGAL,
            "best": min(legal, key=lambda r: r["cycles"])["order"] if legal else None,
            "worst": max(legal, key=lambda r: r["cycles"])["order"] if legal else None,
            "best_worst_ratio": round(max(cycles) / min(cycles), 2) if cycles else None,
            "wall_seconds": round(time.perf_counter() - start, 1)}


def _reason(err: Exception) -> str:
    """The located error's message, without its location."""
    text = str(err)
    found = re.findall(r"error: .*?: (schedule of kernel .*?|.*?)(?:; legal orders:.*)?$", text,
                       re.MULTILINE)
    message = found[0] if found else text.splitlines()[0]
    return message.removeprefix("schedule of kernel 'k0': ")


def markdown(doc: dict[str, Any]) -> str:
    """The figure's table: every legal order, the layouts of A, B, C (CSR: row-major, CSC:
    column-major) and X, cycles and predicted tokens; then the rejected orders and why."""
    w = doc["workload"]
    lines = ["# Figure 17: dataflow orders of nested SpMMs X = (A·B)·C", "",
             f"A: {w['A']}; B: {w['B']}; C: {w['C']}. {doc['engine']} engine, "
             f"{doc['wall_seconds']:.0f} s.", "",
             f"**{doc['legal']} legal orders** (published: {doc['published_legal']}); best "
             f"{doc['best']}, worst {doc['worst']}: **{doc['best_worst_ratio']}×** between them.",
             "", "| order | A | B | C | X | cycles | vs best | tokens (pred.) | matches PyTorch |",
             "| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |"]
    legal = [r for r in doc["orders"] if r["legal"]]
    best = min((r["cycles"] for r in legal), default=None)
    for r in sorted(legal, key=lambda r: r["cycles"]):
        f = list(r["layouts"].values())
        tokens = f"{r['tokens']:,}" if r.get("tokens") is not None else "-"
        lines.append(f"| {r['order']} | {f[0]} | {f[1]} | {f[2]} | {r['output'].split()[0]} | "
                     f"{r['cycles']:,} | {r['cycles'] / best:.2f}× | {tokens} | "
                     f"{'yes' if r['matches_pytorch'] else 'NO'} |")
    illegal = [r for r in doc["orders"] if not r["legal"]]
    if illegal:
        lines += ["", "Orders the compiler rejects:", ""]
        lines += [f"- {r['order']}: {r['reason']}" for r in illegal]
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path) -> Path:
    """Cycles per legal order, fastest first (log scale)."""
    legal = sorted((r for r in doc["orders"] if r["legal"]), key=lambda r: r["cycles"])
    fig, ax = new_figure(figsize=(max(5.0, 0.45 * len(legal) + 1.5), 3.8))
    ax.bar(range(len(legal)), [r["cycles"] for r in legal], color="tab:blue")
    ax.set_xticks(range(len(legal)), [r["order"] for r in legal], rotation=60, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("cycles")
    ax.set_title(f"Figure 17: X = (A·B)·C on Karate Club, {doc['legal']} legal orders, "
                 f"best/worst {doc['best_worst_ratio']}×", fontsize=9)
    return save_figure(fig, path)


def failed(doc: dict[str, Any]) -> list[str]:
    """The legal orders whose output differs from PyTorch."""
    return [r["order"] for r in doc["orders"] if r["legal"] and not r["matches_pytorch"]]

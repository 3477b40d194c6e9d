"""What FuseFlow compiles: the source of the reference ``docs/supported-ops.md``.

The reference is generated, never edited::

    python -m fuseflow.supported_ops --write     # rewrite docs/supported-ops.md
    python -m fuseflow.supported_ops             # exit 1 if it differs from the code

It has two views of the same support:

* **PyTorch operations** (:data:`TORCH_OPS`): each row is an expression over example tensors
  (:data:`EXAMPLE_INPUTS`) that ``test/e2e/test_supported_ops.py`` compiles and simulates.
  A supported row must match PyTorch, with its first operand dense and declared CSR; an
  unsupported row must be refused with a :class:`~fuseflow.errors.FuseFlowError` or a located
  MLIR diagnostic whose text contains the row's ``error``.
* **linalg.generic body ops**: read from the lowering's own tables (the arithmetic, unary,
  identity, boolean and integer op tables of :mod:`fuseflow.passes.lowering.einsum`) and the
  ALU table (:mod:`fuseflow.dialects.alu`), so the reference cannot drift from them.

:data:`REFERENCE` is the path every "not supported" error message points to.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from fuseflow.errors import SUPPORTED_OPS as REFERENCE

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (this file is ``python/fuseflow/supported_ops.py``)."""
DOC = ROOT / REFERENCE
COMMAND = "python -m fuseflow.supported_ops --write"

EXAMPLE_INPUTS = {
    "x": ((4, 5), "the operand under test: dense, or declared CSR"),
    "y": ((4, 5), "a second matrix of x's shape"),
    "b": ((5,), "a bias vector over x's columns"),
    "w": ((5, 3), "a weight matrix: x @ w"),
    "v": ((5,), "a vector: torch.mv(x, v)"),
    "c": ((4, 3), "a matrix of x @ w's shape"),
    "z": ((4, 3), "a matrix with x's rows"),
    "m": ((4, 5), "a bool mask of x's shape"),
}
"""The tensors examples are written over: name -> (shape, what it is)."""


@dataclass(frozen=True)
class TorchOp:
    """One PyTorch operation and an example expression of it."""

    group: str
    name: str
    """How users write it."""
    example: str
    """A Python expression over :data:`EXAMPLE_INPUTS` (``torch``, ``F`` in scope)."""
    supported: bool = True
    sparse: bool = True
    """(Supported rows) also compiled with ``x`` declared CSR."""
    note: str = ""
    error: str = ""
    """(Unsupported rows) text the refusal contains (the op it is refused at)."""

    @property
    def arguments(self) -> tuple[str, ...]:
        """The example tensors the expression reads, in :data:`EXAMPLE_INPUTS` order."""
        import re

        used = set(re.findall(r"\b([a-z])\b", self.example))
        return tuple(n for n in EXAMPLE_INPUTS if n in used)


def _ops(group: str, *rows) -> list[TorchOp]:
    return [TorchOp(group, *row[:2], **(row[2] if len(row) > 2 else {})) for row in rows]


TORCH_OPS: tuple[TorchOp, ...] = (
    *_ops("Element-wise",
         ("`+`, `torch.add`", "x + y"), ("`-`, `torch.sub`", "x - y"),
         ("`*`, `torch.mul`", "x * y"), ("`/`, `torch.div`", "x / y"),
         ("`torch.maximum`", "torch.maximum(x, y)"), ("`torch.minimum`", "torch.minimum(x, y)"),
         ("broadcast bias", "x + b"),
         ("`torch.where` of a comparison", "torch.where(x > y, x, y)",
          {"note": "max/min patterns only"}),
         ("scalar `+ - * /`", "(2.0 - x) * 3.0 + x / 2.0"),
         ("`torch.reciprocal`", "torch.reciprocal(x + 1.0)"),
         ("`x * x`, `x ** 2`, `torch.square`", "x * x + x ** 2 + torch.square(x)"),
         ("`torch.sqrt`, `torch.rsqrt`", "torch.sqrt(x) + torch.rsqrt(x + 1.0)"),
         ("`torch.exp`, `torch.log`", "torch.exp(x) + torch.log(x + 1.0)"),
         ("`-x`, `torch.neg`", "-x"),
         ("`torch.relu`, `F.relu`", "F.relu(x - 0.5)"),
         ("`torch.tanh`, `torch.sigmoid`", "torch.tanh(x) + torch.sigmoid(x)"),
         ("`F.silu`", "F.silu(x)"), ("`F.elu`", "F.elu(x - 0.5)"),
         ("`F.leaky_relu`", "F.leaky_relu(x - 0.5, 0.1)"),
         ("`torch.clamp`, `F.hardtanh`", "torch.clamp(x, 0.2, 0.7) + F.hardtanh(x)")),
    *_ops("Products",
         ("`@`, `torch.matmul`, `torch.mm`", "x @ w"), ("`torch.mv`", "torch.mv(x, v)"),
         ("`torch.einsum`", "torch.einsum('ij,jk->ik', x, w)"),
         ("`F.linear`, `nn.Linear`", "F.linear(x, w.t(), w[0])"),
         ("`torch.addmm`", "torch.addmm(c, x, w)")),
    *_ops("Reductions",
         ("`sum` over a dimension", "x.sum(-1) + x.sum(0).sum()"),
         ("`sum(keepdim=True)`", "x - x.sum(-1, keepdim=True)"),
         ("`mean`", "x.mean(-1)"), ("`amax`, `max(dim).values`",
                                          "x.amax(-1) + x.max(-1).values")),
    *_ops("Normalizations",
         ("`torch.softmax`", "torch.softmax(x, -1) + torch.softmax(x, 0)"),
         ("`F.log_softmax`", "F.log_softmax(x, -1)"),
         ("`F.layer_norm`", "F.layer_norm(x, (5,))")),
    *_ops("Masks",
         ("`masked_fill` by a bool mask", "x.masked_fill(m, -1.0)"),
         ("`~mask`, `mask == False`", "x.masked_fill(~m, 0.0) + x.masked_fill(m == False, 1.0)"),
         ("`torch.where(mask, x, c)`", "torch.where(m, x, 0.5)"),
         ("`x * mask`", "x * m"),
         ("masked softmax", "x.masked_fill(~m, float('-inf')).softmax(-1)")),
    *_ops("Views",
         ("`x.t()`, `transpose`", "x.t() * 2.0"), ("`x.t() @ z`", "x.t() @ z"),
         ("`unsqueeze`, `squeeze`", "(x.unsqueeze(0) * 2.0).squeeze(0)"),
         ("`reshape` (dense operands)", "x.reshape(20) * 2.0", {"sparse": False}),
         ("slices (dense operands)", "x[:, :2] * 2.0", {"sparse": False})),
    *_ops("Not supported",
         ("`F.gelu`", "F.gelu(x)", {"supported": False, "error": "'math.erf'"}),
         ("`torch.abs`", "torch.abs(x)", {"supported": False, "error": "'math.absf'"}),
         ("`torch.sin`, `torch.cos`", "torch.sin(x)", {"supported": False,
                                                         "error": "'math.sin'"}),
         ("`F.softplus`", "F.softplus(x)", {"supported": False, "error": "'math.log1p'"}),
         ("`amin`, `min(dim)`", "x.amin(-1)", {"supported": False,
                                              "error": "unsupported reduction"}),
         ("`torch.where(mask, x, y)`", "torch.where(m, x, y)",
          {"supported": False, "error": "a select between two tensors"}),
         ("`torch.cat`", "torch.cat([x, y]) * 2.0", {"supported": False,
                                                    "error": "'tensor.concat'"}),
         ("`torch.cumsum`", "torch.cumsum(x, 0)", {"supported": False, "error": "tm_tensor"}),
         ("`torch.sort`, `torch.topk`", "torch.sort(x, -1).values",
          {"supported": False, "error": "tm_tensor"}),
         ("`argmax`, integer tensors", "x.argmax(-1).float()",
          {"supported": False, "error": "integer arithmetic"})),
)
"""The PyTorch operations of the reference, by group."""


def _body_op_rows() -> list[tuple[str, str]]:
    """(linalg.generic body op, what the dataflow graph computes) from the lowering's tables."""
    from fuseflow.passes.lowering import einsum

    rows = [(f"`{op}`", f"ALU `{alu}`") for op, alu in einsum.ARITH_BINARY.items()]
    rows += [(f"`{op}`", f"ALU `{alu}`") for op, alu in einsum.UNARY_OPS.items()]
    rows += [(f"`{op}`", "the operand (values are float32 throughout)")
             for op in einsum.IDENTITY_OPS]
    rows += [(f"`{op}`", "on boolean masks only (0.0/1.0 values)") for op in einsum.BOOLEAN_OPS]
    rows += [(f"`{op}`", desc) for op, desc in einsum.POWER_EXPONENTS_DOC]
    rows += [("`arith.cmpf` + `arith.select`", "max/min (`x > y ? x : y`, clamps) and masked "
              "fills (`m == 0 ? c : x`)"),
             ("`arith.constant`", "a scalar operand (scalar ALU ops) or an initial value")]
    return rows


def _alu_rows() -> list[tuple[str, str]]:
    from fuseflow.dialects.alu import ALU_OPS

    return [(f"`{op.name}`", op.doc) for op in ALU_OPS]


def _table(header: tuple[str, ...], rows) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def render() -> str:
    """The text of ``docs/supported-ops.md``."""
    from fuseflow.frontend import FORMAT_ENCODINGS
    from fuseflow.passes.lowering import einsum

    out = ["# Supported operations", "",
           f"<!-- Generated from the code by `{COMMAND}`; do not edit. -->", "",
           "What `fuseflow.compile` accepts, by PyTorch operation and by the `linalg.generic`",
           "body ops torch-mlir lowers them to. Every row of the first table is an example",
           "that `test/e2e/test_supported_ops.py` compiles: supported ones are simulated and",
           "compared with PyTorch (with `x` dense, and declared CSR where marked), unsupported",
           "ones must be refused with an error naming the op at the model's line. Errors about",
           "an unsupported operation point here.", "",
           "## PyTorch operations", "", "The examples read these tensors:", ""]
    out += _table(("tensor", "shape", "what"), [(f"`{n}`", "x".join(map(str, shape)), what)
                                               for n, (shape, what) in EXAMPLE_INPUTS.items()])
    out += [""]
    rows = []
    for op in TORCH_OPS:
        if not op.supported:
            status = "no"
        else:
            status = "yes" if op.sparse else "dense `x` only"
        note = op.note or (f"refused at {op.error}" if not op.supported else "")
        rows.append((op.group, op.name, f"`{op.example}`", status, note))
    out += _table(("group", "operation", "example", "supported", "note"), rows)
    out += ["", "Sparse operands may be `torch.sparse` CSR, CSC or COO tensors (traced dense and",
            "declared when PyTorch cannot trace them sparse), BSR tensors, or dense tensors",
            "declared with `Schedule(formats=...)`: " + ", ".join(
                f"`{f}`" for f in FORMAT_ENCODINGS) + ", `bsr:<block>`, `bsr:<rows>x<cols>`.",
            "Computation is float32; `bool` tensors are masks. Absent entries of a sparse",
            "operand are zeros that annihilate products, as in `torch.sparse`: `A * x` and",
            "`A @ x` skip them even where `x` is inf or NaN (dense PyTorch gives NaN there).", "",
            "## linalg.generic body ops", "",
            "The ops a `linalg.generic` body may hold (`passes/lowering/einsum.py`); any other",
            "op is a located error naming it.", ""]
    out += _table(("body op", "becomes"), _body_op_rows())
    out += ["", "Reductions: a body `out + e` (sum) or `max(out, e)` (max) over reduction loops;",
            "a `linalg.fill` or `tensor.empty` output. Other linalg ops are generalized first",
            "(`linalg-generalize-named-ops`); tensor ops inside a kernel: "
            + ", ".join(f"`{v}`" for v in einsum.VIEW_OPS)
            + " adding or dropping size-1 dimensions, and `tensor.cast`.", "",
            "## ALU operations", "",
            "What the `sam.alu` primitive computes (`dialects/alu.py`), float32 as PyTorch eager.",
            ""]
    out += _table(("op", "computes"), _alu_rows())
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {REFERENCE}")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        DOC.write_text(text)
        return 0
    if not DOC.exists() or DOC.read_text() != text:
        print(f"{REFERENCE} is stale; run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

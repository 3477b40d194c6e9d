"""Random ``linalg.generic`` kernels and their mutations, for fuzzing ``fuseflow-opt``.

:func:`random_kernel` writes a valid function of one to three ``linalg.generic`` ops
(element-wise unary and binary arithmetic, scalar constants, selects by boolean masks,
contractions, row reductions with sum or max) over dense and sparse operands (CSR, CSC, DCSR,
COO, sparse vectors) of random sizes, the kind of input ``fuseflow-to-dataflow`` accepts.
:func:`mutate` applies random text edits (types, encodings, iterator kinds, body ops, sizes,
maps, deleted or duplicated lines, truncation, stray characters) that keep the text close to
valid, where parsers and verifiers are weakest. :func:`check_opt` runs the ``fuseflow-opt``
driver in process on one input: a zero exit is ``ok``, located diagnostics are a ``clean
error``, an escaping exception or a traceback in the output, or a stream-control error on a
graph the lowering built, is an ``internal error`` (crashes and hangs are caught by
:mod:`.isolate`).
"""

from __future__ import annotations

import io
import random
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuseflow.fuzz.outcome import Outcome, Report
from fuseflow.passes.stream_control import TAG

ENCODINGS = {
    "csr": "(d0, d1) -> (d0 : dense, d1 : compressed)",
    "csc": "(d0, d1) -> (d1 : dense, d0 : compressed)",
    "dcsr": "(d0, d1) -> (d0 : compressed, d1 : compressed)",
    "coo": "(d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)",
    "vec": "(d0) -> (d0 : compressed)",
}
UNARY = {"neg": "arith.negf {x}", "exp": "math.exp {x}", "tanh": "math.tanh {x}",
         "sqrt": "math.sqrt {x}", "rsqrt": "math.rsqrt {x}", "log": "math.log {x}"}
BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
          "arith.minimumf")
MASK_BODIES = (
    ["%c = arith.constant -1.0 : f32", "%r = arith.select %x1, %x0, %c : f32"],
    ["%t = arith.constant true", "%n = arith.xori %x1, %t : i1", "%c = arith.constant 0.0 : f32",
     "%r = arith.select %n, %c, %x0 : f32"],
    ["%f = arith.uitofp %x1 : i1 to f32", "%r = arith.mulf %x0, %f : f32"],
)
"""Bodies of an element-wise op of a value (%x0) and a boolean mask (%x1)."""

PIPELINES = (
    "builtin.module(fuseflow-to-dataflow)",
    "builtin.module(fuseflow-to-kernels)",
    "builtin.module(fuseflow-normalize,fuseflow-partition{mode=full},fuseflow-schedule,"
    "fuseflow-lower-to-sam,sam-verify)",
    "builtin.module(fuseflow-partition,fuseflow-schedule{order=d1,d0},fuseflow-lower-to-sam,"
    "sam-verify)",
)


@dataclass(frozen=True)
class OptCase:
    """One ``fuseflow-opt`` input: the seed it was drawn from, its text and its pipeline."""

    seed: int
    text: str
    pipeline: str

    def __str__(self):
        return f"seed={self.seed} pipeline={self.pipeline}"


class _Writer:
    """Writes a function of generic ops over operands of the sizes ``m x n`` (and ``k``)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.m, self.n, self.k = (rng.choice((1, 2, 3, 4, 6)) for _ in range(3))
        self.args: list[tuple[str, str]] = []
        self.lines: list[str] = []
        self.count = 0

    def tensor_type(self, shape: tuple[int, ...], fmt: str = "dense", elem: str = "f32") -> str:
        dims = "x".join(str(s) for s in shape)
        if fmt == "dense":
            return f"tensor<{dims}x{elem}>"
        return f"tensor<{dims}x{elem}, #sparse_tensor.encoding<{{ map = {ENCODINGS[fmt]} }}>>"

    def argument(self, shape: tuple[int, ...], elem: str = "f32") -> tuple[str, str]:
        formats = ["dense", "csr", "csc", "dcsr", "coo"] if len(shape) == 2 else ["dense", "vec"]
        fmt = self.rng.choice(formats) if elem == "f32" else "dense"
        name, typ = f"%a{len(self.args)}", self.tensor_type(shape, fmt, elem)
        self.args.append((name, typ))
        return name, typ

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def init(self, shape: tuple[int, ...], value: str = "0.0") -> str:
        empty, cst, fill = self.fresh(), self.fresh(), self.fresh()
        typ = self.tensor_type(shape)
        self.lines += [f"  {cst} = arith.constant {value} : f32",
                       f"  {empty} = tensor.empty() : {typ}",
                       f"  {fill} = linalg.fill ins({cst} : f32) outs({empty} : {typ}) -> {typ}"]
        return fill

    def generic(self, ins: list[tuple[str, str, str]], out_map: str, out_shape, iterators,
                body: list[str], init: str | None = None) -> tuple[str, str]:
        """``ins``: (value, type, affine map); the body names its block arguments %x0.. and
        the accumulator %acc, and yields its last value."""
        result, out_type = self.fresh(), self.tensor_type(out_shape)
        outs = init or self.init(out_shape)
        maps = ", ".join(f"affine_map<{m}>" for _, _, m in ins) + f", affine_map<{out_map}>"
        its = ", ".join(f'"{i}"' for i in iterators)
        names = ", ".join(v for v, _, _ in ins)
        types = ", ".join(t for _, t, _ in ins)
        block = ", ".join(f"%x{i}: {_element(t)}" for i, (_, t, _) in enumerate(ins)) + \
            ", %acc: f32"
        self.lines += [
            f"  {result} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{its}]}}",
            f"      ins({names} : {types}) outs({outs} : {out_type}) {{",
            f"  ^bb0({block}):", *[f"    {line}" for line in body],
            f"    linalg.yield {body[-1].split(' = ')[0].strip()} : f32",
            f"  }} -> {out_type}"]
        return result, out_type

    def elementwise(self, x: tuple[str, str], shape) -> tuple[str, str]:
        rng = self.rng
        dims = ", ".join(f"d{i}" for i in range(len(shape)))
        ident = f"({dims}) -> ({dims})"
        if rng.random() < 0.15:
            m = self.argument(shape, "i1")
            return self.generic([(*x, ident), (*m, ident)], ident, shape,
                                ["parallel"] * len(shape), rng.choice(MASK_BODIES))
        if rng.random() < 0.5:
            y = self.argument(shape)
            op = rng.choice(BINARY)
            body = [f"%r = {op} %x0, %x1 : f32"]
            return self.generic([(*x, ident), (*y, ident)], ident, shape,
                                ["parallel"] * len(shape), body)
        if rng.random() < 0.5:
            c = rng.choice(("2.0", "0.5", "-1.0"))
            body = [f"%c = arith.constant {c} : f32",
                    f"%r = {rng.choice(BINARY)} %x0, %c : f32"]
        else:
            body = [f"%r = {UNARY[rng.choice(list(UNARY))].format(x='%x0')} : f32"]
        return self.generic([(*x, ident)], ident, shape, ["parallel"] * len(shape), body)

    def contraction(self, x: tuple[str, str], shape) -> tuple[tuple[str, str], tuple]:
        y = self.argument((shape[1], self.k))
        body = ["%p = arith.mulf %x0, %x1 : f32", "%r = arith.addf %acc, %p : f32"]
        ins = [(*x, "(d0, d1, d2) -> (d0, d2)"), (*y, "(d0, d1, d2) -> (d2, d1)")]
        value = self.generic(ins, "(d0, d1, d2) -> (d0, d1)", (shape[0], self.k),
                             ["parallel", "parallel", "reduction"], body)
        return value, (shape[0], self.k)

    def reduction(self, x: tuple[str, str], shape) -> tuple[tuple[str, str], tuple]:
        use_max = self.rng.random() < 0.4
        init = self.init((shape[0],), "0xFF800000" if use_max else "0.0")
        op = "arith.maximumf" if use_max else "arith.addf"
        value = self.generic([(*x, "(d0, d1) -> (d0, d1)")], "(d0, d1) -> (d0)", (shape[0],),
                             ["parallel", "reduction"], [f"%r = {op} %acc, %x0 : f32"], init)
        return value, (shape[0],)

    def function(self) -> str:
        shape = (self.m, self.n) if self.rng.random() < 0.85 else (self.m,)
        value = self.argument(shape)
        for _ in range(self.rng.randint(1, 3)):
            roll = self.rng.random()
            if len(shape) == 2 and roll < 0.3:
                value, shape = self.contraction(value, shape)
            elif len(shape) == 2 and roll < 0.45:
                value, shape = self.reduction(value, shape)
            else:
                value = self.elementwise(value, shape)
        params = ", ".join(f"{n}: {t}" for n, t in self.args)
        return "\n".join([f"func.func @main({params}) -> {value[1]} {{", *self.lines,
                          f"  return {value[0]} : {value[1]}", "}", ""])


def _element(tensor_type: str) -> str:
    """The element type of a tensor type's text (``tensor<4x5xi1>`` -> ``i1``)."""
    return tensor_type.split(",")[0].rstrip(">").split("x")[-1]


def random_kernel(rng: random.Random) -> str:
    """A valid function of linalg.generic ops (see the module docstring)."""
    return _Writer(rng).function()


_SWAPS = (("f32", "i32"), ("f32", "f64"), ("dense", "compressed"), ("compressed", "singleton"),
          ("parallel", "reduction"), ("reduction", "parallel"), ("arith.addf", "arith.addi"),
          ("arith.mulf", "math.log"), ("d1", "d0"), ("d0", "d2"), ("0.0", "1.0"),
          ("linalg.yield", "func.return"), ("ins(", "outs("), ("map = ", ""),
          ("compressed", "compressed(nonunique)"),
          ("#sparse_tensor.encoding<{ map = ", "#sparse_tensor.encoding<{"))
_JUNK = ("{", "}", "(", ")", "<", ">", ":", ",", "%", "#", "\"", "x", "0", "-1", "?", "@")


def mutate(text: str, rng: random.Random, edits: int = 2) -> str:
    """``text`` with ``edits`` random edits (see the module docstring)."""
    for _ in range(edits):
        kind = rng.randrange(7)
        lines = text.split("\n")
        if kind == 0:
            old, new = rng.choice(_SWAPS)
            spots = [m.start() for m in re.finditer(re.escape(old), text)]
            if spots:
                at = rng.choice(spots)
                text = text[:at] + new + text[at + len(old):]
        elif kind == 1 and len(lines) > 2:
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif kind == 2:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif kind == 3:
            text = text[:rng.randrange(len(text) + 1)]
        elif kind == 4:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(_JUNK) + text[at:]
        elif kind == 5:
            sizes = [m.start() for m in re.finditer(r"\d+x", text)]
            if sizes:
                at = rng.choice(sizes)
                end = text.index("x", at)
                text = text[:at] + str(rng.choice((0, 1, 5, 7))) + text[end:]
        else:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + text[at + rng.randint(1, 8):]
    return text


def opt_case(seed: int) -> OptCase:
    """The case drawn from ``seed``: a third valid kernels, the rest mutated."""
    rng = random.Random(seed)
    text = random_kernel(rng)
    if rng.random() > 1 / 3:
        text = mutate(text, rng, rng.randint(1, 3))
    return OptCase(seed, text, rng.choice(PIPELINES))


def check_opt(case: OptCase | int) -> Report:
    """Runs ``fuseflow-opt`` in process on ``case`` (or the case of a seed)."""
    from fuseflow.tools import opt

    if isinstance(case, int):
        case = opt_case(case)
    stdout, stderr = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.mlir"
        path.write_text(case.text)
        try:
            options = opt.parse_command_line([str(path), f"--pass-pipeline={case.pipeline}"])
            code = opt.OptDriver(options, stdout=stdout, stderr=stderr).run()
        except Exception as err:  # noqa: BLE001 - every escaping exception is a bug
            return Report(Outcome.INTERNAL_ERROR, "opt", f"{type(err).__name__}: {err}")
    errors = stderr.getvalue()
    if "Traceback" in errors:
        return Report(Outcome.INTERNAL_ERROR, "opt", errors.strip().splitlines()[-1])
    if TAG in errors:                   # the lowering built a graph its own check rejects
        first = next(line for line in errors.splitlines() if TAG in line)
        return Report(Outcome.INTERNAL_ERROR, "opt", first.strip())
    if code == 0:
        return Report(Outcome.OK, "opt")
    if re.search(r":\d+:\d+: error: \S", errors):
        first = next(line for line in errors.splitlines() if "error:" in line)
        return Report(Outcome.CLEAN_ERROR, "opt", first.split("error:", 1)[1].strip())
    return Report(Outcome.INTERNAL_ERROR, "opt", f"exit {code} without a located error: "
                                                 f"{errors.strip()[:200]}")

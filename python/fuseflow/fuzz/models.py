"""Random PyTorch models for differential fuzzing against PyTorch.

:func:`random_case` draws a :class:`ModelCase` from a ``random.Random``: a chain of supported
operations (element-wise arithmetic, scalar arithmetic, activations, clamps, squares, matmul
and matrix-vector products, row and column reductions, softmax, log-softmax, layer norm,
transposes, masked fills by float and bool masks, ``torch.where``), random shapes (sizes 0
and 1 included), inputs of random density (empty rows and all-zero tensors included) passed
as ``torch.sparse`` tensors or dense and declared sparse (bool masks too), a random fusion
(unfused, full, or random groups of the op submodules) and now and then a non-default
:class:`~fuseflow.sim.arch.Arch`.

:func:`check_case` compiles the model, simulates it on both engines and compares with PyTorch
applied to the dense equivalents of the inputs (where that is inf or NaN and a sparse input lacks
entries, the absent entries are structural zeros: :attr:`Outcome.STRUCTURAL_ZERO`); it returns
a :class:`~fuseflow.fuzz.outcome.Report`. Each op is its own submodule (``op0``, ``op1``, …) so
fusion groups can name it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from fuseflow.fuzz.outcome import Outcome, Report, classify_error

SIZES = (0, 1, 1, 2, 3, 3, 4, 5, 6)
DENSITIES = (0.0, 0.2, 0.5, 0.8, 1.0)
TORCH_LAYOUTS = ("csr", "csc", "coo")
DECLARED = ("csr", "csc", "coo", "dcsr")
CONSTANTS = (2.0, 0.5, -1.5, 3.0)


@dataclass(frozen=True)
class Input:
    """One model input: its shape, how it is passed, its density and value seed."""

    shape: tuple[int, ...]
    layout: str = "dense"           # dense | csr | csc | coo (a torch.sparse tensor) | bool
    #                                 | bool_csr (a torch.sparse CSR bool tensor)
    declared: str = ""              # a format declared with Schedule(formats=...)
    density: float = 1.0
    empty_rows: bool = False

    def make(self, seed: int) -> torch.Tensor:
        gen = torch.Generator().manual_seed(seed)
        values = torch.rand(self.shape, generator=gen) * 2 - 1
        keep = torch.rand(self.shape, generator=gen) < self.density
        if self.empty_rows and len(self.shape) == 2 and self.shape[0] > 1:
            keep[::2] = False
        if self.layout == "bool":
            return keep
        if self.layout == "bool_csr":
            return keep.to_sparse_csr()
        dense = torch.where(keep, values, 0.0)      # +0.0 where absent, as a sparse format
        if self.layout == "csr":
            return dense.to_sparse_csr()
        if self.layout == "csc":
            return dense.to_sparse_csc()
        if self.layout == "coo":
            return dense.to_sparse_coo().coalesce()
        return dense


@dataclass(frozen=True)
class Step:
    """One op: its kind, its arguments (value indices) and a parameter (constant, dim, …)."""

    kind: str
    args: tuple[int, ...]
    param: object = None


class OpModule(torch.nn.Module):
    """One step of a fuzzed model, as a submodule so that fusion groups can name it."""

    def __init__(self, step: Step):
        super().__init__()
        self.kind, self.param = step.kind, step.param

    def forward(self, *xs):
        return APPLY[self.kind](self.param, *xs)


def _layer_norm(_, x):
    return F.layer_norm(x, (x.shape[-1],))


APPLY = {
    "add": lambda p, x, y: x + y,
    "sub": lambda p, x, y: x - y,
    "mul": lambda p, x, y: x * y,
    "div": lambda p, x, y: x / y,
    "maximum": lambda p, x, y: torch.maximum(x, y),
    "minimum": lambda p, x, y: torch.minimum(x, y),
    "bias": lambda p, x, b: x + b,
    "scalar_mul": lambda p, x: x * p,
    "scalar_add": lambda p, x: x + p,
    "scalar_sub": lambda p, x: x - p,
    "scalar_div": lambda p, x: x / p,
    "relu": lambda p, x: torch.relu(x),
    "exp": lambda p, x: torch.exp(x),
    "neg": lambda p, x: -x,
    "sigmoid": lambda p, x: torch.sigmoid(x),
    "tanh": lambda p, x: torch.tanh(x),
    "sqrt_relu": lambda p, x: torch.sqrt(torch.relu(x)),
    "matmul": lambda p, x, y: x @ y,
    "mv": lambda p, x, v: torch.mv(x, v),
    "sum": lambda p, x: x.sum(dim=p[0], keepdim=p[1]),
    "mean": lambda p, x: x.mean(dim=p[0], keepdim=p[1]),
    "amax": lambda p, x: x.amax(dim=p[0], keepdim=p[1]),
    "softmax": lambda p, x: torch.softmax(x, dim=p),
    "log_softmax": lambda p, x: F.log_softmax(x, dim=p),
    "layer_norm": _layer_norm,
    "transpose": lambda p, x: x.t(),
    "masked_fill": lambda p, x, m: x.masked_fill(m == 0, p),
    "masked_fill_bool": lambda p, x, m: x.masked_fill(~m, p),
    "masked_fill_true": lambda p, x, m: x.masked_fill(m, p),
    "masked_fill_false": lambda p, x, m: x.masked_fill(m == False, p),  # noqa: E712
    "where_mask": lambda p, x, m: torch.where(m, x, p),
    "times_mask": lambda p, x, m: x * m,
    "where_max": lambda p, x, y: torch.where(x > y, x, y),
    "clamp": lambda p, x: torch.clamp(x, p[0], p[1]),
    "square": lambda p, x: x ** 2,
    "self_sub": lambda p, x: x - x,
    "self_mul": lambda p, x: x * x,
}
"""PyTorch semantics of every step kind (``p`` is the step's parameter)."""

BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "where_max")
SCALAR = ("scalar_mul", "scalar_add", "scalar_sub", "scalar_div")
UNARY = ("relu", "exp", "neg", "sigmoid", "tanh", "sqrt_relu", "self_sub", "self_mul", "square")
MASKED = ("masked_fill_bool", "masked_fill_true", "masked_fill_false", "where_mask",
          "times_mask")
"""Steps of a value and a bool mask (passed dense, as a torch.sparse CSR tensor, or declared
CSR)."""
ROW_OPS = ("softmax", "log_softmax", "layer_norm")
REDUCTIONS = ("sum", "mean", "amax")


class FuzzModel(torch.nn.Module):
    """A chain of steps over a growing list of values (the inputs first)."""

    def __init__(self, steps: tuple[Step, ...], n_inputs: int):
        super().__init__()
        self.n_inputs = n_inputs
        self.indices = [s.args for s in steps]
        for i, step in enumerate(steps):
            self.add_module(f"op{i}", OpModule(step))

    def forward(self, *inputs):
        values = list(inputs)
        for i, args in enumerate(self.indices):
            values.append(getattr(self, f"op{i}")(*[values[a] for a in args]))
        return values[-1]


@dataclass
class ModelCase:
    """A random model with its inputs, schedule and architecture, reproducible from ``seed``."""

    seed: int
    inputs: list[Input] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    fusion: object = "unfused"
    order: tuple[str, ...] = ()
    arch: dict = field(default_factory=dict)

    def __str__(self):
        ins = ", ".join(f"x{i}{list(t.shape)}:{t.layout}{'/' + t.declared if t.declared else ''}"
                        f"@{t.density}{'+empty' if t.empty_rows else ''}"
                        for i, t in enumerate(self.inputs))
        ops = "; ".join(f"v{len(self.inputs) + i}={s.kind}({','.join(f'v{a}' for a in s.args)}"
                        f"{'' if s.param is None else ', ' + repr(s.param)})"
                        for i, s in enumerate(self.steps))
        return (f"seed={self.seed} inputs=({ins}) ops=({ops}) fusion={self.fusion} "
                f"order={self.order} arch={self.arch}")

    def has_absent_entries(self) -> bool:
        """Whether a sparse input (torch.sparse or declared) may lack entries: its absent
        entries are structural zeros (see :attr:`Outcome.STRUCTURAL_ZERO`)."""
        return any((t.layout not in ("dense", "bool") or t.declared) and
                   (t.density < 1.0 or t.empty_rows) for t in self.inputs)

    def model(self) -> FuzzModel:
        return FuzzModel(tuple(self.steps), len(self.inputs))

    def tensors(self) -> list[torch.Tensor]:
        return [t.make(self.seed * 31 + i) for i, t in enumerate(self.inputs)]

    def schedule(self):
        import fuseflow

        formats = {f"arg{i}": t.declared for i, t in enumerate(self.inputs) if t.declared}
        return fuseflow.Schedule(fusion=self.fusion, order=self.order, formats=formats)


class _Builder:
    """Draws steps over typed values, creating inputs on demand. A value is named ``("in", k)``
    (input k) or ``("op", k)`` (step k's result) until :meth:`finish` numbers them."""

    def __init__(self, rng: random.Random, case: ModelCase):
        self.rng, self.case = rng, case
        self.shapes: dict[tuple[str, int], tuple[int, ...]] = {}
        self.steps: list[tuple[str, tuple, object]] = []

    def size(self) -> int:
        return self.rng.choice(SIZES)

    def new_input(self, shape: tuple[int, ...], boolean: bool = False) -> tuple[str, int]:
        rng = self.rng
        layout, declared = "dense", ""
        if boolean:
            layout = "bool"
            roll = rng.random()
            if len(shape) == 2 and roll < 0.2:
                layout = "bool_csr"
            elif len(shape) == 2 and roll < 0.45:
                declared = "csr"
        elif len(shape) == 2 and rng.random() < 0.5:
            if rng.random() < 0.5:
                layout = rng.choice(TORCH_LAYOUTS)
            else:
                declared = rng.choice(DECLARED)
                if shape[0] and shape[1] and rng.random() < 0.15:
                    declared = f"bsr:{_divisor(rng, shape[0])}x{_divisor(rng, shape[1])}"
        elif len(shape) == 1 and rng.random() < 0.2:
            declared = "sparse_vector"
        density = rng.choice(DENSITIES) if (layout != "dense" or declared or boolean) else 1.0
        empty_rows = rng.random() < 0.2
        self.case.inputs.append(Input(shape, layout, declared, density, empty_rows))
        name = ("in", len(self.case.inputs) - 1)
        self.shapes[name] = shape
        return name

    def value_of_shape(self, shape: tuple[int, ...], fresh: float = 0.6) -> tuple[str, int]:
        candidates = [v for v, s in self.shapes.items() if s == shape]
        if candidates and self.rng.random() > fresh:
            return self.rng.choice(candidates)
        return self.new_input(shape)

    def add(self, kind: str, args: tuple, param, shape: tuple[int, ...]) -> tuple[str, int]:
        self.steps.append((kind, args, param))
        name = ("op", len(self.steps) - 1)
        self.shapes[name] = shape
        return name

    def step(self, x: tuple[str, int]) -> tuple[str, int]:
        """Appends one step consuming value ``x``; the name of its result."""
        rng, shape = self.rng, self.shapes[x]
        kinds = list(BINARY + SCALAR + UNARY) + ["matmul", "transpose"] * 2 + ["clamp"]
        if len(shape) == 2:
            kinds += list(ROW_OPS + REDUCTIONS) + ["mv", "bias", "masked_fill"] + list(MASKED)
        kind = rng.choice(kinds)
        if kind in BINARY:
            other = self.value_of_shape(shape)
            return self.add(kind, (x, other) if rng.random() < 0.7 else (other, x), None, shape)
        if kind in SCALAR:
            return self.add(kind, (x,), rng.choice(CONSTANTS), shape)
        if kind in UNARY:
            return self.add(kind, (x,), None, shape)
        if kind == "clamp":
            low = rng.choice((-0.5, 0.0, 0.2))
            return self.add(kind, (x,), (low, low + rng.choice((0.3, 1.0))), shape)
        if kind == "matmul" and len(shape) == 1:
            m = self.new_input((self.size(), shape[0]))
            return self.add("mv", (m, x), None, (self.shapes[m][0],))
        if kind == "matmul":
            y = self.value_of_shape((shape[1], self.size()), fresh=0.8)
            return self.add("matmul", (x, y), None, (shape[0], self.shapes[y][1]))
        if kind == "mv":
            return self.add("mv", (x, self.value_of_shape((shape[1],), fresh=0.8)), None,
                            (shape[0],))
        if kind == "transpose":
            return self.add("transpose", (x,), None, tuple(reversed(shape)))
        if kind in ROW_OPS:
            dim = -1 if kind == "layer_norm" else rng.choice((-1, 0))
            return self.add(kind, (x,), dim, shape)
        if kind in REDUCTIONS:
            dim, keep = rng.choice((-1, 0)), rng.random() < 0.5
            out = list(shape)
            if keep:
                out[dim] = 1
            else:
                del out[dim]
            return self.add(kind, (x,), (dim, keep), tuple(out))
        if kind == "bias":
            return self.add("bias", (x, self.value_of_shape((shape[1],))), None, shape)
        if kind == "masked_fill":
            fill = rng.choice((0.0, float("-inf"), 1.0))
            return self.add(kind, (x, self.new_input(shape)), fill, shape)
        fill = rng.choice((0.0, -2.0, float("-inf"))) if kind != "where_mask" else \
            rng.choice((0.0, 0.5))
        return self.add(kind, (x, self.new_input(shape, boolean=True)), fill, shape)

    def finish(self) -> None:
        """Numbers the values as the model sees them: inputs first, then step results."""
        n_in = len(self.case.inputs)
        position = {("in", k): k for k in range(n_in)}
        position.update({("op", k): n_in + k for k in range(len(self.steps))})
        self.case.steps = [Step(kind, tuple(position[a] for a in args), param)
                           for kind, args, param in self.steps]


def _divisor(rng: random.Random, n: int) -> int:
    return rng.choice([d for d in range(1, n + 1) if n % d == 0])


def random_case(rng: random.Random, seed: int = 0, max_steps: int = 4) -> ModelCase:
    """A random model of 1 to ``max_steps`` steps (see the module docstring)."""
    case = ModelCase(seed)
    b = _Builder(rng, case)
    x = b.new_input((b.size(), b.size()) if rng.random() < 0.85 else (b.size(),))
    for _ in range(rng.randint(1, max_steps)):
        x = b.step(x)
    b.finish()
    n = len(case.steps)
    roll = rng.random()
    if roll < 0.35:
        case.fusion = "full"
    elif roll < 0.55 and n > 1:
        cut = rng.randint(1, n - 1)
        case.fusion = (tuple(f"op{i}" for i in range(cut)), tuple(f"op{i}" for i in range(cut, n)))
    if rng.random() < 0.3:
        case.arch = {"latency": rng.randint(1, 3), "initiation_interval": rng.randint(0, 2),
                     "fifo_depth": rng.choice((None, 64, 4096))}
    return case


def check_case(case: ModelCase, engines=("fast", "reference")) -> Report:
    """Compiles, simulates (on each engine) and compares ``case`` with PyTorch."""
    import fuseflow
    from fuseflow.sim.tokens import SimulationError

    model, tensors = case.model(), case.tensors()
    dense = [t.to_dense() if t.layout != torch.strided else t for t in tensors]
    try:
        with torch.no_grad():
            expected = model(*dense)
    except Exception as err:  # noqa: BLE001 - PyTorch rejects the model: not a valid case
        return Report(Outcome.INVALID, "pytorch", f"{type(err).__name__}: {err}")
    try:
        compiled = fuseflow.compile(model, tuple(tensors), case.schedule())
    except Exception as err:  # noqa: BLE001 - every failure is classified
        return classify_error(err, "compile")
    arch = fuseflow.Arch(**case.arch)
    runs = []
    for engine in engines:
        try:
            runs.append(compiled.simulate(*tensors, arch=arch, engine=engine))
        except Exception as err:  # noqa: BLE001
            internal = () if case.arch.get("fifo_depth") else (SimulationError,)
            return classify_error(err, f"simulate/{engine}", internal)
    got = runs[0].output
    if got.shape != expected.shape:
        return Report(Outcome.WRONG, "compare", f"shape {tuple(got.shape)} != "
                                                f"{tuple(expected.shape)}")
    outcome = Outcome.OK
    if not torch.allclose(got, expected.float(), rtol=1e-4, atol=1e-5, equal_nan=True):
        finite = expected.isfinite()
        if not (case.has_absent_entries() and torch.allclose(
                got[finite], expected.float()[finite], rtol=1e-4, atol=1e-5)):
            diff = (got - expected).abs().nan_to_num(nan=float("inf")).max().item()
            return Report(Outcome.WRONG, "compare", f"max abs difference {diff:g}")
        outcome = Outcome.STRUCTURAL_ZERO
    for other in runs[1:]:
        if other.cycles != runs[0].cycles or not torch.equal(
                other.output.nan_to_num(nan=7.0), got.nan_to_num(nan=7.0)):
            return Report(Outcome.WRONG, "engines", f"engines disagree: cycles "
                                                    f"{runs[0].cycles} vs {other.cycles}")
    return Report(outcome, "done", f"{runs[0].cycles} cycles")


def check_seed(seed: int) -> Report:
    """The report of the case drawn from ``seed`` (the isolated worker's entry)."""
    return check_case(random_case(random.Random(seed), seed))

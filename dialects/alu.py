"""The ``sam.alu`` operations: one table of names, operand counts and float32 semantics.

Every reader of an ALU op kind draws from :data:`ALU_OPS`: the IRDL enum of the ``op``
attribute (:mod:`fuseflow.dialects.primitives`), the verifier's operand-count and ``scalar``
checks, the simulator's ALU block (both engines), the lowering's constant analysis
(:func:`evaluate`) and its choice of a scalar form for a binary op with a constant operand
(:func:`scalar_form`).

Semantics are float32, computed the way PyTorch float32 eager computes the element-wise op,
with the same order of operations (``scalar / x`` is ``(1 / x) * scalar``, gelu is
``x * 0.5 * (1 + erf(x / sqrt 2))``): add/sub/mul/div/max/min, the selects, neg/relu/rsqrt
and the scalar ops are bit-exact; sqrt, exp, log, tanh, sigmoid and gelu use numpy float32 (erf
in float64, rounded), where torch's vectorized CPU kernels are approximations that may differ
by about an ulp. Only numpy is imported, so the simulator core can use this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from fuseflow.errors import FuseFlowError

f32 = np.float32
_ONE = f32(1.0)
_HALF = f32(0.5)
_SQRT1_2 = f32(math.sqrt(0.5))


_ERF = np.frompyfunc(math.erf, 1, 1)
"""``math.erf`` over an array (the same float64 function as on a scalar)."""


def _gelu(x):
    # PyTorch's float32 order of operations, x * 0.5 * (1 + erf(x * sqrt(1/2))), keeps its
    # rounding (the cancellation in 1 + erf for negative x); erf itself is float64, rounded.
    if isinstance(x, np.ndarray):
        erf = _ERF((x * _SQRT1_2).astype(np.float64)).astype(np.float64).astype(f32)
        return x * _HALF * (_ONE + erf)
    return x * _HALF * (_ONE + f32(math.erf(float(x * _SQRT1_2))))


def _pick(condition, a, b):
    """``a`` where ``condition`` holds, else ``b`` (arrays element-wise)."""
    if isinstance(condition, np.ndarray):
        return np.where(condition, a, b)
    return a if condition else b


@dataclass(frozen=True)
class AluOp:
    """One ALU operation."""

    name: str
    """The value of the ``op`` attribute."""
    family: str
    """'binary' (two streams), 'unary' (one stream), 'scalar' (one stream and the ``scalar``
    attribute) or 'masked' (two streams and ``scalar``)."""
    fn: Callable
    """float32 semantics: ``fn(a, b)``, ``fn(x)``, ``fn(x, s)`` or ``fn(m, x, s)`` by family."""
    doc: str
    """What it computes, for the dialect reference."""

    @property
    def arity(self) -> int:
        """Number of value-stream operands."""
        return 2 if self.family in ("binary", "masked") else 1

    @property
    def needs_scalar(self) -> bool:
        """Whether the op reads the float ``scalar`` attribute."""
        return self.family in ("scalar", "masked")


ALU_OPS: tuple[AluOp, ...] = (
    AluOp("add", "binary", lambda a, b: a + b, "a + b"),
    AluOp("sub", "binary", lambda a, b: a - b, "a - b"),
    AluOp("mul", "binary", lambda a, b: a * b, "a * b"),
    AluOp("div", "binary", lambda a, b: a / b, "a / b"),
    AluOp("max", "binary", lambda a, b: np.maximum(a, b), "max(a, b)"),
    AluOp("min", "binary", lambda a, b: np.minimum(a, b), "min(a, b)"),
    AluOp("gt_select", "binary", lambda a, b: _pick(a > b, a, b),
          "a if a > b else b (b where either is NaN: torch.where(a > b, a, b))"),
    AluOp("lt_select", "binary", lambda a, b: _pick(a < b, a, b),
          "a if a < b else b (b where either is NaN: torch.where(a < b, a, b))"),
    AluOp("neg", "unary", lambda x: -x, "-x"),
    AluOp("exp", "unary", np.exp, "exp(x)"),
    AluOp("rsqrt", "unary", lambda x: _ONE / np.sqrt(x), "1 / sqrt(x)"),
    AluOp("sqrt", "unary", np.sqrt, "sqrt(x)"),
    AluOp("log", "unary", np.log, "log(x) (natural; log(0) = -inf)"),
    AluOp("sigmoid", "unary", lambda x: _ONE / (_ONE + np.exp(-x)), "1 / (1 + exp(-x))"),
    AluOp("tanh", "unary", np.tanh, "tanh(x)"),
    AluOp("gelu", "unary", _gelu, "x * 0.5 * (1 + erf(x / sqrt(2)))"),
    AluOp("relu", "unary", lambda x: np.maximum(x, f32(0.0)), "max(x, 0)"),
    AluOp("scalar_add", "scalar", lambda x, s: x + s, "x + scalar"),
    AluOp("scalar_sub", "scalar", lambda x, s: x - s, "x - scalar"),
    AluOp("scalar_rsub", "scalar", lambda x, s: s - x, "scalar - x"),
    AluOp("scalar_mul", "scalar", lambda x, s: x * s, "x * scalar"),
    AluOp("scalar_div", "scalar", lambda x, s: x / s, "x / scalar"),
    AluOp("scalar_rdiv", "scalar", lambda x, s: (_ONE / x) * s, "scalar / x, as (1 / x) * scalar"),
    AluOp("scalar_max", "scalar", lambda x, s: np.maximum(x, s), "max(x, scalar)"),
    AluOp("scalar_min", "scalar", lambda x, s: np.minimum(x, s), "min(x, scalar)"),
    AluOp("scalar_gt_select", "scalar", lambda x, s: _pick(x > s, x, s),
          "x if x > scalar else scalar (scalar where x is NaN)"),
    AluOp("scalar_lt_select", "scalar", lambda x, s: _pick(x < s, x, s),
          "x if x < scalar else scalar (scalar where x is NaN)"),
    AluOp("mask_fill", "masked", lambda m, x, s: _pick(m != 0, x, s),
          "x where m != 0, else scalar"),
)

ALU_OP_NAMES: tuple[str, ...] = tuple(op.name for op in ALU_OPS)

ABSENT_ANNIHILATES: dict[str, tuple[int, ...]] = {"mul": (0, 1)}
"""Per binary op, the operands whose absent entry (an ``N`` token: nothing stored there)
makes the result 0.0 whatever the other operand holds, NaN and infinities included: a product
with an absent entry is absent, as the lowering plans it (a sparse factor annihilates a
product, so its space is the intersection). So ``(x / x) * m`` is 0.0 at an entry a union
added where the mask ``m`` is absent, not ``NaN * 0``. A quotient does not annihilate: ``0 / 0``
is NaN in PyTorch too (``x / x`` of an all-zero ``x``). Every other op reads ``N`` as 0.0."""
_BY_NAME = {op.name: op for op in ALU_OPS}

# A binary op with one constant operand: (constant on the right, constant on the left).
_SCALAR_FORMS = {
    "add": ("scalar_add", "scalar_add"), "sub": ("scalar_sub", "scalar_rsub"),
    "mul": ("scalar_mul", "scalar_mul"), "div": ("scalar_div", "scalar_rdiv"),
    "max": ("scalar_max", "scalar_max"), "min": ("scalar_min", "scalar_min"),
    # c if c > x else x is max(c, x), NaN where x is NaN
    "gt_select": ("scalar_gt_select", "scalar_max"),
    "lt_select": ("scalar_lt_select", "scalar_min"),
}


class AluError(FuseFlowError, ValueError):
    """An unknown ALU op or a wrong operand count; the message names the valid choices."""


def alu_op(name: str) -> AluOp:
    """The ALU op called ``name``, or AluError listing the valid names."""
    op = _BY_NAME.get(name)
    if op is None:
        raise AluError(f"unknown ALU op {name!r}; valid ops: {', '.join(ALU_OP_NAMES)}")
    return op


def evaluate(name: str, *operands, scalar: float | None = None) -> np.float32:
    """The float32 result of ALU op ``name`` on scalar ``operands`` (and ``scalar``)."""
    op = alu_op(name)
    args = [f32(a) for a in operands]
    if len(args) != op.arity:
        raise AluError(f"ALU op '{name}' takes {op.arity} operands, got {len(args)}")
    if op.needs_scalar:
        if scalar is None:
            raise AluError(f"ALU op '{name}' needs a scalar")
        args.append(f32(scalar))
    with np.errstate(all="ignore"):
        return f32(op.fn(*args))


def scalar_form(binary: str, constant_on_left: bool) -> str | None:
    """The scalar op computing ``binary`` with one constant operand (None if there is none)."""
    forms = _SCALAR_FORMS.get(binary)
    return None if forms is None else forms[1 if constant_on_left else 0]

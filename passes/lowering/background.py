"""Background values of a kernel's fused index notation, and scalar forms of binary ops.

A node's *background* value β is its value where all of its sparse operands are absent: 0 for
a sparse tensor, ``-inf`` for a masked score, ``1`` for ``exp(A)``... The iteration-space
planning (:mod:`.spaces`) reads β to decide which operands annihilate an op (the op is β
wherever the operand is absent) and which nodes must be computed over the full dense space.
Values are computed in float64 on :data:`SCALAR` semantics; only equalities matter.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from fuseflow.passes.lowering.einsum import Const, Op, Reduce, Use

PROBES = (1.0, -2.5, 3.25)
"""Values tried for operands the background analysis cannot see (they do not index the var)."""

SCALAR = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "max": max, "min": min, "neg": lambda x: -x,
    "gt_select": lambda a, b: a if a > b else b, "lt_select": lambda a, b: a if a < b else b,
    "exp": np.exp, "log": np.log, "rsqrt": lambda x: 1.0 / np.sqrt(x), "sqrt": np.sqrt,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "relu": lambda x: max(x, 0.0),
}
"""Scalar semantics of each :class:`Op` kind (float64)."""


def apply(op: Op, args) -> float | None:
    """The value of ``op`` on scalar ``args`` (None: NaN, not a usable background)."""
    with np.errstate(all="ignore"):
        if op.kind == "mask_fill":
            value = args[1] if args[0] != 0 else op.fill
        else:
            value = float(SCALAR[op.kind](*[np.float64(a) for a in args]))
    return None if value is None or math.isnan(value) else float(value)


def constant_over(op: Op, choices: list[tuple]) -> float | None:
    """The op's value if it is the same for every combination of argument choices."""
    seen = set()
    for args in itertools.product(*choices):
        value = apply(op, args)
        if value is None:
            return None
        seen.add(value)
        if len(seen) > 1:
            return None
    return seen.pop() if seen else None


def static_beta(expr) -> float | None:
    """The value of ``expr`` where all of its sparse operands are absent (None if unknown)."""
    if isinstance(expr, Use):
        return 0.0
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Reduce):
        return reduce_beta(expr)
    betas = [static_beta(a) for a in expr.args]
    if any(b is None for b in betas):
        return None
    return apply(expr, betas)


def reduce_beta(r: Reduce) -> float | None:
    """The background of a reduction's result."""
    body = static_beta(r.body)
    if body is None:
        return None
    if r.kind == "sum":
        return (r.init or 0.0) if body == 0.0 else None
    return body if r.init is None else max(r.init, body)


def needs_full_body(kind: str, beta: float | None) -> bool:
    """Whether a reduction must visit absent points of a body with background ``beta``."""
    if beta is None:
        return False                    # the body is already planned full
    return beta != (0.0 if kind == "sum" else -math.inf)


def scalar_op(b, kind: str, vals, c: float, reverse: bool):
    """A binary op with one constant operand ``c`` as a scalar ALU op planned with ``b``."""
    if kind == "gt_select" and reverse:     # c if c > x else x: max(c, x), NaN where x is
        kind = "max"
    if kind == "lt_select" and reverse:
        kind = "min"
    if kind == "max" and c == 0.0:
        return b.alu("relu", vals)
    direct = {"add": "scalar_add", "mul": "scalar_mul", "max": "scalar_max", "min": "scalar_min",
              "gt_select": "scalar_gt_select", "lt_select": "scalar_lt_select"}
    if kind in direct:
        return b.alu(direct[kind], vals, scalar=c)
    if kind == "sub":
        return b.alu("scalar_rsub" if reverse else "scalar_sub", vals, scalar=c)
    if kind == "div":
        return b.alu("scalar_rdiv" if reverse else "scalar_div", vals, scalar=c)
    raise AssertionError(f"no scalar form of {kind}")

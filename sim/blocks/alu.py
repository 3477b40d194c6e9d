"""ALU: element-wise arithmetic on one or two value streams, in float32.

Binary ops dequeue both inputs each step; their control structure must be identical. A
missing operand (``N``) counts as 0.0 (for unary and scalar ops too). Results are float32,
computed the way PyTorch float32 eager computes the element-wise op, with the same order of
operations (``scalar / x`` is ``(1 / x) * scalar``, gelu is ``x * 0.5 * (1 + erf(x / sqrt 2))``):
add/sub/mul/div/max/min/neg/relu/rsqrt and the scalar ops are bit-exact; sqrt, exp, tanh,
sigmoid and gelu use numpy float32 (erf in float64, rounded), where torch's vectorized CPU
kernels are approximations that may differ by about an ulp.
"""

from __future__ import annotations

import math

import numpy as np

from fuseflow.sim.tokens import DONE, EMPTY, is_control

f32 = np.float32
_ONE = f32(1.0)
_HALF = f32(0.5)


_SQRT1_2 = f32(math.sqrt(0.5))


def _gelu(x):
    # PyTorch's float32 order of operations, x * 0.5 * (1 + erf(x * sqrt(1/2))), keeps its
    # rounding (the cancellation in 1 + erf for negative x); erf itself is float64, rounded.
    return x * _HALF * (_ONE + f32(math.erf(float(x * _SQRT1_2))))


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "max": lambda a, b: np.maximum(a, b),
    "min": lambda a, b: np.minimum(a, b),
}

UNARY = {
    "neg": lambda x: -x,
    "exp": np.exp,
    "rsqrt": lambda x: _ONE / np.sqrt(x),
    "sqrt": np.sqrt,
    "sigmoid": lambda x: _ONE / (_ONE + np.exp(-x)),
    "tanh": np.tanh,
    "gelu": _gelu,
    "relu": lambda x: np.maximum(x, f32(0.0)),
}

SCALAR = {
    "scalar_add": lambda x, s: x + s,
    "scalar_sub": lambda x, s: x - s,
    "scalar_rsub": lambda x, s: s - x,
    "scalar_mul": lambda x, s: x * s,
    "scalar_div": lambda x, s: x / s,
    "scalar_rdiv": lambda x, s: (_ONE / x) * s,  # as torch computes scalar / tensor
    "scalar_max": lambda x, s: np.maximum(x, s),
    "scalar_min": lambda x, s: np.minimum(x, s),
}

SCALAR_BINARY = {
    "mask_fill": lambda m, x, s: x if m != 0 else s,   # masked_fill(m == 0, s)
}

ALU_OPS = tuple(BINARY) + tuple(UNARY) + tuple(SCALAR) + tuple(SCALAR_BINARY)


def _operand(tok):
    return f32(0.0) if tok is EMPTY else f32(tok)


def alu(ctx):
    """val [, val] -> val: ``attrs['op']`` (see ``ALU_OPS``), ``attrs['scalar']`` for scalar ops."""
    op = ctx.block.attrs.get("op")
    if op not in ALU_OPS:
        ctx.error(f"unknown ALU op {op!r}; valid ops: {', '.join(ALU_OPS)}")
    arity = 2 if op in BINARY or op in SCALAR_BINARY else 1
    if len(ctx.block.inputs) != arity:
        ctx.error(f"op '{op}' takes {arity} input(s), got {len(ctx.block.inputs)}")
    binary = BINARY.get(op)
    if op in SCALAR or op in SCALAR_BINARY:
        scalar = ctx.block.attrs.get("scalar")
        if scalar is None:
            ctx.error(f"op '{op}' needs a 'scalar' attribute")
        s = f32(scalar)
        fn = lambda x: SCALAR[op](x, s)  # noqa: E731
        if op in SCALAR_BINARY:
            binary = lambda a, b: SCALAR_BINARY[op](a, b, s)  # noqa: E731
    else:
        fn = UNARY.get(op)
    with np.errstate(all="ignore"):
        while True:
            a = yield from ctx.recv(0)
            b = (yield from ctx.recv(1)) if arity == 2 else None
            if is_control(a) and a is not EMPTY:
                if arity == 2 and b != a:
                    ctx.error(f"operands have different control structure: {a!r} vs {b!r}")
                out = a
            elif arity == 2:
                if is_control(b) and b is not EMPTY:
                    ctx.error(f"operands have different control structure: {a!r} vs {b!r}")
                out = f32(binary(_operand(a), _operand(b)))
                ctx.stats.ops += 1
            else:
                out = f32(fn(_operand(a)))
                ctx.stats.ops += 1
            yield from ctx.send(0, out)
            ctx.step()
            if out is DONE:
                return

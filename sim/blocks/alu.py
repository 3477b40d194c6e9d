"""ALU: element-wise arithmetic on one or two value streams, in float32.

Binary ops dequeue both inputs each step; their control structure must be identical. A
missing operand (``N``) counts as 0.0 (for unary and scalar ops too). The ops and their
float32 semantics are :data:`fuseflow.dialects.alu.ALU_OPS`; the tables below group them by
operand form for the reference and fast engines.
"""

from __future__ import annotations

import numpy as np

from fuseflow.dialects import alu as semantics
from fuseflow.dialects.tiles import TileSpec
from fuseflow.sim.blocks import tiles
from fuseflow.sim.tokens import DONE, EMPTY, is_control

f32 = np.float32


def _family(name: str) -> dict:
    return {op.name: op.fn for op in semantics.ALU_OPS if op.family == name}


BINARY = _family("binary")
UNARY = _family("unary")
SCALAR = _family("scalar")
SCALAR_BINARY = _family("masked")
ALU_OPS = semantics.ALU_OP_NAMES
ABSENT_ANNIHILATES = semantics.ABSENT_ANNIHILATES


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
    if "tiles" in ctx.block.attrs:
        yield from _tile_alu(ctx, arity, binary if arity == 2 else fn)
        return
    annihilating = ABSENT_ANNIHILATES.get(op, ())
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
                absent = (a is EMPTY, b is EMPTY)
                if any(absent[i] for i in annihilating):
                    out = f32(0.0)
                else:
                    out = f32(binary(_operand(a), _operand(b)))
                ctx.stats.ops += 1
            else:
                out = f32(fn(_operand(a)))
                ctx.stats.ops += 1
            yield from ctx.send(0, out)
            ctx.step()
            if out is DONE:
                return


def _tile_alu(ctx, arity: int, fn):
    """The ALU on tiles (``attrs['tiles']``): ``fn`` element by element, operands broadcast
    and tile axes summed as ``attrs['tile']`` says (:mod:`fuseflow.sim.blocks.tiles`)."""
    ins, outs = ctx.block.attrs["tiles"]
    spec = ctx.block.attrs.get("tile")
    spec = TileSpec.parse(spec, arity) if spec else None
    zeros = [np.zeros(t, f32) for t in ins]
    ops = tiles.product_ops(spec, ins, outs[0])
    while True:
        toks = []
        for port in range(arity):
            toks.append((yield from ctx.recv(port)))
        a = toks[0]
        if is_control(a) and a is not EMPTY:
            if any(t is not a for t in toks[1:]):
                ctx.error(f"operands have different control structure: {toks!r}")
            out = a
        else:
            if any(is_control(t) and t is not EMPTY for t in toks[1:]):
                ctx.error(f"operands have different control structure: {toks!r}")
            operands = [(z if t is EMPTY else np.asarray(t, f32))[None] for t, z in zip(toks, zeros)]
            out = tiles.combine(fn, spec, operands)[0]
            ctx.stats.ops += ops
        yield from ctx.send(0, out)
        ctx.step()
        if out is DONE:
            return

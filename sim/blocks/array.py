"""Array: value loads."""

from __future__ import annotations

import numpy as np

from fuseflow.sim.tokens import DONE, EMPTY, is_control

ZERO = np.float32(0.0)


def array(ctx):
    """ref -> val: ``vals[ref]``; ``N`` -> 0.0; control tokens pass through. One step per token.

    A tile stream (``attrs['tiles']``: result tile shape ``t`` of ``E`` elements) loads the
    tile ``vals[ref*E : (ref+1)*E]`` in row-major order (its levels are the innermost dense
    levels of the tensor): ``N`` gives a tile of zeros."""
    vals = ctx.tensor().vals
    tile = ctx.block.attrs.get("tiles", ((), ((),)))[1][0]
    size = int(np.prod(tile, dtype=np.int64)) if tile else 1
    zero = np.zeros(tile, np.float32) if tile else ZERO
    while True:
        tok = yield from ctx.recv(0)
        if tok is EMPTY:
            out = zero if tile else EMPTY   # scalar values pass N on: it annihilates (ALU)
        elif is_control(tok):
            out = tok
        else:
            if not (0 <= tok * size and (tok + 1) * size <= len(vals)):
                ctx.error(f"reference {tok} outside the {len(vals) // size} "
                          f"{'tiles' if tile else 'values'} of input {ctx.block.attrs['tensor']}")
            out = vals[tok * size:(tok + 1) * size].reshape(tile) if tile else vals[tok]
            ctx.stats.val_reads += size
        yield from ctx.send(0, out)
        ctx.step()
        if tok is DONE:
            return

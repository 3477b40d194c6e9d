"""Array: value loads."""

from __future__ import annotations

import numpy as np

from fuseflow.sim.tokens import DONE, EMPTY, is_control

ZERO = np.float32(0.0)


def array(ctx):
    """ref -> val: ``vals[ref]``; ``N`` -> 0.0; control tokens pass through. One step per token."""
    vals = ctx.tensor().vals
    while True:
        tok = yield from ctx.recv(0)
        if tok is EMPTY:
            out = ZERO
        elif is_control(tok):
            out = tok
        else:
            if not 0 <= tok < len(vals):
                ctx.error(f"reference {tok} outside the {len(vals)} values of input {ctx.block.attrs['tensor']}")
            out = vals[tok]
            ctx.stats.val_reads += 1
        yield from ctx.send(0, out)
        ctx.step()
        if tok is DONE:
            return

"""Vectorized level and value writers: one step per token; the sink feeds result assembly."""

from __future__ import annotations

import numpy as np

from fuseflow.sim.engines.fast_stream import DATA, EMPTY_CODE, ends_with_done, finish, step_clocks


def _steps(ctx, s):
    if not ends_with_done(s):
        return None
    return step_clocks(s.runmax(), ctx.ii)


def level_write(ctx, ins):
    """Records coordinates and stops of level ``attrs['level']`` of result ``attrs['result']``."""
    fmt = ctx.output_format()
    level = int(ctx.block.attrs["level"])
    if not 0 <= level < len(fmt.levels):
        ctx.error(f"writes level {level} of a result with {len(fmt.levels)} levels")
    stored = fmt.levels[level].format
    s = ins[0]
    clocks = _steps(ctx, s)
    body = s.code[:-1]
    if clocks is None or s.data.dtype.kind != "i" or np.any((body < 0) & (body != DATA)):
        return None
    written = s.__class__(body, s.data[:-1], s.time[:-1])
    ctx.sink = written.tokens()
    stops = int(np.count_nonzero(body >= 0))
    if stored == "compressed":
        ctx.stats.ref_writes += stops
    if stored != "dense":
        ctx.stats.crd_writes += len(body) - stops
    return finish(ctx, ins, [], clocks)


def value_write(ctx, ins):
    """Records the values of result ``attrs['result']`` (``N`` as 0.0); stops are skipped."""
    ctx.output_format()
    s = ins[0]
    clocks = _steps(ctx, s)
    if clocks is None:
        return None
    code = s.code
    kept = (code == DATA) | (code == EMPTY_CODE)
    if np.any((code < 0) & ~kept & (np.arange(len(code)) < len(code) - 1)):
        return None
    vals = np.where(code[kept] == DATA, s.data[kept], 0).astype(np.float32)
    ctx.sink = list(vals)
    ctx.stats.val_writes += len(vals)
    return finish(ctx, ins, [], clocks)

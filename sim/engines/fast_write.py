"""Vectorized level and value writers (one step per token) and result assembly from their sinks.

A vectorized level writer keeps its tokens as a :class:`Stream` and a value writer its values
as a float32 array; :func:`assemble_result` parses them into the result tree the way
:func:`fuseflow.sim.blocks.write.assemble` does, and hands anything it does not cover (COO
runs, levels without a writer, malformed streams) to that function.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.write import assemble
from fuseflow.sim.engines.fast_stream import DATA, EMPTY_CODE, Stream, ends_with_done, finish, follow_stamps
from fuseflow.sim.formats import FiberTree, TensorFormat


def _steps(ctx, s):
    """``(stamps, shift)`` of a writer's steps (one per token), or None if malformed."""
    if not ends_with_done(s):
        return None
    return follow_stamps(ctx, s)


def level_write(ctx, ins):
    """Records coordinates and stops of level ``attrs['level']`` of result ``attrs['result']``."""
    fmt = ctx.output_format()
    level = int(ctx.block.attrs["level"])
    if not 0 <= level < len(fmt.levels):
        ctx.error(f"writes level {level} of a result with {len(fmt.levels)} levels")
    stored = fmt.levels[level].format
    s = ins[0]
    stamped = _steps(ctx, s)
    body = s.code[:-1]
    if stamped is None or s.data.dtype.kind != "i" or np.any((body < 0) & (body != DATA)):
        return None
    ctx.sink = Stream(body, s.data[:-1], s.base[:-1], shift=s.shift)  # tokens before D; see assemble_result
    stops = int(np.count_nonzero(body >= 0))
    if stored == "compressed":
        ctx.stats.ref_writes += stops
    if stored != "dense":
        ctx.stats.crd_writes += len(body) - stops
    return finish(ctx, ins, [], None, stamps=stamped[0], shift=stamped[1])


def value_write(ctx, ins):
    """Records the values of result ``attrs['result']`` (``N`` as 0.0); stops are skipped."""
    ctx.output_format()
    s = ins[0]
    stamped = _steps(ctx, s)
    if stamped is None:
        return None
    code = s.code
    kept = (code == DATA) | (code == EMPTY_CODE)
    if np.any((code < 0) & ~kept & (np.arange(len(code)) < len(code) - 1)):
        return None
    data = s.data[kept]
    mask = (code[kept] == DATA).reshape((-1,) + (1,) * (data.ndim - 1))
    vals = np.where(mask, data, 0).astype(np.float32).reshape(-1)  # tiles: row-major values
    ctx.sink = vals
    ctx.stats.val_writes += len(vals)
    return finish(ctx, ins, [], None, stamps=stamped[0], shift=stamped[1])


def _parse_levels(fmt: TensorFormat, levels: dict, values: np.ndarray):
    """Level coordinates of every written entry, or None where the reference parser must decide.

    Parses compressed and dense levels by the scanner rule: each parent data token and each
    bare parent stop owns the next child fiber (its data, then a stop); a bare stop's fiber
    is empty.
    """
    written = next((lvl for lvl in range(len(fmt.levels)) if lvl not in levels), len(fmt.levels))
    if any(spec.format not in ("dense", "compressed") for spec in fmt.levels) or \
            any(not isinstance(levels.get(lvl), Stream) for lvl in range(written)) or \
            any(lvl in levels or fmt.levels[lvl].format != "dense"
                for lvl in range(written, len(fmt.levels))) or not written:
        return None
    parent = np.array([DATA], dtype=np.int8)
    paths = np.zeros((1, 0), dtype=np.int64)
    for lvl in range(written):
        child = levels[lvl]
        pstop = parent >= 0
        bare = pstop & np.concatenate([[True], pstop[:-1]])
        owner_is_data = ~pstop[~pstop | bare]  # one per child fiber
        cstop = child.code >= 0
        if int(np.count_nonzero(cstop)) != len(owner_is_data) or (len(cstop) and not cstop[-1]):
            return None
        fiber = (np.cumsum(cstop) - cstop)[~cstop]
        if not np.all(owner_is_data[fiber]):
            return None
        rows = (np.cumsum(owner_is_data) - 1)[fiber]
        paths = np.column_stack([paths[rows], child.data[~cstop]])
        parent = child.code
    # dense levels below the written ones (a tile's): every coordinate, row-major
    sizes = [fmt.levels[lvl].size(fmt.shape) for lvl in range(written, len(fmt.levels))]
    if sizes:
        grid = np.indices(sizes).reshape(len(sizes), -1).T
        paths = np.column_stack([np.repeat(paths, len(grid), axis=0), np.tile(grid, (len(paths), 1))])
    return paths if len(paths) == len(values) else None


def _written_in_storage_order(fmt: TensorFormat, levels: dict, values: np.ndarray) -> bool:
    """Whether a result with only dense levels was written whole and in storage order: each
    written level's stream is one fiber ``0 .. n-1`` then a stop per parent coordinate (the
    levels below the written ones are a tile's, row-major in each value). Its values are then
    the tree's values as they are, with no level coordinates built (a dense result of 10^8
    values would need gigabytes of them)."""
    if any(spec.format != "dense" for spec in fmt.levels):
        return False
    sizes = [fmt.levels[lvl].size(fmt.shape) for lvl in range(len(fmt.levels))]
    written = next((lvl for lvl in range(len(fmt.levels)) if lvl not in levels), len(fmt.levels))
    if any(lvl in levels for lvl in range(written, len(fmt.levels))) or \
            len(values) != int(np.prod(sizes, dtype=np.int64)):
        return False
    fibers = 1
    for lvl in range(written):
        stream, n = levels[lvl], sizes[lvl]
        if not isinstance(stream, Stream) or len(stream) != fibers * (n + 1):
            return False
        code = stream.code.reshape(fibers, n + 1)
        if not (np.all(code[:, :n] == DATA) and np.all(code[:, n] >= 0)):
            return False
        if n and not np.all(stream.data.reshape(fibers, n + 1)[:, :n] == np.arange(n)):
            return False
        fibers *= n
    return True


def assemble_result(fmt: TensorFormat, levels: dict, values, what: str) -> FiberTree:
    """One graph result from its writers' sinks (streams and arrays, or reference token lists)."""
    if isinstance(values, np.ndarray) and fmt.levels:
        if _written_in_storage_order(fmt, levels, values):
            return FiberTree(fmt, [None] * len(fmt.levels), [None] * len(fmt.levels),
                             np.asarray(values, dtype=np.float32))
        paths = _parse_levels(fmt, levels, values)
        if paths is not None:
            return FiberTree.from_level_coords(fmt, paths, values)
    tokens = {lvl: s.tokens() if isinstance(s, Stream) else s for lvl, s in levels.items()}
    return assemble(fmt, tokens, values, what=what)

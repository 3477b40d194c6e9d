"""Vectorized level and value writers (one step per token) and result assembly from their sinks.

A vectorized level writer keeps its tokens as a :class:`Stream` and a value writer its values
as a float32 array; :func:`assemble_result` parses them into the result tree the way
:func:`fuseflow.sim.blocks.write.assemble` does, and hands anything it does not cover (COO
runs, levels without a writer, malformed streams) to that function.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.write import assemble
from fuseflow.sim.engines.fast_stream import (DATA, EMPTY_CODE, Stream, concat, ends_with_done, finish,
                                              follow_stamps)
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


class DenseLevelSink:
    """A chunked run's level writer of a dense level of size ``n``: its pieces kept compactly.

    While the tokens are in storage order (fibers of ``0 .. n-1`` then a stop, the only form a
    dense level is written in when the whole result is), only the stops are kept (their codes
    and payloads): a dense result of 10^8 values does not hold 10^8 coordinates until it is
    assembled. A piece out of that order turns the sink into the pieces themselves (the kept
    ones rebuilt exactly), which :func:`assemble_result` parses as usual.
    """

    def __init__(self, n: int):
        self.n = n
        self.count = 0
        self.stop_codes: list[np.ndarray] = []
        self.stop_data: list[np.ndarray] = []
        self.pieces: list[Stream] | None = None
        """The pieces as they are, once one was out of storage order (None before)."""

    def __len__(self) -> int:
        return self.count

    @property
    def in_storage_order(self) -> bool:
        return self.pieces is None

    def add(self, piece: Stream) -> None:
        """Keeps ``piece``: the writer's tokens of one round, without stamps."""
        if self.pieces is None:
            k = (self.count + np.arange(len(piece), dtype=np.int64)) % (self.n + 1)
            stop = k == self.n
            coords = ~stop
            if np.array_equal(piece.code >= 0, stop) and np.all(piece.code[coords] == DATA) \
                    and np.array_equal(piece.data[coords], k[coords]):
                self.stop_codes.append(piece.code[stop])
                self.stop_data.append(piece.data[stop])
                self.count += len(piece)
                return
            self.pieces = [self.stream()] if self.count else []
        self.pieces.append(piece)
        self.count += len(piece)

    def stream(self) -> Stream:
        """The tokens as one stream (stamps 0: results never read a writer's stamps)."""
        if self.pieces is not None:
            return concat(self.pieces) if self.pieces else Stream(
                np.zeros(0, np.int8), np.zeros(0, np.int32), np.zeros(0, np.int32))
        k = np.arange(self.count, dtype=np.int64) % (self.n + 1)
        stop = k == self.n
        stop_codes = np.concatenate(self.stop_codes) if self.stop_codes else np.zeros(0, np.int8)
        stop_data = np.concatenate(self.stop_data) if self.stop_data else np.zeros(0, np.int64)
        code = np.full(self.count, DATA, dtype=np.int8)
        code[stop] = stop_codes
        data = k.astype(np.result_type(stop_data.dtype, np.min_scalar_type(max(self.n, 1))))
        data[stop] = stop_data
        return Stream(code, data, np.zeros(self.count, np.int32))

    def tokens(self) -> list:
        return self.stream().tokens()


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
        if isinstance(stream, DenseLevelSink) and stream.in_storage_order and stream.n == n \
                and len(stream) == fibers * (n + 1):
            fibers *= n
            continue
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
        levels = {lvl: s.stream() if isinstance(s, DenseLevelSink) else s
                  for lvl, s in levels.items()}
        paths = _parse_levels(fmt, levels, values)
        if paths is not None:
            return FiberTree.from_level_coords(fmt, paths, values)
    tokens = {lvl: s.tokens() if isinstance(s, (Stream, DenseLevelSink)) else s
              for lvl, s in levels.items()}
    return assemble(fmt, tokens, values, what=what)

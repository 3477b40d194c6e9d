"""Level and value writers, and the assembly of a graph result from what they wrote."""

from __future__ import annotations

import numpy as np

from fuseflow.sim.formats import FiberTree, TensorFormat
from fuseflow.sim.tokens import DONE, EMPTY, Stop, StreamError, is_data, is_stop


def level_write(ctx):
    """crd -> memory: records level ``attrs['level']`` of result ``attrs['result']``.

    One step per token. Coordinates and stops are kept in order in ``ctx.sink``; stats count a
    coordinate write per coordinate of a non-dense level and a segment write per stop of a
    compressed level (dense levels store nothing).
    """
    fmt = ctx.output_format()
    level = int(ctx.block.attrs["level"])
    if not 0 <= level < len(fmt.levels):
        ctx.error(f"writes level {level} of a result with {len(fmt.levels)} levels")
    stored = fmt.levels[level].format
    while True:
        tok = yield from ctx.recv(0)
        ctx.step()
        if tok is DONE:
            return
        if not (is_data(tok) or is_stop(tok)):
            ctx.error(f"cannot write coordinate {tok!r}")
        ctx.sink.append(tok)
        if is_stop(tok):
            ctx.stats.ref_writes += stored == "compressed"
        elif stored != "dense":
            ctx.stats.crd_writes += 1


def value_write(ctx):
    """val -> memory: records the values of result ``attrs['result']`` (``N`` as 0.0); a tile's
    values in row-major order (the result's levels below the written ones)."""
    ctx.output_format()
    tile = ctx.block.attrs.get("tiles", (((),), ()))[0][0]
    while True:
        tok = yield from ctx.recv(0)
        ctx.step()
        if tok is DONE:
            return
        if is_stop(tok):
            continue
        if tile:  # a tile's values, row-major: the result's innermost dense levels
            values = np.zeros(tile, np.float32) if tok is EMPTY else tok
            ctx.sink.extend(np.asarray(values, np.float32).ravel())
            ctx.stats.val_writes += values.size
            continue
        ctx.sink.append(np.float32(0.0) if tok is EMPTY else np.float32(tok))
        ctx.stats.val_writes += 1


def scan_rule(parent: list, fiber) -> list:
    """The child stream a scanner builds from a parent token list (without ``D``).

    ``fiber(token)`` gives the coordinates under a data token; each fiber closes with ``S0``, or
    ``S(k+1)`` absorbing a following parent ``S_k``; a bare parent ``S_k`` gives ``S(k+1)``.
    """
    out: list = []
    absorbed = False
    for i, tok in enumerate(parent):
        if is_stop(tok):
            if not absorbed:
                out.append(Stop(tok.level + 1))
            absorbed = False
            continue
        out.extend(fiber(tok))
        nxt = parent[i + 1] if i + 1 < len(parent) else None
        absorbed = is_stop(nxt)
        out.append(Stop(nxt.level + 1) if absorbed else Stop(0))
    return out


def _segments(fmt: TensorFormat) -> list[list[int]]:
    """Levels grouped as written together: a COO run (a level followed by singletons) or one level."""
    segs: list[list[int]] = []
    for lvl, spec in enumerate(fmt.levels):
        if spec.format == "singleton":
            segs[-1].append(lvl)
        else:
            segs.append([lvl])
    return segs


def _shape_of(toks: list) -> list:
    return [t if is_stop(t) else None for t in toks]


def assemble(fmt: TensorFormat, levels: dict[int, list], values: list | None, what: str = "result") -> FiberTree:
    """Builds a result tree of format ``fmt`` from written level streams and values.

    The level streams are parsed jointly, top-down, by the scanner rule: each coordinate at level
    l-1 owns the next fiber of level l (data up to a stop), and a bare stop at level l-1 (an
    empty fiber) owns one bare stop at level l. The levels of a COO run (compressed_nonunique
    and its singletons) may instead all be written with the structure of the run's last level,
    one coordinate per entry (the outer ones repeated by a coordinate hold): the run is then
    parsed as one level, d levels deep, whose fibers end at stops of level >= d-1. A level
    without a writer must be dense; it is taken as fully scanned. Coordinates absent from dense
    levels are filled with 0.0.
    """
    if values is None:
        raise StreamError(f"{what} has no value writer")
    if not fmt.levels:
        if len(values) != 1:
            raise StreamError(f"{what} is a scalar but {len(values)} values were written")
        return FiberTree(fmt, [], [], np.asarray(values, dtype=np.float32))
    for lvl, spec in enumerate(fmt.levels):
        if lvl not in levels:
            if spec.format != "dense":
                raise StreamError(f"{what} level {lvl} ({spec.format}) has no level writer")
    parent: list = [0]
    paths: list[tuple] = [()]
    for seg in _segments(fmt):
        streams = [levels.get(l) for l in seg]
        zipped = len(seg) > 1 and all(_shape_of(t) == _shape_of(streams[-1]) for t in streams)
        groups = [seg] if zipped else [[l] for l in seg]
        for group in groups:
            lvl = group[0]
            toks = levels.get(lvl)
            if toks is None:
                n = fmt.levels[lvl].size(fmt.shape)
                toks = scan_rule(parent, lambda _t: range(n))
            parent, paths = _parse(parent, paths, [levels.get(l, toks) for l in group], len(group),
                                   f"{what} level {lvl}")
    if len(values) != len(paths):
        raise StreamError(f"{what}: {len(values)} values written for {len(paths)} coordinates")
    return FiberTree.from_level_coords(fmt, np.array(paths, dtype=np.int64).reshape(len(paths), len(fmt.levels)),
                                       np.asarray(values, dtype=np.float32))


def _parse(parent: list, paths: list[tuple], streams: list[list], depth: int, what: str):
    """Pairs the fibers of ``streams`` (``depth`` levels below ``parent``) with parent tokens.

    Returns the child token list (the structure the next level nests under) and the extended
    coordinate paths of its data tokens.
    """
    toks = streams[-1]
    new_paths: list[tuple] = []
    i, k, bare = 0, 0, True
    for pt in parent:
        if is_stop(pt):
            if bare:
                if i >= len(toks) or not is_stop(toks[i]):
                    raise StreamError(f"{what}: expected a bare stop at token {i}")
                i += 1
            bare = True
            continue
        path = paths[k]
        k += 1
        bare = False
        while True:
            if i >= len(toks):
                raise StreamError(f"{what}: stream ends inside a fiber")
            t = toks[i]
            if is_stop(t):
                i += 1
                if t.level >= depth - 1:
                    break
                continue
            new_paths.append(path + tuple(int(s[i]) for s in streams))
            i += 1
    if i != len(toks):
        raise StreamError(f"{what}: {len(toks) - i} tokens left after the parent level's fibers")
    return toks, new_paths

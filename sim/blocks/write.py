"""Level and value writers, and the assembly of a graph result from what they wrote."""

from __future__ import annotations

import numpy as np

from fuseflow.sim.formats import FiberTree, TensorFormat
from fuseflow.sim.tokens import DONE, EMPTY, Stop, StreamError, is_data, is_stop


def level_write(ctx):
    """crd -> memory: records level ``attrs['level']`` of result ``attrs['result']``.

    One step per token. Coordinates and stops are kept in order in ``ctx.sink``; stats count a
    coordinate write per coordinate and a segment write per stop for compressed levels (dense
    levels store nothing).
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
        if stored != "dense":
            if is_stop(tok):
                ctx.stats.ref_writes += stored != "singleton"
            else:
                ctx.stats.crd_writes += 1


def value_write(ctx):
    """val -> memory: records the values of result ``attrs['result']`` (``N`` as 0.0)."""
    ctx.output_format()
    while True:
        tok = yield from ctx.recv(0)
        ctx.step()
        if tok is DONE:
            return
        if is_stop(tok):
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


def assemble(fmt: TensorFormat, levels: dict[int, list], values: list | None, what: str = "result") -> FiberTree:
    """Builds a result tree of format ``fmt`` from written level streams and values.

    The level streams are parsed jointly, top-down, by the scanner rule: each coordinate at level
    l-1 owns the next fiber of level l (data up to a stop), and a bare stop at level l-1 (an
    empty fiber) owns one bare stop at level l. A level without a writer must be dense; it is
    taken as fully scanned. Coordinates absent from dense levels are filled with 0.0.
    """
    if values is None:
        raise StreamError(f"{what} has no value writer")
    if not fmt.levels:
        if len(values) != 1:
            raise StreamError(f"{what} is a scalar but {len(values)} values were written")
        return FiberTree(fmt, [], [], np.asarray(values, dtype=np.float32))
    parent: list = [0]
    paths: list[tuple] = [()]
    for lvl, spec in enumerate(fmt.levels):
        toks = levels.get(lvl)
        if toks is None:
            if spec.format != "dense":
                raise StreamError(f"{what} level {lvl} ({spec.format}) has no level writer")
            n = spec.size(fmt.shape)
            toks = scan_rule(parent, lambda _t: range(n))
        new_paths: list[tuple] = []
        i, k, bare = 0, 0, True
        for pt in parent:
            if is_stop(pt):
                if bare:
                    if i >= len(toks) or not is_stop(toks[i]):
                        raise StreamError(f"{what} level {lvl}: expected a bare stop at token {i}")
                    i += 1
                bare = True
                continue
            path = paths[k]
            k += 1
            bare = False
            while True:
                if i >= len(toks):
                    raise StreamError(f"{what} level {lvl}: stream ends inside a fiber")
                t = toks[i]
                i += 1
                if is_stop(t):
                    break
                new_paths.append(path + (int(t),))
        if i != len(toks):
            raise StreamError(f"{what} level {lvl}: {len(toks) - i} tokens left after the parent level's fibers")
        parent, paths = toks, new_paths
    if len(values) != len(paths):
        raise StreamError(f"{what}: {len(values)} values written for {len(paths)} coordinates")
    return FiberTree.from_level_coords(fmt, np.array(paths, dtype=np.int64).reshape(len(paths), len(fmt.levels)),
                                       np.asarray(values, dtype=np.float32))

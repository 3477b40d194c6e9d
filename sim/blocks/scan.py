"""Root, level scanner and locate: the blocks that turn references into fibers."""

from __future__ import annotations

from fuseflow.sim.blocks.common import close_parent, expect_done
from fuseflow.sim.tokens import DONE, EMPTY, Stop, is_stop


def root(ctx):
    """Emits reference ``0`` then ``D`` (two steps)."""
    yield from ctx.send(0, 0)
    ctx.step()
    yield from ctx.send(0, DONE)
    ctx.step()


def scanned_level(ctx):
    """``(tree, level, format)`` of the level a scan reads; None for a dense range (no tensor).

    Checks the level exists and its format is the declared ``attrs['format']``.
    """
    attrs = ctx.block.attrs
    tensor = attrs.get("tensor")
    if tensor is None:
        return None
    tree = ctx.tensor()
    level = int(attrs["level"])
    if not 0 <= level < len(tree.fmt.levels):
        ctx.error(f"level {level} out of range for a tensor with {len(tree.fmt.levels)} levels")
    fmt = tree.fmt.levels[level].format
    declared = attrs.get("format")
    if declared is not None and declared != fmt and (declared, fmt) != ("compressed", "compressed_nonunique"):
        ctx.error(f"scans a '{declared}' level but input {tensor} level {level} is '{fmt}'")
    return tree, level, fmt


def _level_reader(ctx):
    """``fiber(ref) -> (crds, refs)`` for the scanned level, counting tensor reads."""
    scanned = scanned_level(ctx)
    if scanned is None:
        n = int(ctx.block.attrs["size"])
        return lambda r: (range(n), range(r * n, r * n + n))
    tree, level, fmt = scanned
    stats = ctx.stats

    def fiber(r):
        crds, refs = tree.fiber(level, r)
        if fmt != "dense":
            stats.crd_reads += len(crds)
            stats.ref_reads += 2 if fmt != "singleton" else 0
        return crds.tolist(), refs.tolist()

    return fiber


def scan(ctx):
    """Level scanner: ref -> crd, ref.

    For each input reference (or ``N``): one step per coordinate, then one step for the closing
    stop, which waits for the next input token: ``S0``, or ``S(k+1)`` absorbing a following
    ``S_k``. ``N`` gives ``N`` on both outputs then the closing stop. A bare ``S_k`` gives
    ``S(k+1)``; ``D`` gives ``D``.
    """
    fiber = _level_reader(ctx)
    while True:
        tok = yield from ctx.recv(0)
        if tok is DONE:
            yield from ctx.send_all(DONE)
            ctx.step()
            return
        if is_stop(tok):
            yield from ctx.send_all(Stop(tok.level + 1))
            ctx.step()
            continue
        if tok is EMPTY:
            yield from ctx.send_all(EMPTY)
            ctx.step()
        else:
            crds, refs = fiber(tok)
            for c, r in zip(crds, refs):
                yield from ctx.send(0, c)
                yield from ctx.send(1, r)
                ctx.step()
        nxt = yield from ctx.peek(0)
        if is_stop(nxt):
            yield from ctx.recv(0)
            close = Stop(nxt.level + 1)
        else:
            close = Stop(0)
        yield from ctx.send_all(close)
        ctx.step()


def locate(ctx):
    """Locate: crd, ref -> ref, crd: random access into a dense level by coordinate.

    The ``ref`` input carries one parent reference per fiber of the ``crd`` input (the stream a
    scanner of the located level would read). Per crd token, one step: a coordinate ``c`` under
    parent ``r`` gives reference ``r*size + c`` (``N`` if either is ``N``) and passes ``c``;
    the fiber's closing stop consumes its parent reference (and the parent's following stop).
    """
    attrs = ctx.block.attrs
    if attrs.get("tensor") is not None:
        tree = ctx.tensor()
        lv = tree.fmt.levels[int(attrs["level"])]
        if lv.format != "dense":
            ctx.error(f"locate needs a dense level, input level {attrs['level']} is '{lv.format}'")
        size = lv.size(tree.fmt.shape)
    else:
        size = int(attrs["size"])
    while True:
        c = yield from ctx.recv(0)
        if c is DONE:
            yield from expect_done(ctx, 1)
            yield from ctx.send_all(DONE)
            ctx.step()
            return
        if is_stop(c):
            yield from close_parent(ctx, 1, c)
            yield from ctx.send_all(c)
        else:
            r = yield from ctx.peek(1)
            if is_stop(r) or r is DONE:
                ctx.error(f"coordinate {c!r} has no parent reference (ref input holds {r!r})")
            if c is EMPTY or r is EMPTY:
                out = EMPTY
            else:
                if not 0 <= c < size:
                    ctx.error(f"coordinate {c} outside the located level's size {size}")
                out = r * size + c
            yield from ctx.send(0, out)
            yield from ctx.send(1, c)
        ctx.step()


"""Fork, join (parallel lanes) and broadcast (one stream to several consumers)."""

from __future__ import annotations

from fuseflow.sim.blocks.common import expect_done
from fuseflow.sim.tokens import DONE, EMPTY, Stop, is_data, is_stop


def broadcast(ctx):
    """x -> x*n: copies every token to every output (initiation interval 0 by default)."""
    while True:
        tok = yield from ctx.recv(0)
        yield from ctx.send_all(tok)
        ctx.step()
        if tok is DONE:
            return


def fork(ctx):
    """x -> x*lanes: deals data tokens (and ``N``) round-robin, one lane after the other, with
    a lane counter that runs on across fibers; stops and ``D`` go to every lane. One step per
    input token."""
    lanes = len(ctx.block.outputs)
    lane = 0
    while True:
        tok = yield from ctx.recv(0)
        if is_data(tok) or tok is EMPTY:
            yield from ctx.send(lane, tok)
            lane = (lane + 1) % lanes
        else:
            yield from ctx.send_all(tok)
        ctx.step()
        if tok is DONE:
            return


def _is_bare(ctx, idx, head, depth, done, had):
    """Whether lane ``idx``'s ``head`` is a bare stop (the lane has no unit left in the fiber).

    A stop of level >= depth is bare for depth 0. For depth >= 1 it may also close an empty
    unit; it is one if the lane already forwarded a unit in this fiber, or if another
    unfinished lane still has units (it forwarded one, or its head starts one).
    """
    if not is_stop(head) or head.level < depth:
        return False
    if depth == 0:
        return True
    if had[idx]:
        return False
    for p in range(len(done)):
        if p == idx or done[p] is not None:
            continue
        if had[p]:
            return False
        other = yield from ctx.peek(p)
        if not is_stop(other) or other.level < depth:
            return False
    return True


def join(ctx):
    """x*lanes -> x: merges lanes back into the order the fork dealt them.

    ``attrs['depth']`` (default 1) is how many stop levels each forked data token grew into
    before the join: 0 when it became one token (a value after a reduction, an element-wise
    result), 1 when it became a fiber (after a scanner), d when it became a d-level subtree.
    Such a *unit* ends at its lane's first stop of level >= d-1; a closing ``S(d-1)`` means the
    lane has more units in the current parent fiber, ``S(d+k)`` that it finished it (parent stop
    ``S_k``), and a lane with no unit in a parent fiber shows a bare ``S(d+k)``.

    The join visits lanes round-robin, continuing its counter across fibers as the fork does,
    and forwards one unit per visit; the closing stop of a unit is held back and emitted as
    ``S(d-1)`` when another unit follows in the same parent fiber. When the visited lane has
    finished the parent fiber, every lane has: the join consumes the bare stops of the others
    and emits ``S(d+k)`` (the last unit's closing stop, or a bare stop for an empty parent
    fiber) at no extra cost. This equals the published join (stops of every lane but the last
    lowered to ``S0``) when each lane receives the same number of tokens per fiber, and stays
    correct when they do not. For d >= 1 a lane's stop of level >= d at its turn closes an
    empty unit if the lane already had a unit in this fiber or another unfinished lane still
    has one; otherwise the streams cannot tell an empty last unit from a bare stop (a parent
    fiber whose last unit is empty and falls in the first round of lanes) and the join takes
    it as a bare stop. One step per input token.
    """
    lanes = len(ctx.block.inputs)
    depth = int(ctx.block.attrs.get("depth", 1))
    if depth < 0:
        ctx.error(f"join depth must be >= 0, got {depth}")
    done: list[int | None] = [None] * lanes  # parent stop level at which each lane finished
    had = [False] * lanes  # the lane forwarded a unit in the current parent fiber
    pending = False  # the last unit's closing stop is held back
    idx = 0
    while True:
        if done[idx] is None:
            head = yield from ctx.peek(idx)
            if head is DONE:
                for p in range(lanes):
                    yield from expect_done(ctx, p)
                    if p < lanes - 1:
                        ctx.step()
                yield from ctx.send(0, DONE)
                ctx.step()
                return
            if (yield from _is_bare(ctx, idx, head, depth, done, had)):
                yield from ctx.recv(idx)
                done[idx] = head.level - depth
                ctx.step()
            elif depth == 0:
                tok = yield from ctx.recv(idx)
                yield from ctx.send(0, tok)
                ctx.step()
                idx = (idx + 1) % lanes
                continue
            else:
                first = True
                while True:
                    tok = yield from ctx.recv(idx)
                    if tok is DONE:
                        ctx.error(f"lane {idx} ended inside a unit")
                    if first and pending:
                        yield from ctx.send(0, Stop(depth - 1))
                    first = pending = False
                    if is_stop(tok) and tok.level >= depth - 1:
                        break
                    yield from ctx.send(0, tok)
                    ctx.step()
                pending = had[idx] = True
                if tok.level > depth - 1:
                    done[idx] = tok.level - depth
                ctx.step()
                idx = (idx + 1) % lanes
                continue
        for p in range(lanes):
            if done[p] is None:
                tok = yield from ctx.recv(p)
                if not is_stop(tok) or tok.level < depth:
                    ctx.error(f"lane {p} holds {tok!r} after lane {idx} finished the fiber")
                done[p] = tok.level - depth
                ctx.step()
        if len(set(done)) != 1:
            ctx.error(f"lanes finished a fiber with different stops: {[Stop(k + depth) for k in done]}")
        yield from ctx.send(0, Stop(done[0] + depth))
        done, had, pending = [None] * lanes, [False] * lanes, False

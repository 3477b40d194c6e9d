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


def join(ctx):
    """(order, lane_0 .. lane_(P-1)) -> x: merges the lanes back into the order the fork dealt
    them.

    ``order`` holds the coordinates of the forked level (the stream the fork dealt, or one of
    its structure); ``attrs['depth']`` (default 1) is how many stop levels each forked token
    grew into before the join: 0 when it became one token (a value after a reduction, an
    element-wise result), 1 when it became a fiber (after a scanner), d for a d-level subtree.
    Such a *unit* ends at its lane's first stop of level >= d-1: ``S(d-1)`` when the lane has
    more units in the current parent fiber, ``S(d+k)`` when it was the lane's last one there
    (the parent fiber closed by ``S_k``); a lane with no unit in a parent fiber shows a bare
    ``S(d+k)`` (and at depth 0 every lane closes every parent fiber with ``S_k``).

    Each data token (or ``N``) of ``order`` is received without a step of its own and names
    the next unit: the lane is the fork's round-robin counter, which runs on across fibers.
    The unit's tokens are forwarded, one step each; its closing stop takes a step and is held
    back, emitted as ``S(d-1)`` with the first token of the next unit of the parent fiber.
    A stop ``S_k`` of ``order`` receives the bare stops of the lanes without a unit in the
    fiber (every lane at depth 0), one step each, and sends ``S(d+k)`` (no step). ``D``
    receives every lane's ``D``, one step each, the last one sending ``D``. Exact for any
    lane contents, empty units included: the order says how many units each fiber has.
    """
    lanes = len(ctx.block.inputs) - 1
    depth = int(ctx.block.attrs.get("depth", 1))
    if depth < 0:
        ctx.error(f"join depth must be >= 0, got {depth}")
    counter = 0
    closing: list[int | None] = [None] * lanes  # closing stop level of each lane's last unit
    pending = False  # the last unit's closing stop is held back
    while True:
        g = yield from ctx.recv(0)
        if g is DONE:
            for p in range(lanes):
                yield from expect_done(ctx, p + 1)
                if p < lanes - 1:
                    ctx.step()
            yield from ctx.send(0, DONE)
            ctx.step()
            return
        if is_data(g) or g is EMPTY:
            lane = counter % lanes
            counter += 1
            if depth == 0:
                tok = yield from ctx.recv(lane + 1)
                if not (is_data(tok) or tok is EMPTY):
                    ctx.error(f"lane {lane} holds {tok!r} where the order expects a unit")
                yield from ctx.send(0, tok)
                ctx.step()
                continue
            if closing[lane] is not None and closing[lane] > depth - 1:
                ctx.error(f"lane {lane} closed the fiber with S{closing[lane]} before its last "
                          "unit")
            first = True
            while True:
                tok = yield from ctx.recv(lane + 1)
                if tok is DONE:
                    ctx.error(f"lane {lane} ended inside a unit")
                if first and pending:
                    yield from ctx.send(0, Stop(depth - 1))
                first = pending = False
                if is_stop(tok) and tok.level >= depth - 1:
                    break
                yield from ctx.send(0, tok)
                ctx.step()
            pending = True
            closing[lane] = tok.level
            ctx.step()
            continue
        if not is_stop(g):
            ctx.error(f"order holds {g!r}")
        want = Stop(g.level + depth)
        for p in range(lanes):
            if depth == 0 or closing[p] is None:
                tok = yield from ctx.recv(p + 1)
                if tok != want:
                    ctx.error(f"lane {p} holds {tok!r} where the order closes the fiber with "
                              f"{want!r}")
                ctx.step()
            elif closing[p] != want.level:
                ctx.error(f"lane {p} closed its last unit with S{closing[p]} where the order "
                          f"closes the fiber with {want!r}")
        yield from ctx.send(0, want)
        closing, pending = [None] * lanes, False

"""Coordinate dropper and coordinate hold: (inner crd, outer crd) -> (inner, outer)."""

from __future__ import annotations

from fuseflow.sim.blocks.common import close_parent, expect_done
from fuseflow.sim.tokens import DONE, Stop, is_stop

INNER, OUTER = 0, 1


def crddrop(ctx):
    """Drops outer coordinates whose inner fiber is empty, and those empty fibers.

    One step per outer token; inner tokens cost nothing (they are forwarded as they arrive,
    within the step of their outer coordinate). The output stays a well-formed tree: a kept
    fiber's closing stop is held back until the next kept coordinate of the same outer fiber
    (then it is ``S0``) or the outer fiber's ``S_k`` (then ``S(k+1)``, which raises it to the
    stop a dropped trailing fiber carried); an outer fiber that keeps nothing gets a bare
    ``S(k+1)``, like a scanner under an empty fiber.
    """
    pending = False  # a kept fiber waits for its closing stop
    bare = True  # no outer token since the last outer stop
    while True:
        o = yield from ctx.recv(OUTER)
        if o is DONE:
            yield from expect_done(ctx, INNER)
            yield from ctx.send_all(DONE)
            ctx.step()
            return
        if is_stop(o):
            if bare:
                s = yield from ctx.recv(INNER)
                if s != Stop(o.level + 1):
                    ctx.error(f"empty outer fiber closed by {o!r} but the inner input holds {s!r}")
            yield from ctx.send(OUTER, o)
            yield from ctx.send(INNER, Stop(o.level + 1))
            pending, bare = False, True
            ctx.step()
            continue
        bare = False
        kept = False
        while True:
            t = yield from ctx.recv(INNER)
            if is_stop(t):
                break
            if t is DONE:
                ctx.error(f"inner input ended inside the fiber of outer coordinate {o!r}")
            if not kept:
                if pending:
                    yield from ctx.send(INNER, Stop(0))
                yield from ctx.send(OUTER, o)
                kept = pending = True
            yield from ctx.send(INNER, t)
        ctx.step()


def crdhold(ctx):
    """Outputs inner unchanged and the outer coordinate once per inner coordinate.

    The outer output has the control structure of the inner stream. One step per inner token;
    an inner fiber's closing stop consumes its outer coordinate (and the outer stop it absorbed).
    """
    while True:
        t = yield from ctx.recv(INNER)
        if t is DONE:
            yield from expect_done(ctx, OUTER)
            yield from ctx.send_all(DONE)
            ctx.step()
            return
        if is_stop(t):
            yield from close_parent(ctx, OUTER, t)
            yield from ctx.send_all(t)
        else:
            o = yield from ctx.peek(OUTER)
            if is_stop(o) or o is DONE:
                ctx.error(f"inner coordinate {t!r} has no outer coordinate (outer input holds {o!r})")
            yield from ctx.send(INNER, t)
            yield from ctx.send(OUTER, o)
        ctx.step()

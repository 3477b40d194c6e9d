"""Repeat-signal generator and repeater: broadcasting a reference or value over a fiber."""

from __future__ import annotations

from fuseflow.sim.tokens import DONE, EMPTY, REPEAT, Stop, is_data, is_stop


def repsiggen(ctx):
    """crd -> repsig: data or ``N`` -> ``R``, any ``S_k`` -> ``S`` (``Stop(0)``), ``D`` -> ``D``."""
    while True:
        tok = yield from ctx.recv(0)
        if tok is DONE:
            yield from ctx.send(0, DONE)
            ctx.step()
            return
        yield from ctx.send(0, Stop(0) if is_stop(tok) else REPEAT)
        ctx.step()


def repeat(ctx):
    """ref|val, repsig -> ref|val; one step per repeat-signal token.

    ``R`` re-emits the current input token; ``S`` consumes it and emits a stop one level higher
    than the input's: if the consumed token was data (or ``N``) the stop is ``S0``, or ``S(k+1)``
    absorbing a following input ``S_k``; a consumed bare ``S_k`` gives ``S(k+1)``. ``D`` needs
    the input at ``D`` too.
    """
    while True:
        sig = yield from ctx.recv(1)
        head = yield from ctx.peek(0)
        if sig is REPEAT:
            if not (is_data(head) or head is EMPTY):
                ctx.error(f"repeat signal R while the input holds {head!r}")
            yield from ctx.send(0, head)
        elif is_stop(sig):
            yield from ctx.recv(0)
            if is_stop(head):
                out = Stop(head.level + 1)
            elif head is DONE:
                ctx.error("repeat signal S after the input ended")
            else:
                nxt = yield from ctx.peek(0)
                if is_stop(nxt):
                    yield from ctx.recv(0)
                    out = Stop(nxt.level + 1)
                else:
                    out = Stop(0)
            yield from ctx.send(0, out)
        elif sig is DONE:
            if head is not DONE:
                ctx.error(f"repeat signal D while the input holds {head!r}")
            yield from ctx.recv(0)
            yield from ctx.send(0, DONE)
            ctx.step()
            return
        else:
            ctx.error(f"unexpected repeat-signal token {sig!r}")
        ctx.step()

"""Helpers shared by block implementations."""

from __future__ import annotations

from fuseflow.sim.tokens import DONE, Stop, is_stop


def close_parent(ctx, port, stop):
    """Consumes, from the parent stream on ``port``, what a child's closing ``stop`` implies.

    By the scanner rule a child fiber closed by ``S_j`` stands for one parent token and, when
    ``j >= 1``, the parent's following ``S_(j-1)``; a bare child ``S_j`` mirrors a bare parent
    ``S_(j-1)`` (an empty parent fiber).
    """
    head = yield from ctx.recv(port)
    if is_stop(head):
        if head.level != stop.level - 1:
            ctx.error(f"child stop {stop!r} does not match parent stop {head!r}")
        return
    if head is DONE:
        ctx.error(f"child stop {stop!r} after the parent stream ended")
    if stop.level >= 1:
        ps = yield from ctx.recv(port)
        if ps != Stop(stop.level - 1):
            ctx.error(f"child stop {stop!r} expects parent stop S{stop.level - 1}, got {ps!r}")


def expect_done(ctx, port):
    """Dequeues ``D`` from ``port`` (the other inputs ended)."""
    tok = yield from ctx.recv(port)
    if tok is not DONE:
        ctx.error(f"input {ctx.block.inputs[port]} holds {tok!r} where D was expected")

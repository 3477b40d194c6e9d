"""Helpers for simulator tests: run one block on hand-written streams."""

from __future__ import annotations

from fuseflow.sim.engines.reference import run_block
from fuseflow.sim.graph import Block
from fuseflow.sim.tokens import format_stream, stream


def run1(block_kind, inputs, n_out=1, tensors=(), outputs=(), arch=None, **attrs):
    """Runs a ``block_kind`` block on input streams (strings or token lists).

    Returns the formatted output streams, their stamps and the block context.
    """
    streams = [stream(s) if isinstance(s, str) else s for s in inputs]
    block = Block("b", block_kind, tuple(f"in{i}" for i in range(len(streams))),
                  tuple(f"out{i}" for i in range(n_out)), attrs)
    outs, ctx = run_block(block, streams, tensors, outputs, arch)
    texts = [format_stream(t for t, _ in o) for o in outs]
    return texts, [[s for _, s in o] for o in outs], ctx


def out1(block_kind, inputs, n_out=1, **kw):
    """Only the formatted output streams (one string if ``n_out == 1``)."""
    texts, _, _ = run1(block_kind, inputs, n_out, **kw)
    return texts[0] if n_out == 1 else texts

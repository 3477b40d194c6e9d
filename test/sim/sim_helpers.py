"""Helpers for simulator tests: run one block on hand-written streams."""

from __future__ import annotations

import contextlib
import functools

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


def token_key(tok):
    """A comparable form of a token that tells float bit patterns apart (-0.0, NaN payloads)."""
    import numpy as np

    if isinstance(tok, np.ndarray) and tok.ndim:
        return ("t", tok.shape, tok.astype(np.float32).tobytes())
    if isinstance(tok, (float, np.floating)):
        return ("f", np.float32(tok).tobytes())
    return format_stream([tok])


def assert_same_tree(a, b):
    """Two fibertrees with the same format and bit-identical arrays."""
    import numpy as np

    assert a.fmt == b.fmt
    for x, y in zip(a.pos + a.crd, b.pos + b.crd):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_array_equal(x, y)
    assert a.vals.dtype == b.vals.dtype and a.vals.tobytes() == b.vals.tobytes()


def assert_same_results(want, got, trace=False):
    """Two engines' ``KernelResult``: outputs bit for bit, cycles, every block's statistics."""
    assert len(want.outputs) == len(got.outputs)
    for a, b in zip(want.outputs, got.outputs):
        assert_same_tree(a, b)
    assert want.cycles == got.cycles
    assert list(want.blocks) == list(got.blocks)
    for name in want.blocks:
        assert want.blocks[name].to_dict() == got.blocks[name].to_dict(), name
    assert want.summary() == got.summary()
    if trace:
        assert list(want.trace) == list(got.trace)
        for ch in want.trace:
            assert [(token_key(t), s) for t, s in want.trace[ch]] == \
                [(token_key(t), s) for t, s in got.trace[ch]], ch


CHUNKS = (1, 2, 3, 5)
"""Chunk sizes (tokens per piece) for chunked fast runs: boundaries fall after every token."""


def assert_engines_agree(graph, inputs, arch=None, trace=True, chunks=CHUNKS):
    """Runs ``graph`` on both engines and checks they agree (with traces, token by token), the
    fast engine on whole streams and in chunks of each size in ``chunks``.

    If the reference engine rejects the run, the fast engine must raise the same error class;
    returns None then.
    """
    import pytest

    from fuseflow.sim.engines import SimulationError, run

    try:
        want = run(graph, inputs, arch, engine="reference", trace=trace)
    except SimulationError as exc:
        with pytest.raises(type(exc)):
            run(graph, inputs, arch, engine="fast", trace=trace)
        return None
    got = run(graph, inputs, arch, engine="fast", trace=trace)
    assert_same_results(want, got, trace)
    for size in chunks:
        assert_same_results(want, run(graph, inputs, arch, engine="fast", trace=trace, chunk_tokens=size), trace)
    return got


@contextlib.contextmanager
def chunked(chunk_tokens):
    """Within the block, every simulation (``CompiledModel.simulate`` too) passes
    ``chunk_tokens`` to the engine (None: the default)."""
    import pytest

    from fuseflow.sim import engines

    with pytest.MonkeyPatch.context() as mp:
        if chunk_tokens is not None:
            mp.setattr(engines, "run", functools.partial(engines.run, chunk_tokens=chunk_tokens))
        yield


@functools.lru_cache(maxsize=None)
def compiled(name: str, scale: int = 1):
    """Built-in kernel ``name`` compiled once per scale (its declared formats)."""
    import fuseflow
    from fuseflow.kernels import KERNELS

    kernel = KERNELS[name]
    return fuseflow.compile(kernel.module(), kernel.inputs(0.5, scale=scale),
                            fuseflow.Schedule(formats=dict(kernel.declared)))


def simulate_both(name, inputs, scale=1, arch=None, chunk_tokens=None):
    """Kernel ``name`` simulated by the reference and the fast engine (in chunks of
    ``chunk_tokens`` when given): every kernel's results, the cycles and the outputs' bytes
    agree; returns the fast run."""
    model = compiled(name, scale)
    want = model.simulate(*inputs, engine="reference", arch=arch)
    with chunked(chunk_tokens):
        got = model.simulate(*inputs, engine="fast", arch=arch)
    assert len(want.run.kernels) == len(got.run.kernels)
    for a, b in zip(want.run.kernels, got.run.kernels):
        assert_same_results(a.result, b.result)
    assert want.cycles == got.cycles
    for a, b in zip(want.outputs, got.outputs):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    return got

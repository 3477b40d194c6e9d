"""Dense results written whole in storage order are assembled from their values alone (no
level coordinates: a 736k x 349 result needed ~64 bytes a value for them), and read back as
the row-major array."""

import numpy as np
import pytest
import torch

import fuseflow
from fuseflow.sim.engines import fast_write
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat


class MatMul(torch.nn.Module):
    def forward(self, h, w):
        return h @ w


@pytest.mark.parametrize("chunked", [False, True])
def test_a_dense_result_needs_no_level_coordinates(monkeypatch, chunked):
    def parse(*_):
        raise AssertionError("level coordinates built for a dense result written in order")

    monkeypatch.setattr(fast_write, "_parse_levels", parse)
    g = torch.Generator().manual_seed(0)
    h = torch.rand(7, 4, generator=g)
    w = torch.rand(4, 5, generator=g) * (torch.rand(4, 5, generator=g) < 0.5)
    w[0] = 1.0   # every column non-empty: the accumulator writes every coordinate of a row
    inputs = (h, w.to_sparse_csr())
    compiled = fuseflow.compile(MatMul(), inputs, fuseflow.Schedule())
    if chunked:
        from fuseflow.sim.engines import fast_chunked
        monkeypatch.setattr(fast_chunked.Chunking, "stream_tokens", lambda self: 8)
    got = compiled.simulate(*inputs, engine="fast")
    torch.testing.assert_close(got.output, h @ w, rtol=1e-6, atol=1e-6)
    assert got.cycles == compiled.simulate(*inputs, engine="reference").cycles


def test_a_dense_result_with_unwritten_coordinates_is_filled_with_zeros():
    g = torch.Generator().manual_seed(0)
    h = torch.rand(3, 4, generator=g)
    w = torch.rand(4, 5, generator=g)
    w[:, 2] = 0.0   # column 2 never reaches the accumulator: the writer skips it
    inputs = (h, w.to_sparse_csr())
    got = fuseflow.compile(MatMul(), inputs, fuseflow.Schedule()).simulate(*inputs)
    torch.testing.assert_close(got.output, h @ w, rtol=1e-6, atol=1e-6)


def test_a_dense_result_written_out_of_order_is_still_parsed():
    # level 1 writes 1, 0: not storage order, so the values are placed by their coordinates
    fmt = TensorFormat.dense((1, 2))
    from fuseflow.sim.engines.fast_stream import from_tokens
    from fuseflow.sim.tokens import stream
    levels = {0: from_tokens(stream("0 S0"), [0, 0]), 1: from_tokens(stream("1 0 S1"), [0, 0, 0])}
    values = np.array([5.0, 7.0], np.float32)
    assert not fast_write._written_in_storage_order(fmt, levels, values)
    tree = fast_write.assemble_result(fmt, levels, values, "out")
    assert tree.to_dense().tolist() == [[7.0, 5.0]]


def test_row_major_dense_formats():
    assert TensorFormat.dense((3, 4)).is_row_major_dense()
    assert not TensorFormat.csr((3, 4)).is_row_major_dense()
    transposed = TensorFormat((3, 4), (LevelSpec("dense", 1), LevelSpec("dense", 0)))
    assert not transposed.is_row_major_dense()
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(FiberTree.from_dense(a, transposed).to_dense(), a)
    assert np.array_equal(FiberTree.from_dense(a, TensorFormat.dense((3, 4))).to_dense(), a)

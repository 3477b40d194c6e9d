"""Clocks past int32: the fast engine redoes a kernel whose stamps would overflow with int64
stamps, and stays cycle-identical to the reference (whose clocks are Python integers)."""

import numpy as np
import pytest
from sim_helpers import assert_same_results
from test_sim_engine import hold_graph, spmv_graph, spmv_inputs

from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import fast_scan, fast_stream, run

HUGE = Arch(latency=2**29)
"""Every step's latency a quarter of int32's range: the graphs below run past 2**31 cycles."""


@pytest.mark.parametrize("budget", [None, 64], ids=["whole", "chunked"])
def test_clocks_past_int32_match_the_reference(caplog, budget):
    want = run(spmv_graph(), spmv_inputs(), arch=HUGE, engine="reference", trace=True)
    assert want.cycles > 2**31
    with caplog.at_level("INFO", logger="fuseflow.sim.engines"):
        got = run(spmv_graph(), spmv_inputs(), arch=HUGE, engine="fast", trace=True,
                  memory_budget=budget)
    assert "simulating it again with int64 stamps" in caplog.text
    assert_same_results(want, got, trace=True)


def test_a_graph_of_reference_coroutines_past_int32_matches_the_reference():
    want = run(hold_graph(), [], arch=HUGE, engine="reference", trace=True)
    assert want.cycles > 2**31
    assert_same_results(want, run(hold_graph(), [], arch=HUGE, engine="fast", trace=True),
                        trace=True)


def test_wide_stamps_is_scoped():
    assert fast_stream.TIME_DTYPE is np.int32 and fast_scan.TIME_DTYPE is np.int32
    with fast_stream.wide_stamps():
        assert fast_stream.TIME_DTYPE is np.int64 and fast_scan.TIME_DTYPE is np.int64
        assert fast_stream.MAX_STAMP == np.iinfo(np.int64).max
    assert fast_stream.TIME_DTYPE is np.int32 and fast_scan.TIME_DTYPE is np.int32
    assert fast_stream.MAX_STAMP == np.iinfo(np.int32).max


def test_ordinary_clocks_keep_int32_stamps(caplog):
    with caplog.at_level("INFO", logger="fuseflow.sim.engines"):
        run(spmv_graph(), spmv_inputs(), engine="fast")
    assert "int64" not in caplog.text


def test_a_compiled_fused_chain_past_int32_matches_pytorch_on_both_engines():
    import torch

    import fuseflow

    class Chain(torch.nn.Module):
        def forward(self, a, h, w):
            return torch.relu(a @ (h @ w))

    g = torch.Generator().manual_seed(0)
    a = torch.rand(6, 6, generator=g) * (torch.rand(6, 6, generator=g) < 0.5)
    h, w = torch.rand(6, 5, generator=g), torch.rand(5, 4, generator=g)
    inputs = (a.to_sparse_csr(), h, w)
    compiled = fuseflow.compile(Chain(), inputs, fuseflow.Schedule(fusion="full"))
    ref = compiled.simulate(*inputs, arch=HUGE, engine="reference")
    fast = compiled.simulate(*inputs, arch=HUGE, engine="fast")
    assert ref.cycles > 2**31 and ref.cycles == fast.cycles
    assert torch.equal(ref.output, fast.output)
    torch.testing.assert_close(fast.output, Chain()(a, h, w), rtol=1e-5, atol=1e-6)
    assert ({k: s.summary() for k, s in ref.stats.items()}
            == {k: s.summary() for k, s in fast.stats.items()})


@pytest.mark.parametrize("name,interval,chunk_tokens", [("spmv", 2**24, 4), ("spmm", 2**22, 4),
                                                         ("spmm", 2**22, 64)])
def test_a_chunked_run_widens_its_stamps_once_clocks_pass_half_the_range(
        caplog, name, interval, chunk_tokens):
    """Clocks that grow round by round past 2**30 switch the rest of the run to int64 stamps
    (pending pieces widened) instead of simulating the kernel twice; still the reference's."""
    from sim_helpers import simulate_both

    from fuseflow.kernels import KERNELS

    with caplog.at_level("INFO", logger="fuseflow.sim.engines"):
        got = simulate_both(name, KERNELS[name].inputs(0.5, seed=1, scale=2), scale=2,
                            arch=Arch(initiation_interval=interval), chunk_tokens=chunk_tokens)
    assert got.cycles > 2**31
    assert "int64 stamps from here on" in caplog.text
    assert "simulating it again" not in caplog.text
    assert fast_stream.TIME_DTYPE is np.int32  # the switch ends with the run

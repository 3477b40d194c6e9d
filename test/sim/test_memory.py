"""The off-chip memory model: bytes per tensor and format, the cycle equations, the Arch option
(off by default), both engines, and an unfused kernel pair paying for its intermediate."""

import warnings

import numpy as np
import pytest
import torch

import fuseflow
from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import run
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.memory import MemoryModel, kernel_cycles, kernel_traffic, tensor_traffic
from test_sim_engine import B, spmv_graph, spmv_inputs

warnings.filterwarnings("ignore")
MODEL = MemoryModel(bandwidth_bytes_per_cycle=4, latency_cycles=10)


@pytest.mark.parametrize("fmt, crd, pos, val", [
    (TensorFormat.dense, 0, 0, 12),      # values only
    (TensorFormat.csr, 5, 4, 5),         # pos has rows + 1 entries
    (TensorFormat.dcsr, 2 + 5, 2 + 3, 5),
    (TensorFormat.coo, 5 + 5, 2, 5),     # compressed_nonunique keeps one position per entry
])
def test_tensor_bytes_follow_the_format(fmt, crd, pos, val):
    t = tensor_traffic(FiberTree.from_dense(B, fmt(B.shape)), "input 0", MODEL)
    assert (t.crd_bytes, t.pos_bytes, t.val_bytes) == (4 * crd, 4 * pos, 4 * val)
    assert t.total == 4 * (crd + pos + val)


def test_cycle_equations_by_hand():
    assert kernel_cycles(MODEL, 100, 40, 20) == (15, 10 + 100 + 10)       # compute-bound
    assert kernel_cycles(MODEL, 5, 400, 0) == (100, 10 + 100)             # bandwidth-bound, no writes
    assert kernel_cycles(MODEL, 7, 0, 0) == (0, 7)                        # nothing moved: no latency
    serial = MemoryModel(bandwidth_bytes_per_cycle=4, latency_cycles=10, overlap=False)
    assert kernel_cycles(serial, 100, 40, 22) == (16, 10 + 10 + 100 + 10 + 6)


def test_memory_is_off_by_default():
    res = run(spmv_graph(), spmv_inputs())
    assert res.memory is None and res.total_cycles == res.cycles
    assert "total_cycles" not in res.summary()


@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_spmv_traffic_and_cost(engine):
    res = run(spmv_graph(), spmv_inputs(), Arch(memory=MODEL), engine=engine)
    plain = run(spmv_graph(), spmv_inputs())
    mem = res.memory
    assert res.cycles == plain.cycles == mem.compute_cycles
    # B: CSR 3x4 (crd 5, pos 4, vals 5); c: compressed vector (crd 2, pos 2, vals 2); x: 3 dense values
    assert mem.bytes_read == 4 * (5 + 4 + 5) + 4 * (2 + 2 + 2) and mem.bytes_written == 4 * 3
    assert mem.transfer_cycles == (80 + 12) // 4
    assert res.total_cycles == 10 + max(res.cycles, 23) + 10
    s = res.summary()
    assert (s["dram_bytes_read"], s["dram_bytes_written"], s["total_cycles"]) == (80, 12, res.total_cycles)


def test_only_the_scanned_levels_and_loaded_values_are_read():
    graph = BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("scan", "scan", ("r",), ("crd", "ref"), {"tensor": 1, "level": 0}),
        Block("write", "level_write", ("crd",), (), {"result": 0, "level": 0}),
        Block("values", "value_write", ("ref",), (), {"result": 0}),
    ], [TensorFormat((4,), (LevelSpec("compressed", 0),))])
    reads, writes = kernel_traffic(graph, spmv_inputs(), [], MODEL)
    assert [(t.tensor, t.crd_bytes, t.pos_bytes, t.val_bytes) for t in reads] == [("input 1", 8, 8, 0)]
    assert writes == ()


class _Chain(torch.nn.Module):
    def forward(self, a, x, w):
        return a @ (x @ w)


def test_unfused_kernels_pay_for_the_materialized_intermediate():
    gen = torch.Generator().manual_seed(0)
    a = (torch.rand(6, 6, generator=gen) < 0.4).float().to_sparse_csr()
    x = (torch.rand(6, 5, generator=gen) < 0.4).float().to_sparse_csr()
    w = torch.rand(5, 3, generator=gen)
    compiled = fuseflow.compile(_Chain(), (a, x, w))
    result = compiled.simulate(a, x, w, arch=Arch(memory=MODEL), engine="fast")
    kernels = [k.result for k in result.run.kernels]
    assert len(kernels) == 2
    intermediate = kernels[0].memory.writes[0]
    assert intermediate.total > 0
    assert any(r.total == intermediate.total for r in kernels[1].memory.reads)
    assert all(k.total_cycles > k.cycles for k in kernels)
    torch.testing.assert_close(result.output, a.to_dense() @ (x.to_dense() @ w))


def test_memory_model_validation():
    with pytest.raises(ValueError, match="bandwidth"):
        MemoryModel(bandwidth_bytes_per_cycle=0)
    with pytest.raises(ValueError, match="latency"):
        MemoryModel(latency_cycles=-1)
    with pytest.raises(ValueError, match="MemoryModel"):
        Arch(memory=64)
    assert hash(Arch(memory=MODEL)) == hash(Arch(memory=MemoryModel(4, 10)))
    np.testing.assert_equal(Arch().memory, None)

"""End-to-end: kernels forked into lanes by ``sam-parallelize`` (the schedule's ``parallel``).

Every single-expression kernel, in each of its legal orders, at each level the pass can
fork: the same outputs as PyTorch, and the reference and fast engines agree on outputs,
cycles and every block's statistics. Lanes take fewer cycles where the level has work
below it; a machine with fewer physical lanes (``Arch.lanes``) runs the fold, which is the
graph of that many lanes; fork and join run vectorized in the fast engine.
"""

import warnings

import pytest
import torch

import fuseflow
from fuseflow.kernels import KERNELS
from fuseflow.sim.engines import fast_blocks

warnings.filterwarnings("ignore")


def simulate_both(compiled, inputs, arch=None):
    """Both engines' results; asserts they agree on outputs, cycles and block statistics."""
    fast = compiled.simulate(*inputs, engine="fast", arch=arch)
    ref = compiled.simulate(*inputs, engine="reference", arch=arch)
    assert fast.cycles == ref.cycles
    for a, b in zip(fast.outputs, ref.outputs):
        assert torch.equal(a, b)
    for k_fast, k_ref in zip(fast.run.kernels, ref.run.kernels):
        assert k_fast.result.blocks == k_ref.result.blocks
    return fast


def expected(kernel, inputs):
    out = kernel.module()(*inputs)
    return out.to_dense() if out.layout != torch.strided else out


@pytest.fixture(scope="module", params=sorted(KERNELS))
def program(request):
    kernel = KERNELS[request.param]
    program = fuseflow.Program(kernel.module(), kernel.inputs(0.5))
    return kernel, program


def schedule(kernel, order, var, factor, index=0):
    return fuseflow.Schedule(formats=dict(kernel.declared), kernels={
        index: {"order": order, "parallel": {var: factor}}})


def test_every_order_and_level_in_lanes_matches_pytorch_on_both_engines(program):
    kernel, program = program
    base = program.compile(fuseflow.Schedule(formats=dict(kernel.declared)))
    inputs = kernel.inputs(0.4, seed=5, empty_rows=True)
    want = expected(kernel, inputs)
    tried = 0
    for info in base.kernels:
        for order in info.legal_orders():
            for var in info.parallel_variables(order):
                for factor in (2, 3, 7):               # 7: more lanes than rows or columns
                    compiled = program.compile(schedule(kernel, order, var, factor, info.index))
                    assert "sam.fork" in compiled.mlir("sam")
                    result = simulate_both(compiled, inputs)
                    assert torch.equal(result.output, want), (info.name, order, var, factor)
                    tried += 1
    assert tried >= 3


@pytest.mark.parametrize("name, factor", [("spmm", 2), ("spmm", 3), ("spgemm", 2), ("rowsum", 2)])
def test_lanes_over_rows_take_fewer_cycles(name, factor):
    kernel = KERNELS[name]
    inputs = kernel.inputs(0.3, seed=6)
    program = fuseflow.Program(kernel.module(), inputs)
    base = program.compile(fuseflow.Schedule(formats=dict(kernel.declared)))
    order = base.kernels[0].schedule.order
    forked = program.compile(schedule(kernel, order, order[0], factor))
    assert forked.simulate(*inputs).cycles < base.simulate(*inputs).cycles


class _Batched(torch.nn.Module):
    """Per-(b, i) sums over k of x * y: dense, three levels, two of them parallelizable."""

    def forward(self, x, y):
        return (x * y).sum(dim=2)


def test_nested_lanes_4x4_match_pytorch_and_multiply_the_speedup():
    x, y = torch.rand(8, 8, 64), torch.rand(8, 8, 64)
    program = fuseflow.Program(_Batched(), (x, y))
    base = program.compile(fuseflow.Schedule(fusion="full"))
    order = base.kernels[0].schedule.order
    cycles = {}
    for parallel in ({}, {order[0]: 4}, {order[1]: 4}, {order[0]: 4, order[1]: 4}):
        compiled = program.compile(fuseflow.Schedule(fusion="full",
                                                     kernels={0: {"parallel": parallel}}))
        result = simulate_both(compiled, (x, y))
        torch.testing.assert_close(result.output, _Batched()(x, y), rtol=1e-5, atol=1e-6)
        cycles[tuple(parallel)] = result.cycles
    one = cycles[()]
    assert one / cycles[(order[0],)] > 3 and one / cycles[(order[1],)] > 3
    assert one / cycles[(order[0], order[1])] > 10


class _SpMM(torch.nn.Module):
    def forward(self, A, B):
        return torch.mm(A, B)


def test_physical_lanes_fold_to_the_graph_of_that_many_lanes():
    generator = torch.Generator().manual_seed(7)
    a = torch.rand(16, 12, generator=generator)
    a[a < 0.6] = 0.0
    inputs = (a.to_sparse_csr(), torch.rand(12, 5, generator=generator))
    program = fuseflow.Program(_SpMM(), inputs)
    order = program.compile().kernels[0].schedule.order

    def lanes(factor):
        return program.compile(fuseflow.Schedule(kernels={0: {"parallel": {order[0]: factor}}}))

    eight = lanes(8)
    for physical in (2, 4):
        folded = simulate_both(eight, inputs, arch=fuseflow.Arch(lanes=physical))
        assert folded.cycles == lanes(physical).simulate(*inputs).cycles
        torch.testing.assert_close(folded.output, inputs[0] @ inputs[1])
    one = simulate_both(eight, inputs, arch=fuseflow.Arch(lanes=1))
    torch.testing.assert_close(one.output, inputs[0] @ inputs[1])
    assert one.cycles >= program.compile().simulate(*inputs).cycles
    assert simulate_both(eight, inputs, fuseflow.Arch(lanes=16)).cycles == \
        eight.simulate(*inputs).cycles


def test_fork_and_join_run_vectorized_in_the_fast_engine(monkeypatch):
    kernel = KERNELS["spgemm"]
    inputs = kernel.inputs(0.5, seed=8, empty_rows=True)
    program = fuseflow.Program(kernel.module(), inputs)
    order = program.compile().kernels[0].schedule.order
    compiled = program.compile(schedule(kernel, order, order[0], 3))
    fallbacks = []
    coroutine = fast_blocks.run_coroutine

    def recording(ctx, *args):
        fallbacks.append(ctx.block.kind)
        return coroutine(ctx, *args)

    monkeypatch.setattr(fast_blocks, "run_coroutine", recording)
    result = compiled.simulate(*inputs, engine="fast")
    kinds = {b.kind for k in result.run.kernels for b in k.result.blocks.values()}
    assert {"fork", "join"} <= kinds
    assert not {"fork", "join"} & set(fallbacks)
    assert torch.equal(result.output, expected(kernel, inputs))

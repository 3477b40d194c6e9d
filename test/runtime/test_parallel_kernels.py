"""Independent kernels simulated at once in forked processes (``simulate(workers=N)``):
the same outputs, cycles and per-kernel statistics as the sequential run, in program order;
kernels that depend on each other wait; errors of a kernel's process reach the caller."""

import os
import warnings

import pytest
import torch

import fuseflow
from fuseflow import runtime
from fuseflow.errors import ArgumentError
from fuseflow.runtime import ExecutionError

warnings.filterwarnings("ignore")


class TwoBranches(torch.nn.Module):
    """Two products of one input, independent of each other, then their sum."""

    def forward(self, a, b, x):
        return torch.relu(a @ x) + b @ x


class Chain(torch.nn.Module):
    def forward(self, a, x):
        return torch.relu(a @ x) * 2.0


def _sparse(m, n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(m, n, generator=g) * (torch.rand(m, n, generator=g) < 0.4)


@pytest.fixture(autouse=True)
def fork_every_kernel(monkeypatch):
    """Small kernels are simulated in the caller; these tests fork every kernel."""
    monkeypatch.setattr(runtime, "FORK_MIN_VALUES", 0)


def _summary(result):
    return [(k.name, k.result.cycles, k.result.summary()) for k in result.run.kernels]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_independent_kernels_run_at_once_with_the_sequential_results(engine):
    a, b, x = _sparse(12, 10, 1), _sparse(12, 10, 2), torch.rand(10, 6)
    compiled = fuseflow.compile(TwoBranches(), (a, b, x),
                                fuseflow.Schedule(formats={"a": "csr", "b": "csr"}))
    sequential = compiled.simulate(a, b, x, engine=engine)
    parallel = compiled.simulate(a, b, x, engine=engine, workers=2)
    assert len(parallel.run.kernels) >= 3
    assert parallel.run.max_concurrent == 2 and sequential.run.max_concurrent == 1
    assert torch.equal(parallel.output, sequential.output)
    torch.testing.assert_close(parallel.output, TwoBranches()(a, b, x))
    assert parallel.cycles == sequential.cycles
    assert _summary(parallel) == _summary(sequential)
    assert {k.process for k in parallel.run.kernels}.isdisjoint(
        {k.process for k in sequential.run.kernels})


def test_a_chain_of_kernels_waits_for_each_input():
    a, x = _sparse(9, 7, 3), torch.rand(7, 5)
    compiled = fuseflow.compile(Chain(), (a, x), fuseflow.Schedule(formats={"a": "csr"}))
    parallel = compiled.simulate(a, x, workers=4)
    assert len(parallel.run.kernels) >= 2 and parallel.run.max_concurrent == 1
    assert _summary(parallel) == _summary(compiled.simulate(a, x))


class KernelFailed(fuseflow.FuseFlowError):
    """Raised by a kernel's simulation in the tests below."""


class Unpicklable(fuseflow.FuseFlowError):
    def __init__(self, message, handle):
        super().__init__(message)
        self.handle = handle


def _fail(kind):
    def run(graph, *args, **kwargs):
        if kind == "error":
            raise KernelFailed(f"kernel {graph.name} failed")
        if kind == "unpicklable":
            raise Unpicklable("cannot cross", handle=lambda: None)
        os._exit(3)
    return run


@pytest.mark.parametrize("kind, raised, message", [
    ("error", KernelFailed, "failed"),
    ("unpicklable", ExecutionError, "cannot cross"),
    ("dies", ExecutionError, "died .exit code 3."),
])
def test_a_kernel_error_in_its_process_reaches_the_caller(kind, raised, message, monkeypatch):
    a, x = _sparse(9, 7, 3), torch.rand(7, 5)
    compiled = fuseflow.compile(Chain(), (a, x), fuseflow.Schedule(formats={"a": "csr"}))
    monkeypatch.setattr(runtime.engines, "run", _fail(kind))   # inherited by the fork
    with pytest.raises(raised, match=message):
        compiled.simulate(a, x, workers=2)


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_workers_must_be_a_positive_int(workers):
    """Checked before anything is simulated."""
    a, x = _sparse(4, 3, 0), torch.rand(3, 2)
    compiled = fuseflow.compile(Chain(), (a, x))
    with pytest.raises(ArgumentError, match="workers"):
        compiled.simulate(a, x, workers=workers)


def test_small_kernels_are_simulated_in_the_caller(monkeypatch):
    monkeypatch.setattr(runtime, "FORK_MIN_VALUES", 10**9)
    a, b, x = _sparse(12, 10, 1), _sparse(12, 10, 2), torch.rand(10, 6)
    compiled = fuseflow.compile(TwoBranches(), (a, b, x))
    parallel = compiled.simulate(a, b, x, workers=2)
    assert {k.process for k in parallel.run.kernels} == {os.getpid()}
    assert _summary(parallel) == _summary(compiled.simulate(a, b, x))

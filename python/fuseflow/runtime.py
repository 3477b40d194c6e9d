"""Executes a lowered module: runs each ``sam.graph`` of ``@main`` on the simulator in order.

Each kernel's real output feeds the next. Host-side ops between graphs are the layout ops of
:mod:`fuseflow.layout` (views of dense tensors and format casts, zero cycles) and the return;
anything else is an error naming the op. Total cycles are the sum over kernels (kernels do
not overlap on the simulated chip), including each kernel's off-chip memory time when the
``Arch`` models it.

With ``workers > 1`` the *simulations* of independent kernels run at once, each in a forked
process (:class:`KernelProcesses`): a kernel is started as soon as its inputs are computed and
fewer than ``workers`` kernels are simulating, and a value is waited for only when something
reads it. Results are those of the sequential run (same outputs, cycles and statistics): only
the host's wall time changes.

With a :class:`~fuseflow.kernel_cache.KernelCache`, a kernel already simulated on the same
inputs (same engine and architecture) is read from it instead (``KernelRun.cached``), and
each kernel simulated is stored in it.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import traceback
from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.errors import FuseFlowError, check_int
from fuseflow.kernel_cache import KernelCache
from fuseflow.layout import LAYOUT_OPS, LayoutError, apply, convert
from fuseflow.sim import engines
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.loader import input_formats, load_graph, tensor_format


class ExecutionError(FuseFlowError, RuntimeError):
    """A lowered module the runtime cannot execute; names the op."""


@dataclass
class KernelRun:
    """One kernel's simulation: its name, block graph and engine result."""

    name: str
    result: object
    graph: object
    process: int = 0
    """The id of the process that simulated the kernel (the caller's own when sequential)."""
    cached: bool = False
    """Whether the result was read from a kernel cache instead of simulated."""


@dataclass
class ModuleRun:
    """Outputs (fibertrees), total cycles and per-kernel runs of one module execution."""

    outputs: list[FiberTree]
    kernels: list[KernelRun] = field(default_factory=list)
    max_concurrent: int = 1
    """The most kernels that were simulating at once (1 unless run with ``workers > 1``)."""

    @property
    def cycles(self) -> int:
        """Total cycles: the sum of the kernels' totals (compute, plus memory if modeled)."""
        return sum(k.result.total_cycles for k in self.kernels)

    @property
    def memory(self) -> dict[str, dict]:
        """Per kernel, the off-chip traffic and time of the memory model (empty when off)."""
        return {k.name: k.result.memory.to_dict() for k in self.kernels
                if k.result.memory is not None}


def run_module(module: "mlir.Module", inputs: list[FiberTree], *, arch=None,
               engine: str = "reference", trace: bool = False, workers: int = 1,
               keep_intermediates: bool = True, cache: KernelCache | None = None) -> ModuleRun:
    """Simulates ``@main`` of a lowered module on fibertree ``inputs``; ``workers`` kernels
    at most are simulated at once (see the module doc).

    ``keep_intermediates=False`` lets each value go once the last op reading it has run: a
    kernel's result that is not a module output is then ``None`` in its
    ``KernelRun.result.outputs`` (statistics and cycles stay), so a run holds the values still
    to be read, not every intermediate (GCN on ogbn-mag: 4 GB of them).

    ``cache``: kernels are read from it when it holds them and stored in it when simulated
    (not with ``trace``)."""
    check_int(workers, "workers", 1)
    fn = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    entry = fn.regions[0].blocks[0]
    if len(inputs) != len(entry.arguments):
        raise ValueError(f"expected {len(entry.arguments)} inputs, got {len(inputs)}")
    env = {}
    for arg, tree in zip(entry.arguments, inputs):
        env[arg] = convert(tree, tensor_format(arg.type))
    run = ModuleRun([])
    pool = KernelProcesses(workers) if workers > 1 else None
    if trace:
        cache = None

    def read(value, op):
        if value not in env:
            raise ExecutionError(f"{op.location}: '{op.name}' reads a value no kernel or host "
                                 "layout op computes")
        if isinstance(env[value], _Output):
            env[value] = env[value].get()
        return env[value]

    ops = [op.operation for op in entry.operations]
    last_read = {}
    for index, op in enumerate(ops):
        for value in op.operands:
            last_read[value] = index
    made_by: dict = {}   # value -> (kernel result, output index), kernels run in this process

    def let_go(index: int, op) -> None:
        for value in op.operands:
            if last_read.get(value) == index and value in env:
                del env[value]
                if value in made_by:
                    result, at = made_by.pop(value)
                    result.outputs[at] = None

    try:
        for index, op in enumerate(ops):
            if op.name == "sam.graph":
                graph = load_graph(op)
                bound = [convert(read(v, op), fmt)
                         for v, fmt in zip(op.operands, input_formats(op))]
                key = cache.key(graph, bound, engine=engine, arch=arch) if cache else None
                result = cache.get(key) if cache else None
                cached = result is not None
                if pool is None or cached:
                    if not cached:
                        result = engines.run(graph, bound, arch=arch, engine=engine, trace=trace)
                        if cache:
                            cache.put(key, result)
                    run.kernels.append(KernelRun(graph.name, result, graph, os.getpid(), cached))
                    for at, (value, tree) in enumerate(zip(op.results, result.outputs)):
                        env[value] = tree
                        made_by[value] = (result, at)
                else:
                    kernel = pool.start(graph, bound, arch=arch, engine=engine, trace=trace,
                                        store=(cache, key) if cache else None)
                    run.kernels.append(kernel)
                    for index, value in enumerate(op.results):
                        env[value] = _Output(pool, kernel, index)
            elif op.name in LAYOUT_OPS:
                try:
                    env[op.results[0]] = apply(op, read(list(op.operands)[0], op))
                except LayoutError as err:
                    raise ExecutionError(str(err)) from None
            elif op.name == "func.return":
                run.outputs = [read(v, op) for v in op.operands]
            elif op.name == "tensor.empty":
                pass                       # the init of a host linalg.transpose; never read
            elif op.name == "arith.constant":
                if any(len(list(r.uses)) for r in op.results):
                    raise ExecutionError(f"{op.location}: host op '{op.name}' feeds a kernel; "
                                         "constants must be folded into kernels")
            else:
                raise ExecutionError(f"{op.location}: op '{op.name}' outside a sam.graph "
                                     "cannot be executed; lower the module with "
                                     "fuseflow-to-dataflow first")
            if not keep_intermediates and op.name != "func.return":
                let_go(index, op)
        if pool is not None:
            pool.finish()
            run.max_concurrent = pool.max_running
    finally:
        if pool is not None:
            pool.stop()
    return run


FORK_MIN_VALUES = 100_000
"""A kernel whose inputs hold fewer stored values than this is simulated in the caller's
process even with ``workers > 1``: forking costs more than such a kernel's simulation."""


class KernelProcesses:
    """Simulates kernels in forked processes, ``workers`` at most at once (kernels on less
    than :data:`FORK_MIN_VALUES` input values in the caller, at once).

    A forked child inherits the kernel's block graph and bound inputs (nothing is pickled on
    the way in) and sends back its :class:`~fuseflow.sim.engines.KernelResult` through a pipe;
    an error the child raises is raised again by the caller (a child that dies, for example
    killed for memory, is an :class:`ExecutionError` naming the kernel)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.running: list[KernelRun] = []
        self.handles: dict[int, tuple] = {}
        self.max_running = 0
        self._context = multiprocessing.get_context("fork")

    def start(self, graph, bound, store: tuple | None = None, **options) -> KernelRun:
        """Starts simulating ``graph`` on ``bound`` (waits first while ``workers`` run);
        the returned run's ``result`` is filled by :meth:`wait`. ``store``: ``(cache, key)``
        the result is stored under (by the process that simulates it)."""
        if sum(tree.vals.size for tree in bound) < FORK_MIN_VALUES:
            result = engines.run(graph, bound, **options)
            if store is not None:
                store[0].put(store[1], result)
            return KernelRun(graph.name, result, graph, os.getpid())
        while len(self.running) >= self.workers:
            self.wait(self.running[0])
        receive, send = self._context.Pipe(duplex=False)
        child = self._context.Process(target=_simulate_in_child,
                                      args=(send, graph, bound, options, store), daemon=True)
        child.start()
        send.close()
        kernel = KernelRun(graph.name, None, graph, child.pid)
        self.handles[id(kernel)] = (child, receive)
        self.running.append(kernel)
        self.max_running = max(self.max_running, len(self.running))
        return kernel

    def wait(self, kernel: KernelRun) -> KernelRun:
        """Waits for ``kernel``'s simulation and fills its result."""
        if kernel.result is not None:
            return kernel
        child, receive = self.handles.pop(id(kernel))
        try:
            status, payload = receive.recv()
        except EOFError:
            child.join()
            raise ExecutionError(f"the process simulating kernel '{kernel.name}' died "
                                 f"(exit code {child.exitcode}); run it with workers=1 to "
                                 "see why") from None
        finally:
            receive.close()
        child.join()
        self.running.remove(kernel)
        if status == "error":
            raise payload
        if status == "error text":
            raise ExecutionError(f"simulating kernel '{kernel.name}' failed:\n{payload}")
        kernel.result = payload
        return kernel

    def finish(self) -> None:
        """Waits for every started kernel."""
        while self.running:
            self.wait(self.running[0])

    def stop(self) -> None:
        """Kills the kernels still simulating (after an error)."""
        for child, receive in self.handles.values():
            if child.is_alive():
                child.kill()
            child.join()
            receive.close()
        self.handles.clear()
        self.running.clear()


@dataclass
class _Output:
    """A result of a kernel simulating in another process."""

    pool: KernelProcesses
    kernel: KernelRun
    index: int

    def get(self) -> FiberTree:
        return self.pool.wait(self.kernel).result.outputs[self.index]


def _simulate_in_child(send, graph, bound, options, store=None) -> None:
    """The body of a kernel's process: simulate, store the result in ``store``'s cache if
    given, and send it (or the error)."""
    try:
        try:
            result = engines.run(graph, bound, **options)
            if store is not None:
                store[0].put(store[1], result)
            message = ("ok", result)
        except Exception as err:  # noqa: BLE001 - sent to the caller, which raises it
            message = ("error", err)
            try:
                pickle.loads(pickle.dumps(err))
            except Exception:  # noqa: BLE001 - an error that cannot cross processes
                message = ("error text", traceback.format_exc())
        send.send(message)
    finally:
        send.close()
        os._exit(0)

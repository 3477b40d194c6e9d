"""Executes a lowered module: runs each ``sam.graph`` of ``@main`` on the simulator in order.

Each kernel's real output feeds the next. Host-side ops between graphs are the layout ops of
:mod:`fuseflow.layout` (views of dense tensors and format casts, zero cycles) and the return;
anything else is an error naming the op. Total cycles are the sum over kernels (kernels do
not overlap), including each kernel's off-chip memory time when the ``Arch`` models it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.errors import FuseFlowError
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


@dataclass
class ModuleRun:
    """Outputs (fibertrees), total cycles and per-kernel runs of one module execution."""

    outputs: list[FiberTree]
    kernels: list[KernelRun] = field(default_factory=list)

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
               engine: str = "reference", trace: bool = False) -> ModuleRun:
    """Simulates ``@main`` of a lowered module on fibertree ``inputs``."""
    fn = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    entry = fn.regions[0].blocks[0]
    if len(inputs) != len(entry.arguments):
        raise ValueError(f"expected {len(entry.arguments)} inputs, got {len(inputs)}")
    env = {}
    for arg, tree in zip(entry.arguments, inputs):
        env[arg] = convert(tree, tensor_format(arg.type))
    run = ModuleRun([])

    def read(value, op):
        if value not in env:
            raise ExecutionError(f"{op.location}: '{op.name}' reads a value no kernel or host "
                                 "layout op computes")
        return env[value]

    for op in entry.operations:
        op = op.operation
        if op.name == "sam.graph":
            graph = load_graph(op)
            bound = [convert(read(v, op), fmt) for v, fmt in zip(op.operands, input_formats(op))]
            result = engines.run(graph, bound, arch=arch, engine=engine, trace=trace)
            run.kernels.append(KernelRun(graph.name, result, graph))
            for value, tree in zip(op.results, result.outputs):
                env[value] = tree
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
            raise ExecutionError(f"{op.location}: op '{op.name}' outside a sam.graph cannot be "
                                "executed; lower the module with fuseflow-to-dataflow first")
    return run

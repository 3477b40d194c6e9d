"""Executes a lowered module: runs each ``sam.graph`` of ``@main`` on the simulator in order.

Each kernel's real output feeds the next. Host-side ops between graphs are limited to
re-typing (``tensor.cast``) and returning; anything else is an error naming the op. Total
cycles are the sum over kernels (kernels do not overlap).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.sim import engines
from fuseflow.sim.formats import FiberTree
from fuseflow.sim.loader import input_formats, load_graph, tensor_format


class ExecutionError(RuntimeError):
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
        return sum(k.result.cycles for k in self.kernels)


def _convert(tree: FiberTree, fmt) -> FiberTree:
    if tree.fmt == fmt:
        return tree
    return FiberTree.from_dense(tree.to_dense(), fmt)


def run_module(module: "mlir.Module", inputs: list[FiberTree], *, arch=None,
               engine: str = "reference", trace: bool = False) -> ModuleRun:
    """Simulates ``@main`` of a lowered module on fibertree ``inputs``."""
    fn = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    entry = fn.regions[0].blocks[0]
    if len(inputs) != len(entry.arguments):
        raise ValueError(f"expected {len(entry.arguments)} inputs, got {len(inputs)}")
    env = {}
    for arg, tree in zip(entry.arguments, inputs):
        env[arg] = _convert(tree, tensor_format(arg.type))
    run = ModuleRun([])
    for op in entry.operations:
        op = op.operation
        if op.name == "sam.graph":
            graph = load_graph(op)
            bound = [_convert(env[v], fmt) for v, fmt in zip(op.operands, input_formats(op))]
            result = engines.run(graph, bound, arch=arch, engine=engine, trace=trace)
            run.kernels.append(KernelRun(graph.name, result, graph))
            for value, tree in zip(op.results, result.outputs):
                env[value] = tree
        elif op.name == "tensor.cast":
            source = list(op.operands)[0]
            env[op.results[0]] = _convert(env[source], tensor_format(op.results[0].type))
        elif op.name == "func.return":
            run.outputs = [env[v] for v in op.operands]
        elif op.name == "arith.constant" or op.name == "tensor.empty":
            if any(len(list(r.uses)) for r in op.results):
                raise ExecutionError(f"{op.location}: host op '{op.name}' feeds a kernel; "
                                    "constants must be folded into kernels")
        else:
            raise ExecutionError(f"{op.location}: op '{op.name}' outside a sam.graph cannot be "
                                "executed; lower the module with fuseflow-to-dataflow first")
    return run

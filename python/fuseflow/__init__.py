"""FuseFlow: cross-expression fusion of sparse ML models onto streaming dataflow hardware.

>>> compiled = fuseflow.compile(model, example_inputs, schedule=fuseflow.Schedule())
>>> result = compiled.simulate(*inputs, arch=fuseflow.Arch())
>>> result.outputs, result.cycles, result.stats

``fuseflow.Program(model, example_inputs)`` imports a model once; its ``.compile(schedule)``
compiles it into each schedule without re-importing. ``fuseflow.explore(model, inputs, plan)``
searches fusion configurations with the cost model and simulates the best ones.

The public names are imported lazily so that tools such as ``fuseflow-opt`` load only
what they use.
"""

import importlib
from importlib import metadata

try:
    __version__ = metadata.version("fuseflow")
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

_EXPORTS = {
    "compile": "fuseflow.compiler",
    "CompiledModel": "fuseflow.compiler",
    "Program": "fuseflow.compiler",
    "Schedule": "fuseflow.compiler",
    "DenseVariantWarning": "fuseflow.compiler",
    "SimulationResult": "fuseflow.compiler",
    "Arch": "fuseflow.sim.arch",
    "MemoryModel": "fuseflow.sim.memory",
    "KernelCache": "fuseflow.kernel_cache",
    "FuseFlowError": "fuseflow.errors",
    "explore": "fuseflow.explore",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name):
    if name == "explore":           # the package, callable as fuseflow.explore(model, ...)
        return importlib.import_module("fuseflow.explore")
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'fuseflow' has no attribute '{name}'")


def __dir__():
    """Completion lists the lazily imported public names too."""
    return sorted(set(globals()) | set(_EXPORTS))

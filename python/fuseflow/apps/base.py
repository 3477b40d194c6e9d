"""Application descriptions: how to build each model and how its fusion configurations group
its operations into kernels.

Representation of a fusion configuration
----------------------------------------
A model's forward is a sequence of **stages**: the kernels of the unfused schedule, in program
order. A :class:`Stage` names

* ``module``: the qualified submodule name (as in ``model.named_modules()``; ``""`` is the root
  module) whose ``forward`` executes the stage. ``torch.export`` records it per node in
  ``node.meta["nn_module_stack"]`` (innermost entry);
* ``ops``: the compute ATen ops of the stage in program order, by op packet name without overload
  (``"matmul"``, ``"add"``, ``"relu"``, ``"softmax"``, ``"masked_fill"``, ...) as they appear in the
  pre-decomposition ``torch.export`` graph. Pure data-movement ops (:data:`VIEW_OPS`: views,
  transposes, splits) belong to no stage; they travel with the values they reshape.

A fusion configuration (``"unfused"``, ``"partial"``, ``"full"``) is a tuple of **kernels**, each a
tuple of stage names; the kernels of a configuration partition the stages and, concatenated, list
them in program order (so each kernel is a contiguous slice of the forward).

:func:`trace_ops` exports a model and lists its compute nodes with their module and op;
:meth:`FusionPlan.assign` maps every compute node to its stage (failing loudly if the model and
the plan disagree), which is how a consumer places the importer's linalg ops into kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from fuseflow.errors import check_choice
from fuseflow.tracing import VIEW_OPS, TracedOp, program_ops

PRESETS = ("tiny", "small", "published")
"""Size presets: ``tiny`` for tests (runs in a second or two), ``small`` for quick experiments,
``published`` for the sizes of the published evaluation."""

WEIGHT_FORMAT = "csr"
"""The format pruned weights are declared with: ``x @ W`` walks ``W``'s rows (the reduction
index) outermost and its compressed columns inside, so only the kept weights stream."""

FUSION_LEVELS = ("unfused", "partial", "full")
"""The fusion configurations every application defines."""

__all__ = [
    "FUSION_LEVELS", "PRESETS", "VIEW_OPS", "Application", "FusionPlan", "Stage", "TracedOp",
    "program_ops", "prune_", "trace_ops",
]


@dataclass(frozen=True)
class Stage:
    """One kernel of the unfused schedule: a contiguous run of compute ops of the forward."""

    name: str
    """Unique name, ``<module>.<role>`` (e.g. ``layer1.aggregate``)."""
    module: str
    """Qualified name of the submodule executing the ops (``""`` = the root module)."""
    ops: tuple[str, ...]
    """Compute ATen ops (packet names, no overload) in program order."""


@dataclass(frozen=True)
class FusionPlan:
    """The stages of one built model and its fusion configurations (see the module docstring)."""

    stages: tuple[Stage, ...]
    """Unfused kernels in program order."""
    fusion_groups: Mapping[str, tuple[tuple[str, ...], ...]]
    """Configuration name -> kernels -> stage names."""
    sparse_parameters: Mapping[str, float] = field(default_factory=dict)
    """Qualified parameter name -> fraction of zeros, for the pruned weights."""
    sparse_formats: Mapping[str, str] = field(default_factory=dict)
    """Input or parameter name -> the sparse format it is declared with (``Schedule.formats``)
    in the published workload: the pruned weights, and inputs passed dense that hold a sparse
    pattern (the BigBird mask). :meth:`schedule` declares them unless asked for the dense
    variant."""

    def __post_init__(self) -> None:
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError("stage names must be unique")
        for level, kernels in self.fusion_groups.items():
            flat = [name for kernel in kernels for name in kernel]
            if flat != names or any(not kernel for kernel in kernels):
                raise ValueError(
                    f"fusion configuration {level!r} must partition the stages into non-empty "
                    "kernels in program order")

    def kernels(self, level: str) -> tuple[tuple[Stage, ...], ...]:
        """The kernels of configuration ``level`` as stages; the error lists valid levels."""
        if level not in self.fusion_groups:
            raise ValueError(
                f"unknown fusion configuration {level!r}; valid: {', '.join(self.fusion_groups)}")
        by_name = {s.name: s for s in self.stages}
        return tuple(tuple(by_name[name] for name in kernel)
                     for kernel in self.fusion_groups[level])

    def formats(self, dense_weights: bool = False, extra: Mapping[str, str] | None = None
                ) -> dict[str, str]:
        """The declared formats of the published workload (:attr:`sparse_formats`; with
        ``dense_weights``, the variant streaming every pruned zero, the same names declared
        ``'dense'``, which says so explicitly), then ``extra``'s."""
        published = (dict.fromkeys(self.sparse_formats, "dense") if dense_weights
                     else self.sparse_formats)
        return {**published, **(extra or {})}

    def schedule(self, level: str, dense_weights: bool = False,
                 formats: Mapping[str, str] | None = None):
        """The :class:`fuseflow.Schedule` of configuration ``level`` with :meth:`formats`."""
        from fuseflow.compiler import Schedule

        self.kernels(level)
        return Schedule(fusion=level, formats=self.formats(dense_weights, formats))

    def assign(self, trace: list[TracedOp]) -> dict[str, str]:
        """Maps each traced compute node to its stage name, matching ops in program order.

        Raises ``ValueError`` naming the first node where the trace leaves the plan.
        """
        expected = [(stage, op) for stage in self.stages for op in stage.ops]
        if len(trace) != len(expected):
            raise ValueError(f"model has {len(trace)} compute ops, the plan {len(expected)}: "
                             f"{[t.op for t in trace]} vs {[op for _, op in expected]}")
        result = {}
        for traced, (stage, op) in zip(trace, expected):
            if (traced.module, traced.op) != (stage.module, op):
                raise ValueError(
                    f"node {traced.node} is {traced.op!r} in module {traced.module!r}; stage "
                    f"{stage.name} expects {op!r} in module {stage.module!r}")
            result[traced.node] = stage.name
        return result


def trace_ops(model, example_inputs) -> list[TracedOp]:
    """The compute nodes of ``torch.export.export(model, example_inputs)`` in program order."""
    import torch

    return program_ops(torch.export.export(model, tuple(example_inputs)))


@dataclass(frozen=True)
class Application:
    """One evaluated model: how to build it at a preset size and its fusion configurations."""

    name: str
    """Registry name (``sae``, ``gcn``, ``graphsage``, ``gpt3``)."""
    title: str
    """Human-readable name."""
    equations: str
    """The computed function, in the notation of ``docs/applications.md``."""
    inputs: tuple[str, ...]
    """Forward argument names, in order."""
    sparse_inputs: tuple[str, ...]
    """Forward arguments passed as ``torch.sparse_csr`` tensors when their data is sparse
    (GNN features are dense for the OGB data sets)."""
    sparsifiable_inputs: tuple[str, ...]
    """Forward arguments passed dense although their content is a sparse pattern (the BigBird
    mask): torch-mlir cannot import them sparse, a compiler may declare them sparse."""
    datasets: tuple[str, ...]
    """Valid ``dataset`` values for :meth:`build`."""
    default_datasets: Mapping[str, str]
    """Preset -> data set used when :meth:`build` gets none."""
    builder: Callable
    """``builder(preset, dataset, seed) -> (model, example_inputs)``; see :meth:`build`."""
    planner: Callable
    """``planner(model) -> FusionPlan``; see :meth:`plan`."""
    repeated: str = ""
    """The unit the model stacks (GPT-3: ``decoder``), or ``""``; the builder then takes
    ``layers=n`` and :attr:`layer_counts` gives each preset's count."""
    layer_counts: Mapping[str, int] = field(default_factory=dict)
    """Preset -> number of stacked units (only when :attr:`repeated`)."""

    def provenance(self, dataset) -> str:
        """What ``dataset`` is made of: a :data:`fuseflow.data.PROVENANCES` entry, or
        ``graph file`` for a loaded :class:`fuseflow.data.GraphData`."""
        from fuseflow.apps.graph_inputs import GRAPH_INPUTS
        from fuseflow.data import GraphData, dataset_spec

        if isinstance(dataset, GraphData):
            return "graph file"
        if self.inputs == GRAPH_INPUTS:
            return dataset_spec(dataset).provenance
        return "synthetic"

    def dataset_label(self, dataset) -> str:
        """``dataset``'s name with its provenance, e.g. ``cora_ml (synthetic)``."""
        name = dataset.name if hasattr(dataset, "name") else dataset
        return f"{name} ({self.provenance(dataset)})"

    def build(self, preset: str = "tiny", dataset: str | None = None, seed: int = 0,
              layers: int | None = None):
        """Returns ``(model, example_inputs)`` for ``preset`` on ``dataset``.

        The model is a ``torch.nn.Module`` in eval mode; ``example_inputs`` is a tuple ordered
        as :attr:`inputs`, with sparse data (adjacency, sparse features, sparse batches) as
        ``torch.sparse_csr`` tensors. Everything is generated from ``seed``. For a graph
        application (inputs ``graph_inputs.GRAPH_INPUTS``) ``dataset`` may also be a loaded
        :class:`fuseflow.data.GraphData` (e.g. a graph file, :func:`fuseflow.data.load_graph`).
        ``layers`` overrides the preset's count of stacked units (:attr:`repeated` models).
        """
        from fuseflow.apps.graph_inputs import GRAPH_INPUTS
        from fuseflow.data.graph import GraphData

        preset = check_choice(preset, PRESETS, "preset")
        dataset = self.default_datasets[preset] if dataset is None else dataset
        if not isinstance(dataset, GraphData):
            dataset = check_choice(dataset, self.datasets, f"{self.name} data set")
        elif self.inputs != GRAPH_INPUTS:
            raise ValueError(f"{self.name} does not run on a graph: its inputs are "
                             f"{', '.join(self.inputs)}")
        if layers is None:
            model, inputs = self.builder(preset, dataset, seed)
        elif not self.repeated:
            raise ValueError(f"{self.name} stacks no identical units; 'layers' does not apply")
        elif not (isinstance(layers, int) and layers >= 1):
            raise ValueError(f"layers must be a positive integer, got {layers!r}")
        else:
            model, inputs = self.builder(preset, dataset, seed, layers=layers)
        return model.eval(), tuple(inputs)

    def plan(self, model) -> FusionPlan:
        """The stages, fusion configurations and pruned weights of a model :meth:`build` made."""
        return self.planner(model)




PERMUTE_UP_TO = 1 << 22
"""Weights with at most this many entries are pruned through one permutation of their indices;
larger ones a chunk at a time (:func:`prune_`)."""

_PRUNE_CHUNK = 1 << 20


def prune_(weight, sparsity: float, generator) -> None:
    """Zeroes exactly ``round(sparsity * numel)`` entries of ``weight`` chosen by ``generator``,
    every such set of entries equally likely.

    Up to :data:`PERMUTE_UP_TO` entries: the first ones of a permutation of all indices. Larger
    weights (SAE's: 5.4e8 entries at NIH-CXR, where one permutation took minutes and 4 GB):
    the count is split over chunks of 2^20 entries by a multivariate hypergeometric draw (how
    many of the chosen entries fall in each chunk), then each chunk's entries are chosen
    within it, seeded from ``generator``: the same distribution, in memory of one chunk."""
    import numpy as np
    import torch

    n = weight.numel()
    count = int(round(sparsity * n))
    with torch.no_grad():
        if n <= PERMUTE_UP_TO:
            drop = torch.randperm(n, generator=generator)[:count]
            weight.view(-1)[drop] = 0.0
            return
        rng = np.random.default_rng(int(torch.randint(1 << 62, (1,), generator=generator)))
        flat = weight.detach().view(-1).numpy()   # the weight's own storage
        starts = np.arange(0, n, _PRUNE_CHUNK)
        sizes = np.minimum(_PRUNE_CHUNK, n - starts)
        counts = rng.multivariate_hypergeometric(sizes, count, method="marginals")
        for start, size, k in zip(starts.tolist(), sizes.tolist(), counts.tolist()):
            chunk = flat[start:start + size]
            order = rng.permutation(size)
            if 2 * k <= size:
                chunk[order[:k]] = 0.0
            else:  # the same entries zeroed: the few kept ones saved, the chunk cleared, put back
                keep = order[k:]
                kept = chunk[keep]
                chunk[:] = 0.0
                chunk[keep] = kept

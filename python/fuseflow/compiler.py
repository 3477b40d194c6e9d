"""The public compile API: ``fuseflow.Program`` (a model imported once) or ``fuseflow.compile``
→ :class:`CompiledModel` → simulation results."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import torch

from fuseflow import mlir
from fuseflow.errors import ArgumentError
from fuseflow.frontend import FrontendError, declare_formats, import_model, tag_groups
from fuseflow.grouping import assign_kernels
from fuseflow.passes.base import ChoiceEnum
from fuseflow.passes.partition import PartitionMode
from fuseflow.passes.schedule import SchedulePass
from fuseflow.pipeline import Pipeline
from fuseflow.runtime import ModuleRun, run_module
from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import ENGINES
from fuseflow.sim.formats import FiberTree

log = logging.getLogger(__name__)


class Level(ChoiceEnum):
    """IR levels a compiled model keeps."""

    LINALG = "linalg"
    KERNELS = "kernels"
    SAM = "sam"


BUILTIN_FUSION = ("unfused", "full")


def _is_fusion(value) -> bool:
    if isinstance(value, str):
        return True
    if not isinstance(value, (tuple, list)):
        return False
    return all(isinstance(g, str) or (isinstance(g, (tuple, list))
                                      and all(isinstance(n, str) for n in g)) for g in value)


@dataclass(frozen=True)
class Schedule:
    """How to compile a model: fusion granularity, dataflow order, declared input formats.

    ``fusion``: the name of a configuration of the application plan passed to :func:`compile`
    ('unfused', 'partial', 'full': the plan's definitions take precedence), without a plan
    'unfused' (one kernel per linalg op) or 'full' (one kernel), or explicit groups against
    the PyTorch model: a sequence of kernels, each a sequence of stage names, submodule names
    (``'layer1'``) or FX node names (see :mod:`fuseflow.grouping`).
    ``order``: dataflow order as loop names (``('d0', 'd2', 'd1')``); default: the order rule.
    ``formats``: input name → format ('csr', 'csc', 'coo', 'dcsr', 'dense', 'bsr:<b>',
    'bsr:<rows>x<cols>', 'sparse_vector'); declares a dense model input or parameter sparse
    (a ``torch.sparse_bsr`` example input is declared with its block shape by default).
    """

    fusion: object = "unfused"
    order: tuple[str, ...] = ()
    formats: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        order = self.order
        if order is None:
            order = ()
        elif isinstance(order, str):
            order = tuple(v.strip() for v in order.split(",") if v.strip())
        elif not isinstance(order, (tuple, list)) or not all(isinstance(v, str) for v in order):
            raise ArgumentError(f"Schedule.order must be loop names like ('d0', 'd2', 'd1') or "
                                f"'d0,d2,d1', got {self.order!r}")
        object.__setattr__(self, "order", tuple(order))
        formats = {} if self.formats is None else self.formats
        if not isinstance(formats, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in formats.items()):
            raise ArgumentError("Schedule.formats must map input names to format names, e.g. "
                                f"{{'A': 'csr'}}, got {self.formats!r}")
        object.__setattr__(self, "formats", dict(formats))
        if not _is_fusion(self.fusion):
            raise ArgumentError("Schedule.fusion must be 'unfused', 'full', the name of a plan's "
                                "configuration, or groups of names such as (('layer1', 'relu'), "
                                f"('layer2',)), got {self.fusion!r}")

    @property
    def grouped(self) -> bool:
        """Whether kernels come from fusion groups rather than a built-in mode."""
        return not (isinstance(self.fusion, str) and self.fusion in BUILTIN_FUSION)

    def grouped_by(self, plan) -> bool:
        """Whether kernels come from fusion groups when compiling with ``plan`` (or None)."""
        return self.grouped or (plan is not None and isinstance(self.fusion, str)
                                and self.fusion in plan.fusion_groups)

    def kernel_pipeline(self, grouped: bool | None = None) -> str:
        """The pipeline from imported linalg to fuse.kernel regions (``grouped``: by fusion
        groups; default :attr:`grouped`)."""
        if self.grouped if grouped is None else grouped:
            mode = PartitionMode.GROUPS
        else:
            mode = PartitionMode.parse(self.fusion, "Schedule.fusion")
        schedule = SchedulePass(order=tuple(self.order)).pipeline_text()
        return f"builtin.module(fuseflow-normalize,fuseflow-partition{{mode={mode.value}}}," \
               f"fuseflow-hoist-views,fuseflow-verify-kernels,{schedule}," \
               "fuseflow-verify-schedule)"

    def dataflow_pipeline(self) -> str:
        """The pipeline from scheduled fuse.kernel regions to sam.graph dataflow graphs."""
        return "builtin.module(fuseflow-kernels-to-dataflow)"


@dataclass
class SimulationResult:
    """Outputs as torch tensors, total cycles (sum over kernels) and per-kernel statistics."""

    outputs: list[torch.Tensor]
    cycles: int
    run: ModuleRun

    @property
    def stats(self) -> dict:
        """Per-kernel statistics: cycles and per-block stats."""
        return {k.name: k.result for k in self.run.kernels}

    @property
    def output(self) -> torch.Tensor:
        """The single output (for one-output models)."""
        if len(self.outputs) != 1:
            raise ValueError(f"model has {len(self.outputs)} outputs; use .outputs")
        return self.outputs[0]


class CompiledModel:
    """A model compiled to SAM dataflow graphs; keeps the IR of every level."""

    def __init__(self, levels: dict[str, str], module: "mlir.Module", input_names: list[str],
                 bound_params: list[torch.Tensor], schedule: Schedule):
        self._levels = levels
        self.module = module
        self.input_names = input_names
        self.params = bound_params
        self.schedule = schedule

    def mlir(self, level: str = "sam") -> str:
        """The IR at ``level`` ('linalg', 'kernels', 'sam')."""
        return self._levels[Level.parse(level, "IR level").value]

    def simulate(self, *inputs, arch: Arch | None = None, engine: str = "fast",
                 trace: bool = False) -> SimulationResult:
        """Simulates the compiled graphs on ``inputs`` (torch tensors, dense or sparse).

        ``engine``: ``fast`` (default) or ``reference``, the cycle-by-cycle specification
        (same outputs, cycles and statistics, about 100x slower)."""
        arch = Arch.of(arch)
        if engine not in ENGINES:
            raise ArgumentError(f"unknown engine {engine!r}; valid engines: {', '.join(ENGINES)}")
        tensors = list(inputs) + list(self.params)
        if len(tensors) != len(self.input_names):
            raise ArgumentError(f"expected {len(self.input_names) - len(self.params)} inputs, "
                                f"got {len(inputs)}")
        trees = [FiberTree.from_torch(t.detach() if isinstance(t, torch.Tensor) else torch.as_tensor(t))
                 for t in tensors]
        run = run_module(self.module, trees, arch=arch, engine=engine, trace=trace)
        outputs = [torch.from_numpy(t.to_dense()) for t in run.outputs]
        return SimulationResult(outputs, run.cycles, run)

    def view(self, path=None, result: SimulationResult | None = None, *,
             format: str | None = None, open=(), title: str = "model"):
        """The dataflow-graph view (:mod:`fuseflow.viz`), with ``result``'s statistics: written
        to ``path`` (HTML, or DOT) and the path returned, or, without a path, for Jupyter."""
        from fuseflow import viz

        view = viz.view_of(self, result, title, open)
        return viz.InlineView(view) if path is None else viz.save_view(view, path, format)


class Program:
    """A model imported once, compiled into as many schedules as wanted.

    ``model``: a ``torch.nn.Module`` called on ``example_inputs`` (exported with
    ``torch.export`` and imported with torch-mlir into this program's MLIR context once), or
    MLIR text (parsed once). ``plan`` (a :class:`fuseflow.apps.base.FusionPlan`) names the
    stages and fusion configurations that a schedule's ``fusion`` may refer to.

    >>> program = fuseflow.Program(model, inputs, plan=app.plan(model))
    >>> unfused, full = (program.compile(fuseflow.Schedule(fusion=f)) for f in ("unfused", "full"))

    :meth:`compile` clones the imported module and runs the pipelines on the clone: compiles
    never change the import or each other. The imported linalg ops carry ``fuseflow.node``
    and ``fuseflow.module`` (their FX node and module, :mod:`fuseflow.frontend`).
    """

    def __init__(self, model, example_inputs=(), plan=None):
        _check_model(model, example_inputs)
        self.context = mlir.new_context()
        self.plan = plan
        self.exported = None
        """The exported (pre-decomposition) program fusion groups name; None for MLIR text."""
        if isinstance(model, str):
            with self.context:
                self.module = mlir.Module.parse(model)
            self.param_values, self.formats = [], {}
            fn = _main(self.module)
            self.input_names = [f"arg{i}" for i in range(len(fn.regions[0].blocks[0].arguments))]
        else:
            imported = import_model(model, example_inputs, self.context)
            self.module, self.exported = imported.module, imported.program
            self.input_names, self.param_values = imported.input_names, imported.param_values
            self.formats = imported.formats
            _main(self.module)
        log.debug("imported %s", type(model).__name__)

    def mlir(self) -> str:
        """The imported module (linalg-on-tensors) as text."""
        return str(self.module)

    def clone(self) -> "mlir.Module":
        """A copy of the imported module, in this program's context."""
        with self.context, self.module.operation.location:
            copy = mlir.Module.create()
            for attr in self.module.operation.attributes:
                copy.operation.attributes[attr.name] = attr.attr
            with mlir.InsertionPoint(copy.body):
                for op in self.module.body.operations:
                    op.operation.clone()
        return copy

    def compile(self, schedule: Schedule | None = None) -> CompiledModel:
        """Compiles a copy of the imported module with ``schedule`` (default ``Schedule()``)."""
        schedule = _check_schedule(schedule)
        grouped = schedule.grouped_by(self.plan if self.exported is not None else None)
        if self.exported is None and schedule.grouped:
            raise ValueError("fusion groups refer to a PyTorch model; for MLIR input put "
                             "'fuseflow.group' attributes on the ops and use "
                             "fuseflow-partition{mode=groups}")
        kernel_of = assign_kernels(self.exported, schedule.fusion, self.plan) if grouped \
            else None
        module = self.clone()
        with self.context:
            formats = {**self.formats, **schedule.formats}
            if formats:
                declare_formats(module, self.input_names, formats)
            if kernel_of is not None:
                tag_groups(module, kernel_of)
            levels = {"linalg": str(module)}
            Pipeline.parse(schedule.kernel_pipeline(grouped)).run(module)
            levels["kernels"] = str(module)
            Pipeline.parse(schedule.dataflow_pipeline()).run(module)
            levels["sam"] = str(module)
        log.debug("compiled with %s", schedule)
        return CompiledModel(levels, module, list(self.input_names), self.param_values, schedule)


def compile(model, example_inputs=(), schedule: Schedule | None = None,
            plan=None) -> CompiledModel:
    """Compiles a ``torch.nn.Module`` (with example inputs) or MLIR text to SAM graphs:
    ``Program(model, example_inputs, plan).compile(schedule)`` (import once with
    :class:`Program` to compile one model into several schedules).

    ``plan`` (a :class:`fuseflow.apps.base.FusionPlan`) names the stages and fusion
    configurations that ``schedule.fusion`` may refer to.
    """
    _check_model(model, example_inputs)
    schedule = _check_schedule(schedule)
    return Program(model, example_inputs, plan).compile(schedule)


def _main(module: "mlir.Module"):
    fn = next((op for op in module.body.operations if op.operation.name == "func.func"), None)
    if fn is None:
        raise FrontendError("the MLIR module has no func.func to compile")
    return fn


def _check_model(model, example_inputs) -> None:
    """Checks the model and example inputs of :func:`compile` and :class:`Program`."""
    if not isinstance(model, (torch.nn.Module, str)):
        raise ArgumentError(f"model must be a torch.nn.Module or MLIR text, got "
                            f"{type(model).__name__}")
    if isinstance(example_inputs, torch.Tensor) or not isinstance(example_inputs, (tuple, list)):
        raise ArgumentError("example_inputs must be a tuple of the forward arguments, e.g. "
                            f"(x,) for one tensor, got {type(example_inputs).__name__}")


def _check_schedule(schedule) -> Schedule:
    """The schedule to compile with, after checking it."""
    if schedule is None:
        return Schedule()
    if not isinstance(schedule, Schedule):
        hint = " (build one with fuseflow.Schedule(**fields))" if isinstance(schedule, dict) \
            else ""
        raise ArgumentError(f"schedule must be a fuseflow.Schedule or None{hint}, got "
                            f"{type(schedule).__name__}")
    return schedule

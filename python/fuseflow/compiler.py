"""The public compile API: ``fuseflow.Program`` (a model imported once) or ``fuseflow.compile``
→ :class:`CompiledModel` → simulation results."""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field

import torch

from fuseflow import mlir, textcheck
from fuseflow.errors import ArgumentError, FuseFlowError
from fuseflow.frontend import FrontendError, declare_formats, import_model, tag_groups
from fuseflow.grouping import assign_kernels, group_entries
from fuseflow.kernel_cache import cache_of
from fuseflow.kernel_settings import KernelSettings, check_kernel_keys, resolve_kernel
from fuseflow.passes.base import ChoiceEnum
from fuseflow.passes.lower_to_sam import LowerToSamPass
from fuseflow.passes.lowering.plan import shared_analyses
from fuseflow.passes.partition import PartitionMode
from fuseflow.passes.schedule import SchedulePass, kernel_name, kernels
from fuseflow.pipeline import Pipeline
from fuseflow.runtime import ModuleRun, run_module
from fuseflow.scheduling import KernelInfo, kernel_entries, kernel_infos, schedule_kernels
from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import ENGINES
from fuseflow.sim.formats import FiberTree

log = logging.getLogger(__name__)


class CompileError(FuseFlowError, mlir.MLIRError):
    """A model the pipelines rejected with located diagnostics (an illegal schedule, an
    unsupported kernel...): the message is MLIR's, every error with its location; also an
    ``MLIRError`` whose ``error_diagnostics`` are the diagnostics."""

    def __init__(self, err: "mlir.MLIRError"):
        diagnostics = list(getattr(err, "error_diagnostics", []) or [])
        Exception.__init__(self, str(err).strip())
        # MLIRError's ``message`` and ``error_diagnostics`` are read-only views of these.
        self._message = str(err).strip()
        self._error_diagnostics = diagnostics
        self.location = str(diagnostics[0].location) if diagnostics else None

    def __str__(self) -> str:
        return self._message


def _check_text(text: str) -> None:
    """A FrontendError for MLIR text the upstream parser would crash on (see
    :mod:`fuseflow.textcheck`), at its first such construct."""
    problems = textcheck.find_crashing_constructs(text)
    if problems:
        first = problems[0]
        raise FrontendError(first.message, f"<mlir text>:{first.line}:{first.col}")


def _run(pipeline: Pipeline, module) -> None:
    """Runs ``pipeline`` on ``module``; located diagnostics become a :class:`CompileError`."""
    try:
        pipeline.run(module)
    except mlir.MLIRError as err:
        raise CompileError(err) from None


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
    ``kernels``: per-kernel settings, key → :class:`~fuseflow.kernel_settings.KernelSettings`
    (or a dict of its fields ``order``/``parallel``/``block``, or just an order); a key is a
    kernel's name as printed (``'g1:layer2'``), a group entry, FX node or submodule of its ops
    (``'layer2.transform'``), or its index (``1``). A kernel's own settings take precedence
    over ``order``; kernels without either get the default rules (``fuseflow-schedule``).
    """

    fusion: object = "unfused"
    order: tuple[str, ...] = ()
    formats: dict[str, str] = field(default_factory=dict)
    kernels: dict = field(default_factory=dict)

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
        object.__setattr__(self, "kernels", check_kernel_keys(self.kernels))
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

    def partition_mode(self, grouped: bool | None = None) -> PartitionMode:
        """How ``fuseflow-partition`` forms kernels (``grouped``: by fusion groups; default
        :attr:`grouped`)."""
        if self.grouped if grouped is None else grouped:
            return PartitionMode.GROUPS
        return PartitionMode.parse(self.fusion, "Schedule.fusion")


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
    """A model compiled to SAM dataflow graphs; keeps the IR of every level, the scheduled
    kernels (:attr:`kernels`) and their plans, so one kernel can be rescheduled
    (:meth:`reschedule`) without replanning the others."""

    def __init__(self, levels: dict[str, str], module: "mlir.Module", input_names: list[str],
                 bound_params: list[torch.Tensor], schedule: Schedule, *,
                 kernel_module: "mlir.Module | None" = None, plans: dict | None = None,
                 entries: dict | None = None):
        self._levels = levels
        self.module = module
        self.input_names = input_names
        self.params = bound_params
        self.schedule = schedule
        self._kernel_module = kernel_module
        self._plans = plans or {}
        self._entries = entries or {}

    @property
    def kernels(self) -> list[KernelInfo]:
        """The kernels in program order: name, index, schedule, fused expression, size
        (planned sam ops) and :meth:`~fuseflow.scheduling.KernelInfo.legal_orders`."""
        if self._kernel_module is None:
            return []
        return kernel_infos(self._kernel_module, self._plans)

    def reschedule(self, kernel, *, order=None, parallel=None, block=None) -> "CompiledModel":
        """A copy compiled with new schedule fields for one kernel (a name, group entry or
        index, as in ``Schedule.kernels``): only that kernel is planned again, the others
        reuse their plans. This model is unchanged."""
        if self._kernel_module is None:
            raise ArgumentError("this compiled model keeps no scheduled kernels to reschedule")
        settings = KernelSettings(order=order, parallel=parallel, block=block)
        if not settings:
            raise ArgumentError("reschedule needs at least one of order, parallel, block")
        names = [kernel_name(op) for op in kernels(self._kernel_module)]
        name = resolve_kernel(kernel, names, self._entries)
        module = clone_module(self._kernel_module)
        with module.context:
            _run(Pipeline.of(SchedulePass.from_options({"kernel": name,
                                                        **settings.pass_options()})), module)
        kernels_per = {**self.schedule.kernels, name: settings}
        schedule = Schedule(self.schedule.fusion, self.schedule.order, self.schedule.formats,
                            kernels_per)
        levels = {"linalg": self._levels["linalg"]}
        return _lower(module, levels, dict(self._plans), self.input_names, self.params,
                      schedule, self._entries)

    def mlir(self, level: str = "sam") -> str:
        """The IR at ``level`` ('linalg', 'kernels', 'sam')."""
        return self._levels[Level.parse(level, "IR level").value]

    def simulate(self, *inputs, arch: Arch | None = None, engine: str = "fast",
                 trace: bool = False, workers: int = 1,
                 keep_intermediates: bool = True, kernel_cache=None) -> SimulationResult:
        """Simulates the compiled graphs on ``inputs`` (torch tensors, dense or sparse).

        ``engine``: ``fast`` (default) or ``reference``, the cycle-by-cycle specification
        (same outputs, cycles and statistics, about 100x slower). ``workers``: how many
        independent kernels to simulate at once, each in a forked process (same results;
        :mod:`fuseflow.runtime`). ``keep_intermediates=False``: each kernel's results are
        let go once read (``KernelRun.result.outputs`` holds only the model's outputs), so a
        large model's run holds what is still to be read, not every intermediate.
        ``kernel_cache`` (a folder or a :class:`fuseflow.KernelCache`): kernels simulated
        before on the same inputs, engine and architecture are read from it, the others
        stored in it (same results; :mod:`fuseflow.kernel_cache`)."""
        arch = Arch.of(arch)
        cache = cache_of(kernel_cache)
        if engine not in ENGINES:
            raise ArgumentError(f"unknown engine {engine!r}; valid engines: {', '.join(ENGINES)}")
        tensors = list(inputs) + list(self.params)
        if len(tensors) != len(self.input_names):
            raise ArgumentError(f"expected {len(self.input_names) - len(self.params)} inputs, "
                                f"got {len(inputs)}")
        trees = [FiberTree.from_torch(t.detach() if isinstance(t, torch.Tensor)
                                      else torch.as_tensor(t)) for t in tensors]
        run = run_module(self.module, trees, arch=arch, engine=engine, trace=trace,
                         workers=workers, keep_intermediates=keep_intermediates, cache=cache)
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
        self._warned_dense = False
        self.exported = None
        """The exported (pre-decomposition) program fusion groups name; None for MLIR text."""
        if isinstance(model, str):
            _check_text(model)
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
        return clone_module(self.module)

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
            self._warn_if_dense_variant(formats)
            if formats:
                declare_formats(module, self.input_names, formats)
            if kernel_of is not None:
                tag_groups(module, kernel_of)
            levels = {"linalg": str(module)}
            groups = group_entries(schedule.fusion, self.plan) if grouped else {}
            mode = schedule.partition_mode(grouped)
            to_kernels = Pipeline.phase(KERNEL_PHASE, {"fuseflow-partition": {"mode": mode.value}})
            before, after = to_kernels.split(SchedulePass.ARGUMENT)
            with shared_analyses():
                _run(before, module)
                _run(schedule_kernels(module, schedule.order, schedule.kernels, groups), module)
                _run(after, module)
                entries = kernel_entries(module, groups)
                compiled = _lower(module, levels, {}, list(self.input_names), self.param_values,
                                  schedule, entries)
        log.debug("compiled with %s", schedule)
        return compiled


    def _warn_if_dense_variant(self, formats: dict[str, str]) -> None:
        """Warns (once per program) when the plan's published workload declares inputs sparse
        (``FusionPlan.sparse_formats``) that ``formats`` leaves undeclared: the compile is then
        the dense variant, which streams every pruned zero, and a ``Schedule(fusion=...)``
        written by hand is easily mistaken for the published workload."""
        published = getattr(self.plan, "sparse_formats", None) or {}
        undeclared = [name for name in published if name not in formats]
        if not undeclared or self._warned_dense:
            return
        self._warned_dense = True
        warnings.warn(DenseVariantWarning(
            f"the schedule declares no format for {', '.join(undeclared)}, which the plan's "
            "published workload declares sparse: compiling the dense variant. Use "
            "plan.schedule(level) for the published workload, or declare them (e.g. "
            f"formats={{{undeclared[0]!r}: 'dense'}}) to mean the dense one"), stacklevel=3)


class DenseVariantWarning(UserWarning):
    """A model compiled with a plan whose published workload declares inputs sparse, by a
    schedule that does not declare them (see ``Program.compile``)."""


KERNEL_PHASE = "fuseflow-to-kernels"
"""The registered phase from imported linalg to scheduled ``fuse.kernel`` regions."""
DATAFLOW_PHASE = "fuseflow-kernels-to-dataflow"
"""The registered phase from scheduled kernels to ``sam.graph`` dataflow graphs."""


def _lower(module, levels: dict, plans: dict, input_names, params, schedule: Schedule,
           entries: dict) -> CompiledModel:
    """Lowers the scheduled ``module`` in place (``plans``: a plan cache, filled) and returns
    the compiled model keeping a copy of the scheduled kernels."""
    with module.context, shared_analyses():
        levels["kernels"] = str(module)
        scheduled = clone_module(module)
        lower = LowerToSamPass(plans=plans)
        _run(Pipeline.phase(DATAFLOW_PHASE).replace(LowerToSamPass.ARGUMENT, lower), module)
        levels["sam"] = str(module)
    return CompiledModel(levels, module, input_names, params, schedule,
                         kernel_module=scheduled, plans=plans, entries=entries)


def clone_module(module: "mlir.Module") -> "mlir.Module":
    """A copy of ``module`` in its context."""
    with module.context, module.operation.location:
        copy = mlir.Module.create()
        for attr in module.operation.attributes:
            copy.operation.attributes[attr.name] = attr.attr
        with mlir.InsertionPoint(copy.body):
            for op in module.body.operations:
                op.operation.clone()
    return copy


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

"""``fuseflow-schedule``: sets each ``fuse.kernel``'s ``fuseflow.schedule`` attribute.

The schedule is the kernel's design choices as data in the IR (:class:`KernelSchedule`), a
dictionary attribute the lowering reads and nothing else::

    %k = "fuse.kernel"(%A, %B) ({ ... }) {name = "k0", fuseflow.schedule = {
        block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"],
        parallel = [["d0", 4]]}} : (...) -> tensor<4x3xf32>

* ``order``: the dataflow (loop) order of the kernel's index variables;
* ``parallel``: index variables and their parallelization factors (empty: none);
* ``block``: the tile shape (empty: none);
* ``formats``: the format of each kernel result, the tensors materialized at the kernel's
  boundary (``dense``, ``csr``, ``csc``, ``coo``, ``dcsr``, ``bsr:<rows>x<cols>``, ...).
  Read-only: derived from the result types, which the partition fixes.

``parallel`` and ``block`` are recorded, verified and carried onto the ``sam.graph``;
``sam-parallelize`` applies ``parallel`` (``docs/parallel.md``), ``fuseflow-lower-to-sam``
applies ``block`` (tiles as values for kernels with blocked levels, ``docs/blocking.md``).

**Default rules.** A kernel without a schedule gets ``order`` = the best order the lowering
can realize (:func:`~fuseflow.passes.lower_to_sam.default_order`: the ranking of
:mod:`fuseflow.passes.lowering.order`, first order that plans), ``parallel = []``,
``block = []``, ``formats`` from its result types. A kernel with a schedule keeps it.

**Options.** ``order=d0,d2,d1``, ``parallel=d0:4,d1:2``, ``block=4,4`` replace those fields;
without ``kernel`` on every kernel (a model-wide order), with ``kernel=<name>`` (a kernel's
``name`` attribute) on that kernel only. A schedule the pass sets is checked like
``fuseflow-verify-schedule`` checks it: an order the lowering cannot realize is an error
located at the kernel that lists the legal orders.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fuseflow import mlir
from fuseflow.dialects.ir import find_ops
from fuseflow.dialects.types import format_name
from fuseflow.errors import FuseFlowError
from fuseflow.passes.base import Pass, PassFailure, PipelineError, emit_error
from fuseflow.passes.lowering.einsum import LoweringError
from fuseflow.passes.lowering.plan import KernelAnalysis, default_order, plan_kernel

SCHEDULE_ATTR = "fuseflow.schedule"
"""The name of the schedule attribute on ``fuse.kernel`` (and, copied, on ``sam.graph``)."""

FIELDS = ("block", "formats", "order", "parallel")


class ScheduleError(FuseFlowError):
    """A malformed or illegal schedule; carries the location to report it at."""

    def __init__(self, message: str, loc=None):
        super().__init__(message, loc)
        self.loc = loc


@dataclass(frozen=True)
class KernelSchedule:
    """One kernel's schedule (see the module doc for the fields)."""

    order: tuple[str, ...]
    parallel: tuple[tuple[str, int], ...] = ()
    block: tuple[int, ...] = ()
    formats: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The schedule as JSON data: ``{"order": [...], "parallel": [[var, factor]],
        "block": [...], "formats": [...]}``."""
        return {"order": list(self.order), "parallel": [[v, f] for v, f in self.parallel],
                "block": list(self.block), "formats": list(self.formats)}

    def to_attr(self) -> mlir.Attribute:
        """The ``fuseflow.schedule`` dictionary attribute (needs a current context)."""
        i64 = mlir.IntegerType.get_signless(64)

        def strings(values):
            return mlir.ir.ArrayAttr.get([mlir.StringAttr.get(v) for v in values])

        return mlir.ir.DictAttr.get({
            "order": strings(self.order),
            "parallel": mlir.ir.ArrayAttr.get([
                mlir.ir.ArrayAttr.get([mlir.StringAttr.get(v), mlir.IntegerAttr.get(i64, f)])
                for v, f in self.parallel]),
            "block": mlir.DenseI64ArrayAttr.get(list(self.block)),
            "formats": strings(self.formats),
        })

    @classmethod
    def from_attr(cls, attr, loc=None) -> KernelSchedule:
        """Reads a ``fuseflow.schedule`` attribute; a ScheduleError located at ``loc`` names
        what is malformed. ``order`` is required, the other fields default to empty."""
        if not isinstance(attr, mlir.ir.DictAttr):
            try:
                attr = mlir.ir.DictAttr(attr)
            except ValueError:
                raise ScheduleError(f"'{SCHEDULE_ATTR}' must be a dictionary, got {attr}",
                                    loc) from None
        entries = {attr[i].name: attr[i].attr for i in range(len(attr))}
        unknown = sorted(set(entries) - set(FIELDS))
        if unknown:
            raise ScheduleError(f"unknown '{SCHEDULE_ATTR}' field(s) {', '.join(unknown)}; "
                                f"valid fields: {', '.join(FIELDS)}", loc)
        if "order" not in entries:
            raise ScheduleError(f"'{SCHEDULE_ATTR}' has no 'order'", loc)
        return cls(order=_strings(entries["order"], "order", loc),
                   parallel=_parallel(entries.get("parallel"), loc),
                   block=_ints(entries.get("block"), loc),
                   formats=_strings(entries.get("formats"), "formats", loc))


def _array(attr, what: str, loc) -> list:
    try:
        return list(mlir.ir.ArrayAttr(attr))
    except ValueError:
        raise ScheduleError(f"'{SCHEDULE_ATTR}' field '{what}' must be an array, got {attr}",
                            loc) from None


def _string(attr, what: str, loc) -> str:
    try:
        return mlir.StringAttr(attr).value
    except ValueError:
        raise ScheduleError(f"'{SCHEDULE_ATTR}' field '{what}' must hold strings, got {attr}",
                            loc) from None


def _strings(attr, what: str, loc) -> tuple[str, ...]:
    if attr is None:
        return ()
    return tuple(_string(item, what, loc) for item in _array(attr, what, loc))


def _int(attr, what: str, loc) -> int:
    try:
        return int(mlir.IntegerAttr(attr).value)
    except ValueError:
        raise ScheduleError(f"'{SCHEDULE_ATTR}' field '{what}' must hold integers, got {attr}",
                            loc) from None


def _parallel(attr, loc) -> tuple[tuple[str, int], ...]:
    if attr is None:
        return ()
    pairs = []
    for item in _array(attr, "parallel", loc):
        pair = _array(item, "parallel", loc)
        if len(pair) != 2:
            raise ScheduleError(f"'{SCHEDULE_ATTR}' field 'parallel' must hold [variable, "
                                f"factor] pairs, got {item}", loc)
        pairs.append((_string(pair[0], "parallel", loc), _int(pair[1], "parallel", loc)))
    return tuple(pairs)


def _ints(attr, loc) -> tuple[int, ...]:
    if attr is None:
        return ()
    try:
        return tuple(mlir.DenseI64ArrayAttr(attr))
    except ValueError:
        raise ScheduleError(f"'{SCHEDULE_ATTR}' field 'block' must be an array<i64>, got "
                            f"{attr}", loc) from None


def read_schedule(kernel_op) -> KernelSchedule | None:
    """The schedule of a ``fuse.kernel`` (or ``sam.graph``), None if it has none; a
    ScheduleError located at the op if it is malformed."""
    op = kernel_op.operation if hasattr(kernel_op, "operation") else kernel_op
    if SCHEDULE_ATTR not in op.attributes:
        return None
    return KernelSchedule.from_attr(op.attributes[SCHEDULE_ATTR], op.location)


def write_schedule(op, schedule: KernelSchedule) -> None:
    """Sets ``op``'s ``fuseflow.schedule`` attribute."""
    with op.context:
        op.attributes[SCHEDULE_ATTR] = schedule.to_attr()


def result_formats(kernel_op) -> tuple[str, ...]:
    """The format names of a kernel's results (its materialized boundary tensors)."""
    return tuple(format_name(r.type) for r in kernel_op.results)


def kernel_name(kernel_op) -> str:
    """A kernel's ``name`` attribute ('' if it has none)."""
    if "name" not in kernel_op.attributes:
        return ""
    return mlir.StringAttr(kernel_op.attributes["name"]).value


def kernels(module) -> list:
    """The ``fuse.kernel`` ops of a module, in order."""
    return list(find_ops(module, lambda op: op.name == "fuse.kernel"))


def schedule_errors(analysis: KernelAnalysis, schedule: KernelSchedule,
                    kernel_op) -> list[str]:
    """Why ``schedule`` is not a legal schedule of the kernel (empty: it is): an order the
    lowering cannot realize (listing the legal orders), parallel variables the kernel does
    not have or factors below 1, non-positive block sizes, formats that are not the results'."""
    errors = []
    try:
        plan_kernel(analysis, schedule.order, schedule.block)
    except LoweringError as err:
        errors.append(err.message)
    variables = analysis.variables
    seen = set()
    for var, factor in schedule.parallel:
        if var not in variables:
            errors.append(f"parallel variable {var} is not an index variable of the kernel "
                          f"({', '.join(variables)})")
        elif var in seen:
            errors.append(f"parallel variable {var} is listed twice")
        seen.add(var)
        if factor < 1:
            errors.append(f"parallel factor {factor} of {var} must be >= 1")
    for size in schedule.block:
        if size < 1:
            errors.append(f"block sizes must be positive, got "
                          f"({', '.join(map(str, schedule.block))})")
            break
    formats = result_formats(kernel_op)
    if tuple(schedule.formats) != formats:
        errors.append(f"formats ({', '.join(schedule.formats)}) are not the formats of the "
                      f"kernel's results ({', '.join(formats)}); they are read-only")
    return errors


def parse_parallel(items) -> tuple[tuple[str, int], ...]:
    """``('d0:4', 'd1:2')`` -> ``(('d0', 4), ('d1', 2))``; a PipelineError on bad syntax."""
    pairs = []
    for item in items:
        var, colon, factor = item.partition(":")
        try:
            pairs.append((var.strip(), int(factor)))
        except ValueError:
            pairs = None
        if pairs is None or not colon or not var.strip():
            raise PipelineError(f"invalid value '{item}' for option 'parallel' of pass "
                                f"'{SchedulePass.ARGUMENT}'; expected <variable>:<factor>, "
                                "e.g. d0:4")
    return tuple(pairs)


@dataclass(frozen=True)
class SchedulePass(Pass):
    """Sets the fuseflow.schedule of every fuse.kernel: defaults, or the given fields."""

    ARGUMENT = "fuseflow-schedule"
    kernel: str = ""
    """Only this kernel (its ``name``); default: every kernel."""
    order: tuple[str, ...] = ()
    """The dataflow order (``d0,d2,d1``)."""
    parallel: tuple[str, ...] = ()
    """Parallelization factors (``d0:4,d1:2``)."""
    block: tuple[int, ...] = ()
    """The tile shape (``4,4``)."""

    def __post_init__(self):
        parse_parallel(self.parallel)

    def overrides(self) -> dict:
        """The fields this pass sets, as :class:`KernelSchedule` fields."""
        given = {"order": tuple(self.order), "parallel": parse_parallel(self.parallel),
                 "block": tuple(self.block)}
        return {k: v for k, v in given.items() if v}

    def run(self, module) -> None:
        ops = kernels(module)
        if self.kernel:
            names = [kernel_name(op) for op in ops]
            if self.kernel not in names:
                raise emit_error(module.location, f"{self.ARGUMENT}: unknown kernel "
                                                  f"'{self.kernel}'; kernels: "
                                                  f"{', '.join(names) or 'none'}")
            ops = [op for op, name in zip(ops, names) if name == self.kernel]
        failed = False
        for op in ops:
            try:
                errors = self._schedule(op)
            except (LoweringError, ScheduleError) as err:
                emit_error(err.loc or op.location, err.message)
                failed = True
                continue
            for message in errors:
                emit_error(op.location, f"schedule of kernel '{kernel_name(op)}': {message}")
            failed = failed or bool(errors)
        if failed:
            raise PassFailure(f"{self.ARGUMENT}: see the located errors")

    def _schedule(self, op) -> list[str]:
        """Sets ``op``'s schedule; returns why the result would be illegal (nothing set)."""
        analysis = KernelAnalysis.of(op)
        given = self.overrides()
        schedule = read_schedule(op)
        if schedule is None:
            schedule = KernelSchedule(given.get("order")
                                      or default_order(analysis, given.get("block", ())))
        schedule = replace(schedule, **given, formats=result_formats(op))
        errors = schedule_errors(analysis, schedule, op)
        if not errors:
            write_schedule(op, schedule)
        return errors

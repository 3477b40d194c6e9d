"""The root of FuseFlow's error hierarchy.

Every error FuseFlow raises on purpose derives from :class:`FuseFlowError`, so a caller can
catch them all with one clause and tell them from bugs (any other exception). Each error
carries a user-level ``message`` that names the problem (and the valid choices, where there
are some) and, when known, the ``location`` it arose at: MLIR location text
(``loc("model.py":12:8)``) or a source ``file:line``. ``str(error)`` is
``"<location>: <message>"``, or the message alone without a location.

The concrete classes live beside the code that raises them and keep a builtin second base
where callers rely on it (``ValueError`` for bad input, ``RuntimeError`` for execution):

==========================  ================================  ==============================
class                       module                            raised for
==========================  ================================  ==============================
``PipelineError``           ``fuseflow.passes.base``          a pipeline or pass option
``PassFailure``             ``fuseflow.passes.base``          a pass that emitted diagnostics
``LoweringError``           ``fuseflow.passes.lowering``      an unsupported kernel
``ScheduleError``           ``fuseflow.passes.schedule``      a malformed or illegal schedule
``UnsupportedTypeError``    ``fuseflow.dialects.types``       a tensor type we cannot store
``CapacityError``           ``fuseflow.dialects.containers``  more runs of types than slots
``FrontendError``           ``fuseflow.frontend``             a model or format declaration
``CompileError``            ``fuseflow.compiler``             located compiler diagnostics
``GroupingError``           ``fuseflow.grouping``             a fusion configuration
``ExecutionError``          ``fuseflow.runtime``              a module the runtime cannot run
``LayoutError``             ``fuseflow.layout``               a host layout op
``LoaderError``             ``fuseflow.sim.loader``           a graph the simulator cannot load
``SimulationError``         ``fuseflow.sim.tokens``           a simulation that cannot finish
``StreamError``             ``fuseflow.sim.tokens``           a malformed stream
``DeadlockError``           ``fuseflow.sim.tokens``           blocks that cannot progress
``UsageError``              ``fuseflow.tools.opt``            a bad command line
``ArgumentError``           ``fuseflow.errors``               a public API argument
==========================  ================================  ==============================

:func:`check_choice` is the one validator of enumerated settings: its :class:`ChoiceError`
(or the caller's error class) lists the valid choices. This module imports nothing, so every
layer (the simulator core included) can use it.
"""

from __future__ import annotations


class FuseFlowError(Exception):
    """An error FuseFlow raises on purpose: a user-level message and, if known, its location."""

    def __init__(self, message: str, location: object = None):
        super().__init__(message)
        self.message = str(message)
        """What went wrong, naming the problem and the valid choices."""
        self.location = None if location is None else str(location)
        """MLIR location text or a source ``file:line``; None when unknown."""

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class ChoiceError(FuseFlowError, ValueError):
    """A value outside a fixed set of choices; the message lists them."""


def check_choice(value, choices, what: str, error: type[FuseFlowError] = ChoiceError):
    """``value`` if it is one of ``choices``; else ``error`` naming ``what`` and the choices.

    The one validator of enumerated settings (pass options, level formats, presets, ...).
    """
    if value not in choices:
        raise error(f"invalid value '{value}' for {what}; valid choices: "
                    f"{', '.join(str(c) for c in choices)}")
    return value


class ArgumentError(FuseFlowError, TypeError, ValueError):
    """An argument of a public entry (``compile``, ``Program``, ``Schedule``, ``Arch``,
    ``simulate``) of the wrong type or value; the message names the argument and what it
    accepts. It is a ``TypeError`` and a ``ValueError`` too, as callers of the builtin checks
    expect."""


def check_int(value, name: str, minimum: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``; else an ArgumentError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArgumentError(f"{name} must be an int >= {minimum}, got {value!r}")
    return value

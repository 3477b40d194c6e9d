"""The pass base class: a frozen dataclass whose fields are the pass's typed options.

A pass names its command-line argument in ``ARGUMENT`` and documents itself in its class
docstring (first line: the summary shown by ``fuseflow-opt --list-passes``). Options are parsed
from the ``{key=value list=a,b}`` syntax of MLIR pipelines, by field type, with errors that
name the option and the valid choices.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from typing import Any, ClassVar

from fuseflow import mlir
from fuseflow.errors import FuseFlowError, check_choice


class PassFailure(FuseFlowError):
    """Raised inside a pass after it emitted its located error diagnostics."""


class PipelineError(FuseFlowError, ValueError):
    """A pipeline string or pass option that cannot be parsed; the message names the problem."""


class ChoiceEnum(enum.Enum):
    """A string enum whose parse error lists the valid choices."""

    @classmethod
    def parse(cls, text: str, what: str = "") -> "ChoiceEnum":
        values = [m.value for m in cls]
        return cls(check_choice(text, values, what or cls.__name__, PipelineError))


@dataclasses.dataclass(frozen=True)
class Pass:
    """Base class of FuseFlow passes."""

    ARGUMENT: ClassVar[str] = ""

    @classmethod
    def summary(cls) -> str:
        """The one-line description of the pass."""
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        """The fields that are textual options (a field with ``metadata={"option": False}``
        is set from Python only, e.g. a cache)."""
        return [f for f in dataclasses.fields(cls) if f.metadata.get("option", True)]

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "Pass":
        """Builds the pass from textual options, rejecting unknown keys and bad values."""
        fields = {f.name.replace("_", "-"): f for f in cls.option_fields()}
        hints = typing.get_type_hints(cls)
        kwargs: dict[str, Any] = {}
        for key, text in options.items():
            field = fields.get(key)
            if field is None:
                valid = ", ".join(sorted(fields)) or "none"
                raise PipelineError(
                    f"unknown option '{key}' for pass '{cls.ARGUMENT}'; valid options: {valid}")
            kwargs[field.name] = _parse_value(hints[field.name], text, f"option '{key}' of pass '{cls.ARGUMENT}'")
        return cls(**kwargs)

    def options_text(self) -> str:
        """The options in pipeline syntax, e.g. ``{level=1 factor=4}`` (empty if defaults)."""
        parts = []
        for f in self.option_fields():
            value = getattr(self, f.name)
            if value == f.default or (f.default_factory is not dataclasses.MISSING
                                       and value == f.default_factory()):
                continue
            parts.append(f"{f.name.replace('_', '-')}={_format_value(value)}")
        return "{" + " ".join(parts) + "}" if parts else ""

    def pipeline_text(self) -> str:
        """This pass as a pipeline element."""
        return self.ARGUMENT + self.options_text()

    def run(self, module: "mlir.Operation") -> None:
        """Transforms ``module`` in place; on failure emits located errors and raises PassFailure."""
        raise NotImplementedError

    def __call__(self, op: "mlir.Operation", pass_handle) -> None:
        """The callable handed to ``PassManager.add``."""
        try:
            self.run(op)
        except PassFailure:
            pass_handle.signal_pass_failure()


def emit_error(op_or_loc, message: str) -> PassFailure:
    """Emits a located error diagnostic and returns the exception to raise."""
    loc = op_or_loc if isinstance(op_or_loc, mlir.Location) else op_or_loc.location
    loc.emit_error(message)
    return PassFailure(message, loc)


def _parse_value(hint, text: str, what: str):
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is getattr(__import__("types"), "UnionType", None):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if text in ("", "none"):
            return None
        return _parse_value(args[0], text, what)
    if origin in (tuple, list):
        (elem, *_) = typing.get_args(hint) or (str,)
        items = [t for t in text.split(",") if t != ""]
        return tuple(_parse_value(elem, t, what) for t in items)
    if isinstance(hint, type) and issubclass(hint, ChoiceEnum):
        return hint.parse(text, what)
    if hint is bool:
        if text in ("true", "1", ""):
            return True
        if text in ("false", "0"):
            return False
        raise PipelineError(f"invalid value '{text}' for {what}; valid choices: true, false")
    if hint in (int, float):
        try:
            return hint(text)
        except ValueError:
            raise PipelineError(f"invalid value '{text}' for {what}; expected {hint.__name__}") from None
    return text


def _format_value(value) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(_format_value(v) for v in value)
    return str(value)

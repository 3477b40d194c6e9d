"""Pipelines in ``mlir-opt`` syntax mixing upstream passes and FuseFlow's Python passes.

``PassManager.parse`` cannot see Python-defined passes, so the pipeline text is split into
top-level elements here: FuseFlow passes (and named pipelines) are instantiated from the
registry and added with ``pm.add(callable, name)``; every other element is handed to
``pm.add(text)``. One PassManager runs everything, so IR printing, timing and verification
work across both kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.passes import registry
from fuseflow.passes.base import Pass, PipelineError


@dataclass(frozen=True)
class PipelineElement:
    """One top-level pipeline element: a pass name, its options, and its original text."""

    name: str
    options: dict[str, str] = field(default_factory=dict)
    text: str = ""


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Splits ``text`` at ``sep`` outside parentheses, braces and quotes."""
    parts, depth, start, quote = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            quote = not quote
        elif quote:
            continue
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '{ch}' at offset {i} in pipeline '{text}'")
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth != 0 or quote:
        raise PipelineError(f"unbalanced brackets or quotes in pipeline '{text}'")
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]


def parse_options(text: str) -> dict[str, str]:
    """Parses ``key=value key2=a,b flag`` (the inside of ``{...}``)."""
    options: dict[str, str] = {}
    for item in split_top_level(text.strip(), sep=" "):
        key, eq, value = item.partition("=")
        options[key.strip()] = value.strip().strip('"') if eq else ""
    return options


def parse_element(text: str) -> PipelineElement:
    """Parses one element ``name``, ``name{opts}`` or ``anchor(nested)``."""
    text = text.strip()
    brace = text.find("{")
    paren = text.find("(")
    if brace != -1 and (paren == -1 or brace < paren):
        if not text.endswith("}"):
            raise PipelineError(f"expected '}}' at the end of pipeline element '{text}'")
        return PipelineElement(text[:brace].strip(), parse_options(text[brace + 1:-1]), text)
    name = text[:paren].strip() if paren != -1 else text
    return PipelineElement(name, {}, text)


def parse_pipeline(text: str) -> list[PipelineElement]:
    """Parses a pipeline string, with or without the ``builtin.module(...)`` anchor."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    return [parse_element(part) for part in split_top_level(text)]


def expand(elements: list[PipelineElement]) -> list[PipelineElement]:
    """Replaces named FuseFlow pipelines by their passes."""
    out: list[PipelineElement] = []
    for el in elements:
        if el.name in registry.PIPELINES:
            if el.options:
                raise PipelineError(f"named pipeline '{el.name}' takes no options")
            out.extend(expand(parse_pipeline(registry.PIPELINES[el.name])))
        else:
            out.append(el)
    return out


def _contains_fuseflow_pass(text: str) -> str | None:
    for name in list(registry.PASSES) + list(registry.PIPELINES):
        if name in text:
            return name
    return None


class Pipeline:
    """A parsed pipeline: FuseFlow pass objects and upstream pipeline text, in order."""

    def __init__(self, steps: list[Pass | str]):
        self.steps = steps

    @classmethod
    def parse(cls, text: str) -> "Pipeline":
        """Parses ``text``; unknown FuseFlow passes and bad options raise PipelineError."""
        steps: list[Pass | str] = []
        for el in expand(parse_pipeline(text)):
            if registry.is_registered(el.name):
                steps.append(registry.create(el.name, el.options))
            elif el.name.startswith(("fuseflow-", "sam-")):
                known = sorted([*registry.PASSES, *registry.PIPELINES])
                raise PipelineError(
                    f"unknown pass '{el.name}'; registered passes and pipelines: {', '.join(known)}")
            else:
                nested = _contains_fuseflow_pass(el.text)
                if nested:
                    raise PipelineError(
                        f"FuseFlow pass '{nested}' must appear at the top level of the pipeline, "
                        f"not nested in '{el.name}(...)'")
                steps.append(el.text)
        return cls(steps)

    @classmethod
    def phase(cls, name: str, options: dict[str, dict[str, str]] | None = None) -> "Pipeline":
        """The registered phase pipeline ``name``, with textual ``options`` for some of its
        passes (pass argument -> options); the phases are defined once, in the registry."""
        if name not in registry.PIPELINES:
            raise PipelineError(f"unknown phase pipeline '{name}'; registered: "
                                f"{', '.join(sorted(registry.PIPELINES))}")
        options = dict(options or {})
        steps: list[Pass | str] = []
        for el in expand(parse_pipeline(registry.PIPELINES[name])):
            if registry.is_registered(el.name):
                steps.append(registry.create(el.name, {**el.options, **options.pop(el.name, {})}))
            else:
                steps.append(el.text)
        if options:
            raise PipelineError(f"phase '{name}' has no pass {', '.join(sorted(options))}")
        return cls(steps)

    def split(self, argument: str) -> tuple["Pipeline", "Pipeline"]:
        """The steps before the first pass ``argument`` and those after it (it is left out)."""
        for i, step in enumerate(self.steps):
            if isinstance(step, Pass) and step.ARGUMENT == argument:
                return Pipeline(self.steps[:i]), Pipeline(self.steps[i + 1:])
        raise PipelineError(f"pipeline {self.text()} has no pass '{argument}'")

    def replace(self, argument: str, step: Pass) -> "Pipeline":
        """This pipeline with every pass ``argument`` replaced by ``step``."""
        return Pipeline([step if isinstance(s, Pass) and s.ARGUMENT == argument else s
                         for s in self.steps])

    @classmethod
    def of(cls, *steps: Pass | str) -> "Pipeline":
        """A pipeline from pass objects and upstream pipeline text, in order."""
        return cls(list(steps))

    def text(self) -> str:
        """The pipeline in ``mlir-opt`` syntax (replayable with ``fuseflow-opt``)."""
        parts = [s.pipeline_text() if isinstance(s, Pass) else s for s in self.steps]
        return "builtin.module(" + ",".join(parts) + ")"

    def pass_manager(self, ctx: "mlir.Context", *, print_ir_after_all: bool = False,
                     verify_each: bool = True, timing: bool = False) -> "mlir.PassManager":
        """Builds one PassManager running every step in order."""
        with ctx:
            pm = mlir.PassManager("builtin.module")
            for step in self.steps:
                if isinstance(step, Pass):
                    pm.add(step, name=type(step).__name__, argument=step.ARGUMENT,
                           description=step.summary())
                else:
                    try:
                        pm.add(step)
                    except ValueError as err:
                        raise PipelineError(f"cannot parse pipeline element '{step}': {err}") from None
            pm.enable_verifier(verify_each)
            if print_ir_after_all:
                pm.enable_ir_printing(print_after_all=True)
            if timing:
                pm.enable_timing()
        return pm

    def run(self, module: "mlir.Module", **options) -> None:
        """Runs the pipeline on ``module`` in place; raises MLIRError with diagnostics on failure."""
        pm = self.pass_manager(module.context, **options)
        pm.run(module.operation)


def run_pipeline(module: "mlir.Module", text: str, **options) -> None:
    """Parses ``text`` and runs it on ``module`` in place."""
    Pipeline.parse(text).run(module, **options)

"""The pass registry: every pass and named pipeline has a lit test, every pass loads."""

from pathlib import Path

import pytest

from fuseflow.passes import registry
from fuseflow.pipeline import Pipeline

PASS_TESTS = Path(__file__).parent / "passes"
PREFIXES = ("fuseflow-", "sam-")


def lit_test_stem(argument: str) -> str:
    """``fuseflow-lower-to-sam`` -> ``lower-to-sam``; ``sam-verify`` keeps its prefix."""
    return argument.removeprefix("fuseflow-")


@pytest.mark.parametrize("argument", sorted([*registry.PASSES, *registry.PIPELINES]))
def test_has_lit_test(argument):
    assert argument.startswith(PREFIXES), f"'{argument}' lacks a {' or '.join(PREFIXES)} prefix"
    path = PASS_TESTS / f"{lit_test_stem(argument)}.mlir"
    assert path.is_file(), f"'{argument}' has no lit test {path.relative_to(PASS_TESTS.parent)}"


@pytest.mark.parametrize("argument", sorted(registry.PASSES))
def test_pass_class(argument):
    cls = registry.pass_class(argument)
    assert cls.ARGUMENT == argument
    assert (cls.__doc__ or "").strip(), f"{cls.__name__} has no docstring"
    assert cls.summary(), f"{cls.__name__} has no summary line"
    assert registry.create(argument).pipeline_text() == argument


@pytest.mark.parametrize("name", sorted(registry.PIPELINES))
def test_pipeline_expands(name):
    assert name not in registry.PASSES
    Pipeline.parse(name)


def test_stems():
    assert lit_test_stem("fuseflow-lower-to-sam") == "lower-to-sam"
    assert lit_test_stem("sam-verify") == "sam-verify"
    assert lit_test_stem("fuseflow-to-dataflow") == "to-dataflow"

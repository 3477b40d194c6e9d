"""The fuseflow-opt fuzzer: generated kernels are valid, mutations never escape as internal
errors, and the classification tells located diagnostics from internal errors."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.fuzz.kernels import OptCase, check_opt, mutate, opt_case, random_kernel
from fuseflow.fuzz.outcome import Outcome

PIPELINE = "builtin.module(fuseflow-to-dataflow)"


@settings(max_examples=12, deadline=None)
@given(st.randoms(use_true_random=False))
def test_generated_kernels_lower_or_fail_with_a_located_error(rng):
    case = OptCase(0, random_kernel(rng), PIPELINE)
    report = check_opt(case)
    assert report.outcome in (Outcome.OK, Outcome.CLEAN_ERROR), (case.text, report)
    if report.outcome is Outcome.CLEAN_ERROR:      # valid IR: only the lowering may refuse it
        assert "expected" not in report.detail, (case.text, report)


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_mutated_kernels_never_raise_internal_errors(rng):
    case = OptCase(0, mutate(random_kernel(rng), rng, rng.randint(1, 3)), PIPELINE)
    report = check_opt(case)
    assert not report.failed, (case.text, report)


def test_seeded_cases_are_reproducible():
    assert opt_case(5) == opt_case(5)
    assert opt_case(5).text != opt_case(6).text


def test_a_parse_error_is_clean_and_an_encoding_without_map_too():
    assert check_opt(OptCase(0, "func.func @f( {", PIPELINE)).outcome is Outcome.CLEAN_ERROR
    report = check_opt(OptCase(0, "#CSR = #sparse_tensor.encoding<{}>\n", PIPELINE))
    assert report.outcome is Outcome.CLEAN_ERROR and "map" in report.detail


def test_mutation_changes_the_text():
    rng = random.Random(3)
    text = random_kernel(rng)
    assert any(mutate(text, random.Random(s)) != text for s in range(5))

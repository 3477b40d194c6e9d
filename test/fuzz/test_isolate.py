"""The fuzzers' isolated worker: a case that hangs or kills its process ends as a hang or a
crash, and the next case runs in a fresh worker."""

import os
import time

import pytest

from fuseflow.fuzz.isolate import Isolated
from fuseflow.fuzz.outcome import Outcome, Report, Tally, classify_error
from fuseflow.sim.tokens import StreamError


def test_a_hang_is_reported_and_the_worker_restarts():
    with Isolated(time.sleep, timeout=0.5) as runner:
        assert runner.run(30, first_timeout=0).outcome is Outcome.HANG
        assert runner.run(0, first_timeout=20) is None      # time.sleep's result: a fresh worker


def test_a_dying_worker_is_a_crash():
    with Isolated(os._exit, timeout=20) as runner:
        report = runner.run(3, first_timeout=20)
    assert report.outcome is Outcome.CRASH and "exit code 3" in report.detail


def test_clean_and_internal_errors():
    assert classify_error(ValueError("bad"), "compile").outcome is Outcome.INTERNAL_ERROR
    clean = classify_error(StreamError("x"), "compile")
    assert clean.outcome is Outcome.CLEAN_ERROR and clean.detail == "StreamError: x"
    # A simulator error about a compiled graph is the compiler's fault.
    assert classify_error(StreamError("x"), "simulate", (StreamError,)).failed


def test_tally_counts_rejections_among_valid_models():
    tally = Tally()
    tally.add(1, Report(Outcome.OK))
    tally.add(2, Report(Outcome.CLEAN_ERROR, "compile", "unsupported op"))
    tally.add(3, Report(Outcome.INVALID, "pytorch"))
    tally.add(4, Report(Outcome.WRONG, "compare", "max abs difference 1"))
    assert tally.rejected_fraction == 1 / 3
    assert [case for case, _ in tally.failures] == [4]
    tally.add(5, Report(Outcome.CLEAN_ERROR, "simulate/fast", "out of memory"))
    assert tally.to_dict()["counts"]["wrong"] == 1
    assert tally.to_dict()["rejected"] == [["2", "unsupported op"]]
    assert tally.rejected_fraction == 1 / 4


def test_results_of_consecutive_seed_ranges_merge_into_one():
    from fuseflow.fuzz.outcome import merge_results

    whole, first, second = Tally(), Tally(), Tally()
    reports = [Report(Outcome.OK), Report(Outcome.CLEAN_ERROR, "compile", "unsupported op 3"),
               Report(Outcome.INVALID, "pytorch"), Report(Outcome.HANG, "", "no result"),
               Report(Outcome.CLEAN_ERROR, "compile", "unsupported op 4")]
    for seed, report in enumerate(reports):
        whole.add(seed, report)
        (first if seed < 2 else second).add(seed, report)
    parts = [{"seconds": 1.0, "first_seed": 2, **second.to_dict()},
             {"seconds": 2.0, "first_seed": 0, **first.to_dict()}]
    merged = merge_results(parts)
    expected = whole.to_dict()
    for key in ("cases", "counts", "rejected_fraction", "clean_errors", "rejected", "failures"):
        assert merged[key] == expected[key], key
    assert merged["seconds"] == 3.0 and merged["first_seed"] == 0
    with pytest.raises(ValueError, match="not consecutive"):
        merge_results([parts[0], {**parts[1], "first_seed": 1}])


def test_clean_errors_group_by_the_line_that_says_what_failed():
    from fuseflow.fuzz.outcome import _shape_of

    pipeline = ('CompileError: Failure while executing pass pipeline:\nerror: "amax"(callsite('
                '"m.py":84:0 at callsite("m.py":156:0 at "f.py":82:0))): a max reduction over '
                'a non-innermost index variable is not supported')
    assert _shape_of(pipeline) == ("CompileError: a max reduction over a non-innermost index "
                                   "variable is not supported")
    located = "MLIRError: operand #2 of 'x' loc(\"a\":1:2)"
    assert _shape_of(located) == "MLIRError: operand #N of 'x' "
    assert _shape_of("expected '{' to begin a region") == "expected '{' to begin a region"

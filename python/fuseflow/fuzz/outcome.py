"""Outcomes of fuzz cases and the rule that tells a clean error from an internal one.

A case ends in exactly one :class:`Outcome`. An exception is a *clean error* when it is a
:class:`~fuseflow.errors.FuseFlowError` (or, for MLIR text, an ``MLIRError`` carrying located
diagnostics) with a user-level message; anything else is an *internal error*: a library
traceback, a FuseFlow error with no message, a simulator error about a graph the compiler
produced (the compiler must never hand the simulator a graph it rejects), or the compiler's
own stream-control check failing on a graph it built (:mod:`fuseflow.passes.stream_control`).
"""

from __future__ import annotations

import traceback
from collections import Counter
from dataclasses import dataclass, field

from fuseflow.passes.base import ChoiceEnum


class Outcome(ChoiceEnum):
    """How one fuzz case ended."""

    OK = "ok"
    WRONG = "wrong"
    CLEAN_ERROR = "clean error"
    INTERNAL_ERROR = "internal error"
    HANG = "hang"
    CRASH = "crash"
    INVALID = "invalid"
    """The generated case is not a valid model: PyTorch itself rejects it."""
    STRUCTURAL_ZERO = "ok, structural zeros"
    """Matches PyTorch wherever PyTorch's dense result is finite; where it is inf or NaN, a
    sparse input's absent entries annihilated a product with inf or NaN (0 * inf), as
    ``torch.sparse`` computes and FuseFlow documents (docs/supported-ops.md), where dense
    PyTorch gives NaN."""


FAILURES = (Outcome.WRONG, Outcome.INTERNAL_ERROR, Outcome.HANG, Outcome.CRASH)
"""Outcomes a fuzzing campaign must not produce."""


@dataclass(frozen=True)
class Report:
    """One case's outcome, the stage it ended in and a one-line detail (the error's text)."""

    outcome: Outcome
    stage: str = ""
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURES


def user_message(err: BaseException) -> str:
    """The user-level message of a clean error, or ``""`` when ``err`` is not one."""
    from fuseflow import mlir
    from fuseflow.errors import FuseFlowError

    if isinstance(err, FuseFlowError):
        return err.message.strip()
    if isinstance(err, mlir.MLIRError):
        located = [d for d in err.error_diagnostics if str(d.location) != "loc(unknown)"]
        return located[0].message.strip() if located else ""
    return ""


def classify_error(err: BaseException, stage: str, simulator_errors=()) -> Report:
    """The report of a case that raised ``err`` in ``stage``; ``simulator_errors`` are error
    classes that mean the compiler produced a graph the simulator rejects (internal)."""
    from fuseflow.passes.stream_control import TAG

    message = user_message(err)
    if message and not isinstance(err, tuple(simulator_errors)) and TAG not in str(err):
        return Report(Outcome.CLEAN_ERROR, stage, f"{type(err).__name__}: {message}")
    frames = traceback.extract_tb(err.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return Report(Outcome.INTERNAL_ERROR, stage, f"{type(err).__name__}: {err}{where}")


@dataclass
class Tally:
    """Counts of outcomes over a campaign and the failing cases' details."""

    counts: Counter = field(default_factory=Counter)
    failures: list[tuple[object, Report]] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    """Clean errors by their first line, to see what is rejected most."""
    rejected: list = field(default_factory=list)
    """The cases whose clean error was raised while compiling (valid models rejected as
    unsupported), with the error's shape: which seeds a rejection fraction counts."""

    def add(self, case, report: Report) -> None:
        self.counts[report.outcome.value] += 1
        if report.failed:
            self.failures.append((case, report))
        elif report.outcome is Outcome.CLEAN_ERROR:
            self.errors[_shape_of(report.detail)] += 1
            if report.stage == "compile":
                self.rejected.append((case, _shape_of(report.detail)))

    @property
    def rejected_fraction(self) -> float:
        """Rejected models among the valid ones (PyTorch runs them)."""
        valid = self.total - self.counts[Outcome.INVALID.value]
        return len(self.rejected) / valid if valid else 0.0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict:
        return {"cases": self.total,
                "counts": {o.value: self.counts[o.value] for o in Outcome},
                "rejected_fraction": round(self.rejected_fraction, 4),
                "clean_errors": dict(self.errors.most_common()),
                "rejected": [[str(c), shape] for c, shape in self.rejected],
                "failures": [{"case": str(c), "outcome": r.outcome.value, "stage": r.stage,
                              "detail": r.detail} for c, r in self.failures]}


def merge_results(results: list[dict]) -> dict:
    """One campaign's JSON result (:meth:`Tally.to_dict` with ``seconds`` and ``first_seed``)
    from those of campaigns run on consecutive seed ranges (a long run split in parts)."""
    parts = sorted(results, key=lambda r: r["first_seed"])
    for a, b in zip(parts, parts[1:]):
        if a["first_seed"] + a["cases"] != b["first_seed"]:
            raise ValueError(f"seeds {a['first_seed']}+{a['cases']} and {b['first_seed']} "
                             "are not consecutive")
    counts, errors = Counter(), Counter()
    for r in parts:
        counts.update(r["counts"])
        errors.update(r["clean_errors"])
    valid = sum(counts.values()) - counts[Outcome.INVALID.value]
    rejected = [x for r in parts for x in r["rejected"]]
    return {"seconds": round(sum(r["seconds"] for r in parts), 1),
            "first_seed": parts[0]["first_seed"], "parts": len(parts),
            "cases": sum(r["cases"] for r in parts),
            "counts": {o.value: counts[o.value] for o in Outcome},
            "rejected_fraction": round(len(rejected) / valid, 4) if valid else 0.0,
            "clean_errors": dict(errors.most_common()), "rejected": rejected,
            "failures": [f for r in parts for f in r["failures"]]}


def _shape_of(detail: str) -> str:
    """An error message without its location and numbers, to group similar errors: the error
    class and the first line of its message that says something (a pass pipeline's failure
    names the diagnostic on a later line, after the op and its call site)."""
    import re

    lines = detail.splitlines() or [""]
    kind, sep, first = lines[0].partition(": ")
    if sep:
        text = next((line for line in [first, *lines[1:]]
                     if line.strip() and not line.rstrip().endswith(":")), first).strip()
        text = re.sub(r"^error: [^(]*\(.*?\)+: ", "", text)
        text = f"{kind}: {re.sub(r'^error: ', '', text)}"
    else:
        text = lines[0]
    text = re.sub(r"loc\(.*?\)", "", text)
    return re.sub(r"\d+", "N", text)[:160]

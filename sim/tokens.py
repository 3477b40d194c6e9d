"""Stream tokens: data payloads and the control tokens of the streaming model.

A stream is a flattened fiber tree (see ``shared/reference/sam-streams.md``). Data tokens are
plain Python values: ``int`` for coordinates and references, ``numpy.float32`` (or ``float``)
for values. Control tokens are instances of :class:`Control`:

- ``Stop(k)`` (printed ``S<k>``): closes the innermost fiber and ``k`` enclosing ones;
- ``DONE`` (``D``): end of the stream;
- ``EMPTY`` (``N``): placeholder for a missing reference or value (data-like: it occupies a
  data position, so :func:`is_data` is false but :func:`is_stop` too);
- ``REPEAT`` (``R``): the repeat signal; a repeat-signal stream is ``R``, ``Stop(0)`` and ``D``.

Control tokens are immutable, hashable and compare by value; ``Stop(k)`` instances are
interned so building one is a dictionary lookup. The simulator's errors live here too.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from fuseflow.errors import FuseFlowError


class SimulationError(FuseFlowError):
    """A simulation that cannot complete; the message names the blocks and channels involved."""


class StreamError(SimulationError):
    """A malformed stream reached a block (wrong token kind, mismatched control structure)."""


class DeadlockError(SimulationError):
    """No block can make progress before all are done (bounded FIFOs or a broken graph).

    ``blocked`` maps each blocked block to the channel it waits on.
    """

    def __init__(self, message: str, blocked: dict[str, str]):
        super().__init__(message)
        self.blocked = blocked


class Control:
    """Base class of control tokens (everything that is not a data payload)."""

    __slots__ = ()


class Stop(Control):
    """``S_k``: closes the current innermost fiber and ``k`` enclosing fibers."""

    __slots__ = ("level",)
    _interned: dict[int, "Stop"] = {}

    def __new__(cls, level: int = 0) -> "Stop":
        tok = cls._interned.get(level)
        if tok is None:
            if not isinstance(level, int) or level < 0:
                raise ValueError(f"stop level must be a non-negative int, got {level!r}")
            tok = super().__new__(cls)
            object.__setattr__(tok, "level", level)
            cls._interned[level] = tok
        return tok

    def __setattr__(self, name, value):
        raise AttributeError("Stop tokens are immutable")

    def __reduce__(self):
        return (Stop, (self.level,))

    def __eq__(self, other):
        return type(other) is Stop and other.level == self.level

    def __hash__(self):
        return hash(("S", self.level))

    def __repr__(self):
        return f"S{self.level}"


class _Named(Control):
    """A singleton control token identified by its letter."""

    __slots__ = ("letter",)

    def __init__(self, letter: str):
        object.__setattr__(self, "letter", letter)

    def __setattr__(self, name, value):
        raise AttributeError("control tokens are immutable")

    def __reduce__(self):
        return (_named, (self.letter,))

    def __repr__(self):
        return self.letter


DONE = _Named("D")
EMPTY = _Named("N")
REPEAT = _Named("R")
_BY_LETTER = {"D": DONE, "N": EMPTY, "R": REPEAT}


def _named(letter: str) -> _Named:
    return _BY_LETTER[letter]


def is_stop(tok) -> bool:
    """True for ``Stop`` tokens."""
    return type(tok) is Stop


def is_data(tok) -> bool:
    """True for data payloads (coordinates, references, values); false for control and ``N``."""
    return not isinstance(tok, Control)


def is_control(tok) -> bool:
    """True for ``Stop``, ``DONE``, ``EMPTY`` and ``REPEAT``."""
    return isinstance(tok, Control)


def parse_token(text: str):
    """Parses one token: ``S3``/``S`` (= ``S0``), ``D``, ``N``, ``R``, an int or a float."""
    if text in _BY_LETTER:
        return _BY_LETTER[text]
    if text[0] == "S" and (len(text) == 1 or text[1:].isdigit()):
        return Stop(int(text[1:]) if len(text) > 1 else 0)
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"cannot parse stream token {text!r}; expected an int, a float, "
                         "S<k>, D, N or R") from None


def stream(text: str) -> list:
    """Parses a compact stream, e.g. ``stream("0 1 S0 D") == [0, 1, Stop(0), DONE]``."""
    return [parse_token(t) for t in text.split()]


def format_token(tok) -> str:
    """Formats one token the way the spec prints it (``S0``, ``D``, ``N``, ``R``, ``3``, ``1.5``)."""
    if isinstance(tok, Control):
        return repr(tok)
    if isinstance(tok, (int, np.integer)) and not isinstance(tok, bool):
        return str(int(tok))
    if isinstance(tok, np.ndarray) and tok.ndim:  # a tile: its values, row-major
        return "[" + ",".join(format_token(v) for v in tok) + "]"
    value = float(tok)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return f"{int(value)}.0"
    return repr(value)


def format_stream(tokens: Iterable) -> str:
    """Formats a stream as a space-separated string, the inverse of :func:`stream`."""
    return " ".join(format_token(t) for t in tokens)

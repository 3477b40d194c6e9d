"""Whole streams as numpy arrays, and the vectorized clock recurrence of the fast engine.

A :class:`Stream` holds one channel's tokens as three parallel arrays: ``code`` (int8: a stop
level ``k >= 0`` for ``S_k``, or one of ``DATA``, ``EMPTY``, ``DONE``, ``REPEAT``), ``data``
(the payload of data tokens: coordinates as int16 where they fit, references as int32, or
int64 where a value does not fit; float32 values; 0 elsewhere) and ``time`` (int32 stamps,
``TIME_DTYPE``). That is at most 9 bytes per token; streams of one block often share their
code or stamp arrays, and blocks that keep up with their inputs pass a producer's stamp array
on with an offset. Every clock computation checks first that its stamps stay within their
type (:func:`check_stamps`); a kernel whose clocks outgrow int32 is simulated again with int64
stamps (:func:`wide_stamps`, 4 more bytes per token), so the fast engine has no cycle limit.

Timing. A block's clock after its step ``t`` obeys ``c_t = max(c_(t-1) + II, a_t)`` with
``c_(-1) + II = 0`` and ``a_t`` the latest stamp the step received or peeked. Because a
block's clock is never below a stamp it has received, ``a_t`` may be replaced by the running
maximum of the stamps received so far (or by the raw stamps: the result is the same), and the
recurrence is a cumulative maximum, ``c_t = II*t + max(0, max_(j<=t) (a_j - II*j))``, which
the engine computes as one compiled loop (:func:`clocks_of`, ``fast_native``).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from fuseflow.sim.engines import fast_native
from fuseflow.sim.engines.host_heap import available_bytes
from fuseflow.sim.tokens import DONE, EMPTY, REPEAT, Control, SimulationError, Stop

DATA, EMPTY_CODE, DONE_CODE, REPEAT_CODE = -1, -2, -3, -4
CODE_DTYPE = np.int8
TIME_DTYPE = np.int32
"""Stamps: exact while every clock stays at most ``MAX_STAMP`` (checked). int32 by default;
int64 inside :func:`wide_stamps`."""
MAX_STAMP = int(np.iinfo(TIME_DTYPE).max)
_INT32_MAX = int(np.iinfo(np.int32).max)
_INT16_MAX = int(np.iinfo(np.int16).max)
_CODE_OF = {DONE: DONE_CODE, EMPTY: EMPTY_CODE, REPEAT: REPEAT_CODE}
_TOKEN_OF = {DONE_CODE: DONE, EMPTY_CODE: EMPTY, REPEAT_CODE: REPEAT}


class Stream:
    """One channel's tokens and stamps as parallel arrays (see the module docstring).

    The stamps are ``base + shift``: a block that never falls behind its input stamps its
    outputs with the input's stamps plus its latency, and shares the input's array.
    """

    __slots__ = ("code", "_data", "rows", "base", "shift", "monotone", "gap", "closed")

    def __init__(self, code: np.ndarray, data: np.ndarray | None, time: np.ndarray, monotone: bool = False,
                 gap: int = 0, shift: int = 0, rows: tuple | None = None):
        self.code = code
        self._data = data
        self.rows = rows
        """``(refs, n, dtype)`` when the payload is a dense scan's child references, laid out as
        one row per reference r (``r*n + j`` for ``j < n``, then the close's 0) and a final 0:
        built only if :attr:`data` is read (a value array reads whole rows instead)."""
        self.base = time
        self.shift = shift
        self.monotone = monotone
        """Stamps known to be non-decreasing (every vectorized block's outputs)."""
        self.gap = gap
        """With ``monotone``: consecutive stamps differ by at least this (0 if unknown)."""
        self.closed: Stream | None = None
        """This stream followed by a ``D`` (a chunked run's piece, with the synthetic ``D`` its
        producer ran on; its stamp may break :attr:`gap`), if known."""

    def __len__(self) -> int:
        return len(self.code)

    @property
    def data(self) -> np.ndarray:
        """The payload array (built from :attr:`rows` on first use)."""
        if self._data is None:
            self._data = dense_rows(*self.rows)[:len(self.code)]
        return self._data

    def head(self, n: int) -> "Stream":
        """The first ``n`` tokens (views). A dense scan's rows stay rows when only the final
        token is dropped (:attr:`rows`: the payload is that layout cut to the stream's length)."""
        if n >= len(self):
            return self
        rows = self.rows if self._data is None and n == len(self) - 1 else None
        data = None if rows is not None else self.data[:n]
        out = Stream(self.code[:n], data, self.base[:n], self.monotone, self.gap, self.shift, rows)
        return out

    def tail(self, n: int) -> "Stream":
        """The tokens from index ``n`` on, copied (a leftover kept across chunks must not hold on
        to the whole array it came from), into arrays one token longer that close it with a
        ``D`` stamped like its last token (:attr:`closed`)."""
        return _with_closed(self.code[n:], self.data[n:], self.time[n:], self.monotone, self.gap)

    def after(self, n: int) -> "Stream | None":
        """The tokens from index ``n`` on as views (no copy: they hold on to the whole arrays),
        with :attr:`closed` as a view of this stream's closed form; None when the payload is
        a dense scan's rows not built yet (a view would build them all)."""
        if self._data is None:
            return None
        out = Stream(self.code[n:], self._data[n:], self.base[n:], self.monotone, self.gap,
                     self.shift)
        c = self.closed
        if c is not None and c._data is not None:
            out.closed = Stream(c.code[n:], c._data[n:], c.base[n:], c.monotone, c.gap, c.shift)
        return out

    def tokens(self) -> list:
        """The tokens as the reference engine sends them (ints, ``numpy.float32``, controls)."""
        payload = list(self.data) if self.data.dtype == np.float32 else self.data.tolist()
        if self.data.ndim > 1:  # tiles: one array per token (copies: tokens outlive the stream)
            payload = [t.copy() for t in self.data]
        return [payload[i] if c == DATA else (_TOKEN_OF[c] if c < 0 else Stop(c))
                for i, c in enumerate(self.code.tolist())]

    @property
    def time(self) -> np.ndarray:
        """The stamps (a new array when shifted)."""
        return self.base + TIME_DTYPE(self.shift) if self.shift else self.base

    def pairs(self) -> list[tuple]:
        """``(token, stamp)`` pairs, the reference engine's trace of a channel."""
        return list(zip(self.tokens(), self.time.tolist()))

    def runmax(self) -> np.ndarray:
        """Running maximum of the stamps: what a consumer's clock has reached after each token."""
        base, shift = self.runmax_parts()
        return base + TIME_DTYPE(shift) if shift else base

    def runmax_parts(self) -> tuple[np.ndarray, int]:
        """:meth:`runmax` as ``(array, shift)``, its values ``array + shift``."""
        if self.monotone or not len(self.base):
            return self.base, self.shift
        return np.maximum.accumulate(self.base), self.shift

    def same_stamps(self, other: "Stream") -> bool:
        """Whether both streams hold the same stamps."""
        return (self.base is other.base and self.shift == other.shift) or np.array_equal(self.time, other.time)


def absent_as_zero(s: Stream) -> Stream:
    """``s`` with its ``N`` tokens read as the value 0.0: a reducer or an accumulator reads an
    absent entry (an array's ``N``, which only the ALU's products treat apart) as
    a data token holding 0.0, step included."""
    if not count_code(s.code, EMPTY_CODE):
        return s
    empty = s.code == EMPTY_CODE
    data = s.data.copy()
    data[empty] = 0
    return Stream(np.where(empty, DATA, s.code).astype(CODE_DTYPE), data, s.base, s.monotone, s.gap, s.shift)


def concat(streams: list[Stream]) -> Stream:
    """One stream of consecutive pieces of a channel (the pieces themselves when only one).

    The payload dtype is taken from the pieces that hold data tokens (a piece of control tokens
    only may carry a placeholder dtype): float32 if any holds values, else the widest integer.
    """
    streams = [s for s in streams if len(s)] or streams[:1]
    if len(streams) == 1:
        return streams[0]
    typed = ([s.data.dtype for s in streams if fast_native.contains(s.code, DATA)]
             or [streams[0].data.dtype])
    dtype = np.float32 if any(t.kind == "f" for t in typed) else np.result_type(*typed)
    tile = next((s.data.shape[1:] for s in streams if s.data.ndim > 1), ())
    if tile:  # pieces of control tokens only may hold scalar placeholders
        streams = [s if s.data.shape[1:] == tile else
                   Stream(s.code, np.zeros((len(s),) + tile, np.float32), s.time, s.monotone, s.gap)
                   for s in streams]
    time = np.concatenate([s.time for s in streams])
    monotone = all(s.monotone for s in streams)
    gap = 0
    if monotone:
        steps = [int(b.base[0]) + b.shift - int(a.base[-1]) - a.shift for a, b in zip(streams, streams[1:])]
        monotone = min(steps) >= 0
        gap = min([s.gap for s in streams] + steps) if monotone else 0
    return Stream(np.concatenate([s.code for s in streams]),
                  np.concatenate([s.data.astype(dtype, copy=False) for s in streams]), time, monotone, gap)


def _with_closed(code: np.ndarray, data: np.ndarray, time: np.ndarray, monotone: bool, gap: int) -> Stream:
    """A stream of copies of ``code``, ``data`` and ``time`` whose :attr:`Stream.closed` is
    the same arrays with a ``D`` after them, stamped like the last token (0 if none)."""
    n = len(code)
    full_code = np.empty(n + 1, dtype=CODE_DTYPE)
    full_code[:n] = code
    full_code[n] = DONE_CODE
    full_data = np.empty((n + 1,) + data.shape[1:], dtype=data.dtype)
    full_data[:n] = data
    full_data[n] = 0
    full_time = np.empty(n + 1, dtype=time.dtype)
    full_time[:n] = time
    full_time[n] = time[n - 1] if n else 0
    s = Stream(full_code[:n], full_data[:n], full_time[:n], monotone, gap)
    s.closed = Stream(full_code, full_data, full_time, monotone, 0)
    return s


def with_done(s: Stream, stamp: int | None = None, codes: tuple[int, ...] = (DONE_CODE,)) -> Stream:
    """``s`` followed by a ``D`` stamped ``stamp``, by default like its last token (the end of a
    partial stream a block is run on; no stamp gap is assumed). A dense scan's rows are kept.
    ``codes``: the synthetic tokens appended (a unit's close and ``D``), in one copy."""
    n, m = len(s), len(codes)
    last = (int(s.base[-1]) + s.shift) if n else 0
    if stamp is not None:
        last = stamp
    code = np.empty(n + m, dtype=CODE_DTYPE)
    code[:n] = s.code
    code[n:] = codes
    time = np.empty(n + m, dtype=TIME_DTYPE)
    np.add(s.base, TIME_DTYPE(s.shift), out=time[:n])
    time[n:] = last
    monotone = s.monotone and (not n or last >= int(time[n - 1]))
    if m == 1 and s.rows is not None and s._data is None and n == len(s.rows[0]) * (s.rows[1] + 1):
        return Stream(code, None, time, monotone, 0, rows=s.rows)
    data = np.empty((n + m,) + s.data.shape[1:], dtype=s.data.dtype)  # one pass, no memset
    data[:n] = s.data
    data[n:] = 0
    return Stream(code, data, time, monotone, 0)


def raise_stamps(s: Stream, floor: int, owned: bool = False) -> Stream:
    """``s`` with every stamp below ``floor`` raised to it: a block whose clock is already
    ``floor`` sees the stream as it would had it started at that clock (``docs/timing.md``).

    Monotone stamps below the floor are a prefix (found by bisection): only it is raised, the
    rest copied as is.
    ``owned``: ``s``'s stamp array was made for the caller alone (no other stream, view or
    later piece reads it), so it is raised in place; else a new array is made.
    """
    if not len(s) or floor <= 0:
        return s
    low = int(s.base[0]) if s.monotone else int(s.base.min())
    if low + s.shift >= floor:
        return s
    bound = TIME_DTYPE(floor - s.shift)  # the stamps are base + shift
    dtype = np.result_type(s.base, bound)
    in_place = owned and dtype == s.base.dtype
    if s.monotone:
        below = int(np.searchsorted(s.base, bound))
        time = s.base if in_place else np.empty(len(s.base), dtype)
        time[:below] = bound
        if not in_place:
            time[below:] = s.base[below:]
    else:
        time = np.maximum(s.base, bound, out=s.base if in_place else None)
    return Stream(s.code, s._data, time, s.monotone, 0, shift=s.shift, rows=s.rows)


def dense_rows(refs: np.ndarray, n: int, dtype) -> np.ndarray:
    """The child references of dense fibers of size n under ``refs``, one row of n + 1 per
    reference (the close's payload 0) and a final 0 (see :attr:`Stream.rows`)."""
    out = np.zeros(len(refs) * (n + 1) + 1, dtype=dtype)
    grid = out[:-1].reshape(len(refs), n + 1)[:, :n]  # filled in place, in one pass: no full-size temporary
    np.add(refs[:, None].astype(dtype) * n, np.arange(n, dtype=dtype), out=grid)
    return out


def arrival_max(streams: list[Stream], out: np.ndarray | None = None) -> np.ndarray:
    """The running maxima of streams read one token each per step, combined: a new array, or
    ``out`` (a temporary of the caller) updated in place."""
    for s in streams:
        base, shift = s.runmax_parts()
        if out is None:
            out = np.add(base, shift, dtype=TIME_DTYPE)
        else:
            out -= TIME_DTYPE(shift)  # max(out, base + shift) without a temporary
            np.maximum(out, base, out=out)
            out += TIME_DTYPE(shift)
    return out


def from_pairs(pairs: list[tuple]) -> Stream:
    """Builds a stream from ``(token, stamp)`` pairs (the output of a coroutine block)."""
    n = len(pairs)
    code = np.empty(n, dtype=CODE_DTYPE)
    time = np.fromiter((s for _, s in pairs), dtype=np.int64, count=n)
    check_stamps(int(time.max()) if n else 0)
    time = time.astype(TIME_DTYPE)
    payload = []
    is_float = False
    tile = next((np.shape(t) for t, _ in pairs if isinstance(t, np.ndarray)), ())
    if tile:  # a stream of tiles: (n, *tile) float32, zeros under controls
        data = np.zeros((n,) + tile, np.float32)
        for i, (tok, _) in enumerate(pairs):
            if isinstance(tok, Control):
                code[i] = tok.level if type(tok) is Stop else _CODE_OF[tok]
            else:
                code[i] = DATA
                data[i] = tok
        return Stream(code, data, time)
    for i, (tok, _) in enumerate(pairs):
        if isinstance(tok, Control):
            code[i] = tok.level if type(tok) is Stop else _CODE_OF[tok]
            payload.append(0)
        else:
            code[i] = DATA
            payload.append(tok)
            is_float = is_float or isinstance(tok, (float, np.floating))
    data = np.array(payload, dtype=np.float32 if is_float else np.int64) if n else np.zeros(0, np.int32)
    if data.dtype == np.int64 and n:
        data = data.astype(index_dtype(int(data.max()), int(data.min())))
    return Stream(code, data, time)


def from_tokens(tokens: list, stamps=None) -> Stream:
    """Builds a stream from tokens (all stamped 0 unless ``stamps`` is given)."""
    stamps = [0] * len(tokens) if stamps is None else stamps
    return from_pairs(list(zip(tokens, stamps)))


def index_dtype(high: int, low: int = 0):
    """The compact integer dtype of coordinates or references in ``[low, high]``."""
    return np.int32 if -_INT32_MAX <= low and high <= _INT32_MAX else np.int64


def coordinate_dtype(high: int, low: int = 0):
    """:func:`index_dtype`, or int16 for coordinates that fit it with room for ``+ 1`` (a block
    that reads coordinates as references may add one to them)."""
    return np.int16 if -_INT16_MAX <= low and high < _INT16_MAX else index_dtype(high, low)


class StampOverflow(SimulationError):
    """A clock would outgrow the stamp type: the fast engine redoes the kernel with
    :func:`wide_stamps`."""


def check_stamps(bound: int) -> None:
    """Raises :class:`StampOverflow` if a clock or stamp may reach ``bound`` > ``MAX_STAMP``."""
    if bound > MAX_STAMP:
        raise StampOverflow(
            f"a clock would reach {bound:,} cycles, more than the {MAX_STAMP:,} the fast engine's "
            f"{np.dtype(TIME_DTYPE).name} stamps hold")


@contextlib.contextmanager
def wide_stamps():
    """Within this context the fast engine stamps tokens with int64 (``TIME_DTYPE`` and
    ``MAX_STAMP`` rebound in this module and in every engine module that imported them)."""
    modules = [m for name, m in list(sys.modules.items())
               if name.startswith("fuseflow.sim.engines") and m is not None
               and getattr(m, "TIME_DTYPE", None) is TIME_DTYPE]
    saved = [(m, m.TIME_DTYPE, getattr(m, "MAX_STAMP", None)) for m in modules]
    try:
        for m in modules:
            m.TIME_DTYPE = np.int64
            if hasattr(m, "MAX_STAMP"):
                m.MAX_STAMP = int(np.iinfo(np.int64).max)
        yield
    finally:
        for m, dtype, bound in saved:
            m.TIME_DTYPE = dtype
            if bound is not None:
                m.MAX_STAMP = bound


_NO_SELECT = np.zeros(0, dtype=np.int64)


def _clocks(arrival: np.ndarray, ii: int, gap: int | None, latency: int, fresh: bool, owned: bool,
            shift: int = 0) -> np.ndarray:
    """Step clocks plus ``latency`` of ``arrival + shift`` (see :func:`step_clocks`): a new
    array, or ``arrival`` itself when ``owned`` (or when nothing is added and not ``fresh``)."""
    n = len(arrival)
    if n == 0:
        return np.zeros(0, dtype=TIME_DTYPE)
    narrow = arrival.dtype == TIME_DTYPE
    if not narrow:
        check_stamps(int(arrival.max()) + shift + ii * n + latency)
    caught_up = gap is not None and gap >= ii  # never behind: the clocks are the arrivals
    if caught_up and not (fresh or latency or shift) and narrow:
        return arrival
    out = arrival if owned and narrow else np.empty(n, dtype=TIME_DTYPE)
    return clocks_of([(arrival, shift)], ii, latency, out, caught_up)


def clocks_of(parts: list[tuple[np.ndarray, int]], ii: int, latency: int, out: np.ndarray,
              caught_up: bool = False, select: np.ndarray | None = None) -> np.ndarray:
    """``out`` (which may be the first part's array) filled with the step clocks plus ``latency``
    of arrivals ``max_i (parts[i][0] + parts[i][1])`` (streams read one token each per step, as
    ``(stamps, shift)``: raw stamps or their running maxima give the same clocks).

    ``c_t = max(c_(t-1) + II, a_t)`` from ``c_(-1) + II = 0``, one compiled loop in int64
    (``fast_native.clocks_1``, ``clocks_2``). ``caught_up`` (the arrivals non-decreasing and at
    least ``II`` apart): the clocks are the arrivals. The stamps are checked without a pass of
    their own: a bound before, the last clock (the largest) after.

    ``select`` (increasing step indices, the last step among them): ``out`` receives only the
    clocks of those steps (a block whose steps mostly emit nothing).
    """
    n = len(parts[0][0])
    if not n:
        return out
    check_stamps(ii * n + max(0, max(sh for _, sh in parts)))
    for a, sh in parts:
        if a.dtype != TIME_DTYPE:
            check_stamps(int(a.max()) + sh + ii * n + latency)
    select = _NO_SELECT if select is None else select
    (a, sa), rest = parts[0], parts[1:]
    if not rest:
        last = fast_native.clocks_1(a, sa, ii, latency, caught_up, out, select)
    else:
        if len(rest) > 1:  # three or more streams: the others' maximum first
            b = np.maximum.reduce([x.astype(np.int64) + sh for x, sh in rest])
            rest = [(b, 0)]
        (b, sb), = rest
        last = fast_native.clocks_2(a, sa, b, sb, ii, latency, caught_up, out, select)
    check_stamps(int(last))
    return out


def step_clocks(arrival: np.ndarray, ii: int, gap: int | None = None) -> np.ndarray:
    """Clock of each step ``t``: ``c_t = max(c_(t-1) + ii, arrival_t)``, starting from 0.

    ``gap``: for a non-decreasing, non-negative ``arrival`` whose consecutive entries differ by
    at least ``gap``; when ``gap >= ii`` the block never falls behind and the clocks are the
    arrivals themselves (returned as is: callers must not modify them).
    """
    return _clocks(arrival, ii, gap, 0, False, False)


def step_stamps(ctx, arrival: np.ndarray, gap: int | None = None, owned: bool = False,
                shift: int = 0) -> np.ndarray:
    """The stamps of what each step emits, ``step_clocks(arrival + shift, ctx.ii, gap) +
    ctx.latency``, as a new array (pass it to :func:`finish` as ``stamps``). ``owned``:
    ``arrival`` is a temporary of the caller, overwritten with the result."""
    return _clocks(arrival, ctx.ii, gap, ctx.latency, True, owned, shift)


def stream_stamps(ctx, s: Stream) -> np.ndarray:
    """:func:`step_stamps` of a block that takes one step per token of ``s`` alone (a new array:
    ``s``'s stamps are left alone)."""
    return step_stamps(ctx, s.base, s.gap if s.monotone else None, shift=s.shift)


def follow_stamps(ctx, *streams: Stream) -> tuple[np.ndarray, int]:
    """Stamps of a block that takes one step per token of ``streams`` (read in lock step, one
    token of each per step), as ``(array, shift)``.

    When the block never falls behind (the streams monotone with a gap of at least the
    interval) and the streams share one stamp array (a producer's stamps passed on with
    offsets), its stamps are that array plus the largest offset and the latency: shared, not
    copied.
    """
    s = streams[0]
    gap = joint_gap(list(streams))
    if gap is not None and gap >= ctx.ii and len(s) and all(t.base is s.base for t in streams):
        shift = max(t.shift for t in streams)
        check_stamps(int(s.base[-1]) + shift + ctx.latency)
        return s.base, shift + ctx.latency
    if len(streams) == 1:
        return stream_stamps(ctx, s), 0
    parts = [(t.base, t.shift) for t in streams]
    return clocks_of(parts, ctx.ii, ctx.latency, np.empty(len(s), dtype=TIME_DTYPE),
                     gap is not None and gap >= ctx.ii), 0


def follow_stamps_at(ctx, streams: list[Stream], select: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`follow_stamps` at the steps ``select`` only (increasing, the last step among
    them), as ``(array, shift)``: no array of every step's stamp."""
    s = streams[0]
    gap = joint_gap(streams)
    if gap is not None and gap >= ctx.ii and len(s) and all(t.base is s.base for t in streams):
        stamps, shift = follow_stamps(ctx, *streams)
        return stamps[select], shift
    parts = [(t.base, t.shift) for t in streams]
    return clocks_of(parts, ctx.ii, ctx.latency, np.empty(len(select), dtype=TIME_DTYPE),
                     gap is not None and gap >= ctx.ii, select), 0


def lockstep_precheck(ctx, a: Stream, b: Stream) -> bool:
    """The stamp checks :func:`follow_stamps_at` makes before its clocks, for a kernel that runs
    the clock recurrence of ``a`` and ``b`` read in lock step itself (``fast_native``'s
    ``clocks_2`` inline); returns its ``caught_up`` flag. The kernel's last clock is checked
    after (``check_stamps``)."""
    gap = joint_gap([a, b])
    caught_up = gap is not None and gap >= ctx.ii
    if caught_up and len(a) and a.base is b.base:  # the stamps are the shared ones, shifted
        check_stamps(int(a.base[-1]) + max(a.shift, b.shift) + ctx.latency)
        return caught_up
    n = len(a)
    if n:
        check_stamps(ctx.ii * n + max(0, a.shift, b.shift))
        for s in (a, b):
            if s.base.dtype != TIME_DTYPE:
                check_stamps(int(s.base.max()) + s.shift + ctx.ii * n + ctx.latency)
    return caught_up


def joint_gap(streams: list[Stream]) -> int | None:
    """The stamp gap of the running maximum over streams read one token each per step (None if
    some stream's stamps may decrease): the maximum of gapped sequences keeps the least gap."""
    if not all(s.monotone for s in streams):
        return None
    return min(s.gap for s in streams)


def final_clock(clocks: np.ndarray, ii: int) -> int:
    """A block's clock after its last step (0 if it took none)."""
    return int(clocks[-1]) + ii if len(clocks) else 0


def ends_with_done(stream: Stream) -> bool:
    """True if ``stream`` holds exactly one ``D``, as its last token."""
    code = stream.code
    if not len(code) or code[-1] != DONE_CODE:
        return False
    # usually no code before the last is as low as D's (only R is lower): no temporary then
    return len(code) == 1 or code[:-1].min() > DONE_CODE or count_code(code[:-1], DONE_CODE) == 0


def has_repeat(code: np.ndarray) -> bool:
    """Whether ``code`` holds an ``R`` (the lowest code: one reduction, no temporary)."""
    return bool(len(code)) and int(code.min()) == REPEAT_CODE


def count_code(code: np.ndarray, c: int) -> int:
    """How many tokens of ``code`` have code ``c`` (one compiled pass, no temporary)."""
    return int(fast_native.count_equal(code, c)) if len(code) else 0


def code_positions(code: np.ndarray, c: int) -> np.ndarray:
    """``flatnonzero(code == c)`` without a boolean temporary (compiled: a count, then the
    positions)."""
    return fast_native.positions_of(code, c)


def finish(ctx, ins: list[Stream], outs: list[Stream], clocks: np.ndarray | None, gap: int = 0,
           steps: int = 0, last: int = 0, stamps: np.ndarray | None = None, shift: int = 0) -> list[Stream]:
    """Records a vectorized block's final clock, steps and token counts; returns ``outs``.

    ``clocks``: every step's clock; or None with ``stamps`` (plus ``shift``), every step's
    emission stamp (:func:`step_stamps`); or None with ``steps`` and the ``last`` step's clock.
    ``gap``: the least difference between consecutive stamps of every output (an output with at
    most one token per step has at least the interval; 0 if unknown).
    """
    if stamps is not None:
        steps, last = len(stamps), (int(stamps[-1]) + shift - ctx.latency if len(stamps) else -ctx.ii)
    elif clocks is not None:
        steps, last = len(clocks), (int(clocks[-1]) if len(clocks) else -ctx.ii)
    ctx.clock = last + ctx.ii if steps else 0
    ctx.stats.steps = steps
    for name, s in zip(ctx.block.inputs, ins):
        ctx.stats.tokens_in[name] = len(s)
    for name, s in zip(ctx.block.outputs, outs):
        ctx.stats.tokens_out[name] = len(s)
        s.monotone = True  # stamped from step clocks, which never decrease
        s.gap = gap
    return outs


def payload_zeros(n: int, like: np.ndarray) -> np.ndarray:
    """``n`` zero payloads of ``like``'s kind: scalars, or tiles of its tile shape."""
    return np.zeros((n,) + like.shape[1:], dtype=like.dtype)


def copy_of(s: Stream, keep: np.ndarray, time: np.ndarray, shift: int = 0) -> Stream:
    """The tokens of ``s`` selected by ``keep`` (mask or indices), restamped with ``time + shift``."""
    return Stream(s.code[keep], s.data[keep], time, shift=shift)


def held_bytes(streams, seen: set[int] | None = None) -> int:
    """Bytes of the token, payload and stamp arrays of ``streams``, each array counted once
    (``seen``: ids of arrays already counted, updated). A payload not built yet (a dense
    scan's :attr:`Stream.rows`) counts nothing. What the chunked engine keeps its streams to."""
    seen = set() if seen is None else seen
    total = 0
    for s in streams:
        for a in (s.code, s._data, s.base):
            if a is not None and id(a) not in seen:
                seen.add(id(a))
                total += a.nbytes
    return total


class StreamTooLong(SimulationError):
    """A stream longer than the run's ``token_limit``: the fast engine redoes the run in chunks."""

    def __init__(self, block: str, tokens: int):
        super().__init__(f"block '{block}' would emit {tokens:,} tokens, more than one pass may hold")
        self.block = block
        self.tokens = tokens


def ensure_memory(ctx, tokens: int, bytes_per_token: int) -> None:
    """Raises :class:`StreamTooLong` if ``tokens`` exceed the context's ``token_limit``, and a
    ``SimulationError`` naming the block if they would not fit in memory."""
    if ctx.token_limit is not None and tokens > ctx.token_limit:
        raise StreamTooLong(ctx.block.name, tokens)
    need = tokens * bytes_per_token
    if need < 1 << 28:  # small: not worth asking the system
        return
    free = available_bytes()
    if free is not None and need > free:
        raise SimulationError(
            f"block '{ctx.block.name}' ({ctx.block.kind}) would emit {tokens:,} tokens, needing about "
            f"{need / 2**30:.1f} GiB, more than the {free / 2**30:.1f} GiB available to the fast engine")

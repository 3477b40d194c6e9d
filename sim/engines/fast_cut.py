"""Where a block may stop reading a partial stream: the cut rules of the chunked fast engine.

A chunked run hands a block the part of each input stream produced so far. The block runs on a
*piece*: a prefix of every input after which its state is only its clock (no fiber half read,
no lookahead pending), each prefix closed by a synthetic ``D`` stamped like its last token, so
the whole-stream implementations run on it unchanged. The synthetic steps (the ``D`` step, and
for a repeater or a locate the close of a unit still being walked) are the last ``strip`` steps
of the piece; each emits exactly one token on every output, and never waits (their tokens are
stamped no later than what the block has already seen), so the block's clock after the real
steps is its final clock minus ``strip`` intervals. The tokens after each prefix stay pending
for the next piece.

A rule returns None when no complete step can be taken yet. Kinds without a rule here keep
their whole input until it is complete (:data:`STATEFUL` kinds run as a persistent coroutine
instead, see :mod:`fuseflow.sim.engines.fast_chunked`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from fuseflow.sim.blocks.joiner import ref_ports
from fuseflow.sim.engines import fast_native
from fuseflow.sim.engines.fast_reduce import outer_units
from fuseflow.sim.engines.fast_stream import (
    DATA, DONE_CODE, EMPTY_CODE, REPEAT_CODE, Stream, with_done,
)

STATEFUL = frozenset({"crddrop", "crdhold", "join"})
"""Kinds whose state between tokens is more than a clock: run as a coroutine kept alive across
pieces (the fast engine runs them on the reference coroutine anyway)."""


@dataclass
class Piece:
    """What a block runs on next: per input the stream it sees (ending in ``D``) and how many
    real tokens of it it consumes; ``strip`` synthetic steps end the piece.

    The last real step of every piece emits on some output and ends with a send, so a block's
    clock after it is the latest stamp it emitted minus its latency plus its interval, whatever
    the synthetic tokens' stamps (they only delay synthetic steps). A block without outputs (a
    writer) reads its clock after the synthetic steps instead, which never wait.
    """

    ins: list[Stream]
    used: list[int]
    strip: int
    owned: list[bool] | None = None
    """Per input, whether its stream's arrays were made for this piece alone (no other stream,
    view or later piece reads them: its stamps may be raised in place); None: none is."""
    slots: list[tuple[np.ndarray, int, object]] | None = None
    """Entries ``(array, index, value)`` that make the synthetic ``D`` of an input cut inside
    its stream: the input is a view of the stream up to and including the token after the
    cut, which holds the ``D`` while the piece runs (:meth:`closing`); None: no input is."""

    @contextlib.contextmanager
    def closing(self):
        """Writes the borrowed ``D`` tokens (:attr:`slots`) for the duration, then puts the
        tokens they cover back, whatever happens: only the block run on the piece sees them."""
        if not self.slots:
            yield
            return
        saved = [(a, i, a[i].copy()) for a, i, _ in self.slots]
        try:
            for a, i, v in self.slots:
                a[i] = v
            yield
        finally:
            for a, i, old in reversed(saved):
                a[i] = old

    def aliases(self, s: Stream) -> bool:
        """Whether ``s`` may share memory with a borrowed ``D`` (then it must not outlive the
        run: its tokens change back)."""
        return bool(self.slots) and any(
            np.may_share_memory(a, b) for a, _, _ in self.slots
            for b in (s.code, s._data, s.base) if b is not None)


def _owner(code: int) -> bool:
    return code == DATA or code == EMPTY_CODE


def _prefixes(streams: list[Stream], used: list[int], walked: int | None = None, outputs: bool = True
              ) -> Piece | None:
    """Every input cut after ``used[i]`` tokens and closed by a synthetic ``D``.

    ``walked``: an input read unit by unit, whose last unit, if it is a data or ``N`` token,
    peeked the token after it to close: its ``D`` carries that token's stamp. ``outputs``: the
    block has outputs (else its clock is read from its last step, which the ``D``'s stamp
    must not delay: the ``D`` is stamped like the token before it).
    """
    if not any(used):
        return None
    ins: list[Stream | None] = [None] * len(streams)
    owned = [False] * len(streams)
    borrow = _borrowable(streams, used, walked) if outputs else set()
    slots = []
    for i, (s, k) in enumerate(zip(streams, used)):
        peeked = i == walked and 0 < k < len(s) and _owner(int(s.code[k - 1]))
        if k == len(s) and s.closed is not None and i != walked and outputs:
            ins[i] = s.closed  # no copy; its D's stamp matters to no real step (see Piece)
        elif i in borrow:  # the token after the cut becomes the D, stamped like the last one
            ins[i] = _borrowed_view(s, k, (DONE_CODE,), slots, peeked)  # or the one it peeked
        else:
            ins[i] = with_done(s.head(k), int(s.base[k]) + s.shift if peeked else None)
            owned[i] = True  # with_done's arrays are new
    return Piece(ins, used, 1, owned, slots or None)


def _borrowable(streams: list[Stream], used: list[int], walked: int | None) -> set[int]:
    """The inputs cut inside their stream whose ``D`` may be borrowed (:attr:`Piece.slots`)
    instead of appended to a copy (:func:`with_done`): their payload built, and no array shared
    with another input unless both are cut at the same token and neither is the walked input
    (a coordinate and a value stream of one producer share their tokens and stamps: the same
    ``D``; a walked input's may be stamped like the token it peeked)."""
    cut = {i for i, (s, k) in enumerate(zip(streams, used))
           if 0 < k < len(s) and s._data is not None}
    for i in cut:
        for j, t in enumerate(streams):
            if j == i:
                continue
            for a in (streams[i].code, streams[i]._data, streams[i].base):
                for b in (t.code, t._data, t.base):
                    if b is None or not np.may_share_memory(a, b):
                        continue
                    same_d = j in cut and used[j] == used[i] and walked not in (i, j)
                    if not (same_d and _same_start(a, b)):
                        return set()
    return cut


def _same_start(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays index the same memory (entry ``k`` of one is entry ``k`` of the other)."""
    return (a.dtype == b.dtype and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _per_token(ctx, streams, avail):
    """Blocks with one step per token of every input (read in lock step)."""
    return _prefixes(streams, [min(avail)] * len(streams), outputs=bool(ctx.block.outputs))


def _scan(ctx, streams, avail):
    """A data or ``N`` reference's fiber closes only once the next token is known."""
    k = avail[0]
    if k and _owner(int(streams[0].code[k - 1])):
        k -= 1
    return _prefixes(streams, [k], walked=0)


def _last_stop(code: np.ndarray, k: int, low: int = 0) -> int:
    """One past the last stop ``S_j`` (``j >= low``) among the first ``k`` codes, or 0."""
    return int(fast_native.last_at_least(code, k, low))


def _reduce(ctx, streams, avail):
    """Whole fibers: up to the last stop. With the outer coordinates, the stops whose outer
    units are complete (:func:`fuseflow.sim.engines.fast_reduce.outer_units`), as far as each
    unit is the one the reducer reads there (a coordinate with its closing stop exactly under a
    stop ``S_k``, ``k > 0``: else the reference reads the rest, and reports a malformed one)."""
    if len(streams) == 1:
        return _prefixes(streams, [_last_stop(streams[0].code, avail[0])])
    if len(streams) != 2:
        return None
    heads, closes = outer_units(streams[1].code[:avail[1]])
    # a coordinate's unit is complete once the token after it is known
    complete = len(heads) - (1 if len(heads) and heads[-1] == avail[1] - 1
                             and _owner(int(streams[1].code[heads[-1]])) else 0)
    # the value stops the complete units pair with, read no further than the last of them
    stops = np.empty(max(complete, 0), np.int64)
    q = int(fast_native.stop_positions(streams[0].code, avail[0], stops))
    fiber = (streams[1].code[heads[:q]] == DATA) | (streams[1].code[heads[:q]] == EMPTY_CODE)
    wrong = np.flatnonzero(fiber & (closes[:q] != (streams[0].code[stops[:q]] > 0)))
    if len(wrong):
        q = int(wrong[0])
    if not q:
        return None
    return _prefixes(streams, [int(stops[q - 1]) + 1, int(heads[q]) if q < len(heads) else avail[1]])


def _joiner(ctx, streams, avail):
    """Whole fibers of every input: up to the m-th stop of each, m the fewest stops any input
    (with its references) holds."""
    n, ports = ref_ports(ctx)
    lengths = [min([avail[i]] + [avail[p] for p in ports[i]]) for i in range(n)]
    stops = [np.flatnonzero(streams[i].code[:lengths[i]] >= 0) for i in range(n)]
    m = min(len(s) for s in stops)
    if not m:
        return None
    used = [0] * len(streams)
    for i in range(n):
        used[i] = int(stops[i][m - 1]) + 1
        for p in ports[i]:
            used[p] = used[i]
    return _prefixes(streams, used)


def _spacc(ctx, streams, avail):
    """Order 1: up to the last flushing stop (``S_k``, ``k >= 1``) of the inner coordinates."""
    if len(streams) != 2:
        return None
    k = _last_stop(streams[0].code, min(avail), low=1)
    return _prefixes(streams, [k, k])


def _units(code: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Unit heads among the first ``k`` tokens of a stream walked unit by unit (a data or ``N``
    token with the stop it absorbs, or a bare stop), and how many units are complete (a data
    unit is once the token after it is known)."""
    c = code[:k]
    owner = (c == DATA) | (c == EMPTY_CODE)
    absorbed = np.zeros(len(c), dtype=bool)
    absorbed[1:] = owner[:-1] & (c[1:] >= 0)
    heads = np.flatnonzero(~absorbed)
    complete = len(heads) - (1 if len(heads) and owner[heads[-1]] and heads[-1] == k - 1 else 0)
    return heads, complete


def _walk(lead: Stream, lead_avail: int, src: Stream, src_avail: int, lead_first: bool, close: int):
    """Repeater (src, signals) and locate (coordinates, parent references): each lead token acts
    on the current unit of ``src``; the lead's j-th closing token (``close``: the code that ends
    a unit, or any stop) consumes unit j.

    Complete units are consumed with their lead tokens; lead tokens on the next unit, whose head
    is known, are run too, with a synthetic close of that unit (``S0``: a data unit read up to
    its head) and ``D`` after it, the unit itself staying pending.
    """
    lcode = lead.code[:lead_avail]
    heads, complete = _units(src.code, src_avail)
    # the closing tokens of the last complete unit consumed and of the next
    code, at_least = (0, True) if close is None else (close, False)
    count = int(fast_native.count_hits(lcode, code, at_least))
    q = min(count, complete)
    last, after = fast_native.hit_positions(lcode, code, at_least, q - 1, count).tolist()
    lead_used = last + 1 if q else 0
    src_used = int(heads[q]) if q < len(heads) else src_avail
    extra = (after if q < count else lead_avail) - lead_used
    if extra and q < len(heads) and _owner(int(src.code[heads[q]])):
        head = int(heads[q])
        used = [lead_used + extra, src_used] if lead_first else [src_used, lead_used + extra]
        # the lead closed by S0 and D, the source's unit head by D: borrowed or copied
        ends = [(lead, lead_used + extra, (0, DONE_CODE)), (src, head + 1, (DONE_CODE,))]
        if not lead_first:
            ends.reverse()
        borrowed = _borrowed_ends(ends)
        if borrowed is not None:
            ins, slots = borrowed
            return Piece(ins, used, 2, [False, False], slots)
        lead_piece = _close_unit(lead.head(lead_used + extra))
        src_piece = with_done(src.head(head + 1))
        ins = [lead_piece, src_piece] if lead_first else [src_piece, lead_piece]
        return Piece(ins, used, 2, [True, True])  # new arrays (with_done)
    used = [lead_used, src_used] if lead_first else [src_used, lead_used]
    return _prefixes([lead, src] if lead_first else [src, lead], used, walked=None if lead_first else 0)


def _borrowed_ends(ends: list[tuple[Stream, int, tuple[int, ...]]]):
    """Views of streams ``s[:k]`` followed by the synthetic tokens ``codes`` (payload 0,
    stamped like ``s[k - 1]``) written over the tokens after the cut while the piece runs
    (:attr:`Piece.slots`): ``(ins, slots)``, or None when a stream is too short, has no payload
    built, or shares an array with another (then they are copied)."""
    arrays = [(s.code, s._data, s.base) for s, _, _ in ends]
    for i, (s, k, codes) in enumerate(ends):
        if not 0 < k <= len(s) - len(codes) or s._data is None:
            return None
        for other in arrays[i + 1:]:
            if any(np.may_share_memory(a, b) for a in arrays[i] for b in other):
                return None
    slots: list = []
    return [_borrowed_view(s, k, codes, slots) for s, k, codes in ends], slots


def _borrowed_view(s: Stream, k: int, codes: tuple[int, ...], slots: list,
                   peeked: bool = False) -> Stream:
    """A view of ``s[:k]`` and the tokens after it, which hold the synthetic ``codes`` (payload
    0, stamped like ``s[k - 1]``, or like ``s[k]`` when ``peeked``) while the piece runs: their
    entries are added to ``slots``."""
    end = k + len(codes)
    stamp = s.base[k] if peeked else s.base[k - 1]
    for j, code in enumerate(codes):
        slots += [(s.code, k + j, code), (s.data, k + j, 0), (s.base, k + j, stamp)]
    return Stream(s.code[:end], s.data[:end], s.base[:end], s.monotone, 0, s.shift)


def _close_unit(s: Stream) -> Stream:
    """``s`` followed by a synthetic ``S0`` and ``D``, both stamped like its last token."""
    return with_done(s, codes=(0, DONE_CODE))


def _repeat(ctx, streams, avail):
    src, sig = streams
    if np.any(src.code[:avail[0]] == REPEAT_CODE):
        return None
    return _walk(sig, avail[1], src, avail[0], lead_first=False, close=0)


def _locate(ctx, streams, avail):
    crd, ref = streams
    return _walk(crd, avail[0], ref, avail[1], lead_first=True, close=None)


RULES = {
    "broadcast": _per_token, "fork": _per_token, "repsiggen": _per_token, "array": _per_token,
    "alu": _per_token, "level_write": _per_token, "value_write": _per_token,
    "scan": _scan, "reduce": _reduce, "intersect": _joiner, "union": _joiner, "spacc": _spacc,
    "repeat": _repeat, "locate": _locate,
}
"""Cut rule per kind: ``rule(ctx, streams, avail) -> Piece | None`` with ``avail[i]`` the
tokens of input i that may be read (its final ``D`` excluded)."""


def next_piece(ctx, streams: list[Stream], avail: list[int]) -> Piece | None:
    """The next piece ``ctx.block`` can run on, or None (wait for more input)."""
    rule = RULES.get(ctx.block.kind)
    return rule(ctx, streams, avail) if rule is not None else None

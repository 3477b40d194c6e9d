"""The fast engine in chunks: bounded memory whatever the stream length.

A run is a sequence of *rounds*. The scanners of the outermost loop (scans fed by the root,
possibly through broadcasts) run whole in the first round; their output, one outer fiber, is
released a window of outer coordinates per round, and every other block, in topological
order, runs on what its inputs hold so far (:mod:`fuseflow.sim.engines.fast_cut`): the
longest prefix after which its state is its clock alone, the rest kept for the next round.
A block carries its clock across pieces by seeing its next inputs' stamps raised to that
clock, which is exact for the timing model's recurrence (``c_t = max(c_(t-1) + II, a_t)``
starting at the carried clock equals the recurrence from 0 on arrivals raised to it). Kinds
whose state is more than a clock (coordinate droppers and holds, joins) run as reference
coroutines kept alive across rounds; a sparse accumulator of order 2 or more keeps its input
until the input is complete.

Windows grow or shrink so that the longest stream piece of a round stays near the target
(:class:`Chunking`): memory is bounded by the streams of one round, plus the inputs, the
results being written and what blocks keep between rounds. Where a chunk boundary falls
changes nothing in the results, cycles or statistics.

One outer coordinate may expand to far more than the target (a batch of one image whose
decoder emits 5e8 tokens). So the blocks that expand or keep their input are bounded inside a
window as well: a scanner emits at most the target a round (a piece that would emit more is
retried on a shorter prefix of its references, down to one fiber) and stops with the rest
pending, a *backlog*; rounds without a new window run until no block has one. An order-1
sparse accumulator, which may only be cut at a flushing stop, folds what it holds once that
reaches the target and carries the entries it accumulated into its next piece
(:class:`_AccumulatorRunner`).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

import numpy as np

from fuseflow.sim.blocks import IMPLEMENTATIONS
from fuseflow.sim.engines import fast_native, fast_stream, fast_write
from fuseflow.sim.engines.fast_blocks import make_context, simulate
from fuseflow.sim.engines.fast_cut import STATEFUL, Piece, next_piece
from fuseflow.sim.engines.fast_stream import (
    DATA,
    DONE_CODE,
    Stream,
    StreamTooLong,
    concat,
    from_pairs,
    held_bytes,
    raise_stamps,
    wide_stamps,
)
from fuseflow.sim.engines.fast_write import DenseLevelSink
from fuseflow.sim.engines.reference import assemble_outputs
from fuseflow.sim.graph import Block
from fuseflow.sim.stats import BlockStats, KernelResult
from fuseflow.sim.tokens import DeadlockError, SimulationError, StreamError

log = logging.getLogger(__name__)

DEFAULT_MEMORY_BUDGET = 4 << 30
"""Bytes (4 GiB): leaves room on a 24 GB machine for the inputs, the results and a second run."""
STREAM_BYTES_SHARE = 0.25
"""Share of the budget a chunked round's stream pieces may hold at once; the rest is for the
blocks' temporaries while they run (a scanner's are about three times its output)."""
BYTES_PER_STREAM_TOKEN = 64
"""Peak bytes per token of a graph's longest stream: its own 9 bytes and its share of the
other streams alive at the same time and of the blocks' temporaries."""


@dataclass(frozen=True)
class Chunking:
    """How the fast engine bounds its memory.

    A run keeps whole streams while its longest stream stays within ``memory_budget /
    BYTES_PER_STREAM_TOKEN`` tokens; a longer one makes it simulate the outermost loop in
    chunks whose streams stay about half that long.
    """

    memory_budget: int | None = DEFAULT_MEMORY_BUDGET
    """Bytes the streams of one pass may take (None: whole streams, however long)."""
    chunk_tokens: int | None = None
    """Force chunks of about this many tokens per stream piece, every piece cut at most this
    long as well (tiny values put chunk boundaries everywhere: tests); None: from the budget."""

    def __post_init__(self):
        for name in ("memory_budget", "chunk_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")

    def stream_bytes(self) -> int | None:
        """The most bytes of streams a pass may hold at once (None: no limit)."""
        if self.memory_budget is None:
            return None
        return max(1, int(self.memory_budget * STREAM_BYTES_SHARE))

    def stream_tokens(self) -> int | None:
        """The longest stream a whole-stream run may hold (None: no limit)."""
        if self.memory_budget is None:
            return None
        return max(1, self.memory_budget // BYTES_PER_STREAM_TOKEN)


def _always_shared(stamps: np.ndarray, front: Stream) -> bool:
    """:attr:`_PieceRunner.shared` outside a run: anything may share memory (copy to raise)."""
    return True


class _Runner:
    """One block across rounds: pending input pieces, whether each input is complete, carried
    clock and statistics."""

    def __init__(self, block: Block, ctx):
        self.block = block
        self.ctx = ctx
        self.pending: list[list[Stream]] = [[] for _ in block.inputs]
        self.complete = [False] * len(block.inputs)
        self.fresh = True
        self.done = False

    def feed(self, port: int, piece: Stream) -> None:
        self.pending[port].append(piece)
        self.fresh = True

    def finished_input(self, port: int) -> None:
        self.complete[port] = True
        self.fresh = True


class _PieceRunner(_Runner):
    """A block run on pieces (:mod:`fast_cut`) by its whole-stream implementation.

    ``budget``: the output tokens a round may take from it (None: no limit; set on scanners,
    whose output is much longer than their input, and on order-1 accumulators); past it the
    block stops with its remaining input pending and runs again in the next round (a
    *backlog*), so it holds one round's share at a time, however many tokens one outer
    coordinate expands to. A piece whose scanner would emit more than the context's
    ``token_limit`` is retried on a shorter prefix of the input, down to one fiber.
    """

    def __init__(self, block, ctx, split, budget: int | None = None):
        super().__init__(block, ctx)
        self.split = split
        self.size = split
        """The most input tokens a piece looks at first (None: all pending); shrunk when a
        piece emits more than the token limit."""
        self.budget = budget
        self.front = FRONT_TOKENS if split is None else min(FRONT_TOKENS, split)
        """Queued pieces this long are cut alone (:meth:`_fronts`); forced chunks (tests) make
        it as short as they are, so that every piece boundary is exercised."""
        self.limit = ctx.token_limit
        """The most tokens one piece may emit (the context's limit while no piece runs)."""
        self.backlog = False
        self.clock = 0
        self.stats = BlockStats(block.name, block.kind, tokens_in={c: 0 for c in block.inputs},
                                tokens_out={c: 0 for c in block.outputs})
        self.sinks: list = []
        self.shared = _always_shared
        """Whether an array may share memory with the stamps of a stream still to be read
        other than ``front`` (set by :func:`run` for the run; by default always: stamps are
        copied to be raised)."""
        self.fronts: list[Stream] = []
        """Per input, the pending stream the piece being run was cut from."""

    def advance(self) -> list[list[Stream]]:
        """Runs the pieces the pending inputs allow, up to the round's budget; the output
        pieces per output."""
        produced: list[list[Stream]] = [[] for _ in self.block.outputs]
        self.fresh = self.backlog = False
        emitted = [0] * len(self.block.outputs)  # tokens per output this round
        floor = None  # an input prefix this long emitted too many tokens
        while not self.done:
            if self.budget is not None and max(emitted, default=0) >= self.budget:
                self.backlog = self.fresh = True  # the rest in the next round
                break
            streams, rest = self._fronts()
            self.fronts = streams
            piece = self._next_piece(streams)
            if piece is None and any(rest):  # the front pieces hold no step: all of them
                streams = [concat(p) if p else _EMPTY for p in self.pending]
                self.pending = [[s] if len(s) else [] for s in streams]
                rest = [[] for _ in streams]
                self.fronts = streams
                piece = self._next_piece(streams)
            if piece is None:
                break
            outs = None
            used = max(piece.used, default=0)
            if floor is None or used < floor:
                try:
                    outs = self._run(piece)
                except StreamTooLong:
                    if used > 1:
                        floor, self.size = used, used // 2  # try a shorter prefix
                        continue
            if outs is None:  # no shorter cut emits few enough tokens
                if any(emitted):  # over the limit with this round's output already out: next round
                    self.backlog = self.fresh = True
                    break
                outs = self._run_unlimited(piece)  # one fiber is the least a piece can hold
            if self.split is None and self.size is not None and self.limit is not None \
                    and 4 * max((len(o) for o in outs), default=0) <= self.limit:
                self.size *= 2  # a prefix shrunk for a long fiber may grow back
            floor = None
            for j, out in enumerate(outs):
                produced[j].append(out)
                emitted[j] += len(out)
            self.pending = [([s.tail(k)] if k < len(s) else []) + later
                            for s, k, later in zip(streams, piece.used, rest)]
            self.done = piece.strip == 0  # the whole rest of every input, its D included
        return produced

    def _fronts(self) -> tuple[list[Stream], list[list[Stream]]]:
        """Per input, the stream the next piece is cut from and the pieces queued after it.

        A first queued piece of at least :attr:`front` tokens is cut alone: taken whole, it
        runs as its producer closed it (:attr:`Stream.closed`) and nothing is copied. Shorter
        ones are joined with what follows (:func:`concat`), as are all of them when the front
        pieces hold no step (:meth:`advance`).
        """
        streams, rest = [], []
        for pieces in self.pending:
            if len(pieces) > 1 and len(pieces[0]) >= self.front:
                streams.append(pieces[0])
                rest.append(pieces[1:])
            else:
                streams.append(concat(pieces) if pieces else _EMPTY)
                rest.append([])
        self.pending = [[s] + later if len(s) else later for s, later in zip(streams, rest)]
        return streams, rest

    def _next_piece(self, streams: list[Stream]) -> Piece | None:
        """The next piece within the first :attr:`size` tokens of each input, looking further
        (twice as far each time) while no piece fits; None: wait for more input."""
        size = self.size
        while True:
            views = streams if size is None else [s.head(size) for s in streams]
            ended = [bool(len(v)) and v.code[-1] == DONE_CODE for v in views]  # producer done
            if all(ended):
                return Piece(views, [len(s) for s in views], 0)
            piece = next_piece(self.ctx, views, [len(v) - e for v, e in zip(views, ended)])
            seen_all = all(len(v) == len(s) for v, s in zip(views, streams))
            if piece is not None or size is None or seen_all:
                return piece
            size *= 2

    def _run_unlimited(self, piece: Piece) -> list[Stream]:
        """:meth:`_run` without the token limit (what memory allows, checked by the block)."""
        with _token_limit(self.ctx, None):
            return self._run(piece)

    def _run(self, piece: Piece) -> list[Stream]:
        ctx = self.ctx
        ctx.stats = BlockStats(self.block.name, self.block.kind,
                               tokens_in={c: 0 for c in self.block.inputs},
                               tokens_out={c: 0 for c in self.block.outputs})
        ctx.clock = 0
        ctx.sink = []
        with piece.closing():
            full = self._simulate(piece)
        outs = self._real_outputs(piece, full)
        if not piece.strip:
            self.clock = ctx.clock
        elif any(len(o) for o in outs):  # see fast_cut.Piece
            self.clock = max(int(o.base[-1]) + o.shift for o in outs if len(o)) - ctx.latency + ctx.ii
        else:
            self.clock = ctx.clock - piece.strip * ctx.ii
        if piece.strip == 1:
            for o, f in zip(outs, full):
                if not piece.aliases(f):  # a borrowed D is gone after the run
                    o.closed = f
        elif piece.strip == 2:
            for o, f in zip(outs, full):
                o.closed = _without_close(f, piece)
        got, total = ctx.stats, self.stats
        total.steps += got.steps - piece.strip
        for ch, k in zip(self.block.inputs, piece.used):
            total.tokens_in[ch] += int(k)
        for ch, o in zip(self.block.outputs, outs):
            total.tokens_out[ch] += len(o)
        for name in ("ops", "crd_reads", "ref_reads", "val_reads", "crd_writes", "ref_writes", "val_writes"):
            setattr(total, name, getattr(total, name) + int(getattr(got, name)))
        total.cycles = self.clock
        if isinstance(ctx.sink, Stream):  # a level writer's: results never read its stamps
            ctx.sink = Stream(ctx.sink.code, ctx.sink.data, _NO_STAMPS)
        if self.block.kind in ("level_write", "value_write"):
            self._keep(ctx.sink)
        return outs

    def _simulate(self, piece: Piece) -> list[Stream]:
        """The block's outputs on ``piece``, from its carried clock."""
        # a piece run again (past the token limit) is raised again to the same clock: no change
        owned = piece.owned or [False] * len(piece.ins)
        return simulate(self.ctx, [self._raised(s, o, front)
                                   for s, o, front in zip(piece.ins, owned, self.fronts)])

    def _raised(self, s: Stream, owned: bool, front: Stream) -> Stream:
        """``s`` seen from the carried clock (:func:`raise_stamps`). A stream cut from
        ``front`` is raised in place too when no stream still to be read shares its stamps:
        the tokens it holds are this piece's alone, the rest of ``front`` is copied after."""
        if not owned and len(s) and self.clock > 0 \
                and not (s.monotone and int(s.base[0]) + s.shift >= self.clock):
            owned = not self.shared(s.base, front)
        return raise_stamps(s, self.clock, owned)

    @staticmethod
    def _real_outputs(piece: Piece, full: list[Stream]) -> list[Stream]:
        """What the piece's real steps emitted (its synthetic steps emit one token each)."""
        return [o.head(len(o) - piece.strip) for o in full]

    def _keep(self, sink) -> None:
        """Keeps a writer's sink of one piece; a dense level's in a :class:`DenseLevelSink`."""
        if self.sinks and isinstance(self.sinks[0], DenseLevelSink):
            if isinstance(sink, Stream):
                self.sinks[0].add(sink)
                return
            self.sinks[0] = self.sinks[0].stream()  # a reference fallback's tokens: parse all
        elif not self.sinks and isinstance(sink, Stream) and self.block.kind == "level_write":
            size = _dense_level_size(self.ctx)
            if size is not None:
                self.sinks.append(DenseLevelSink(size))
                self.sinks[0].add(sink)
                return
        self.sinks.append(sink)

    def finish(self) -> None:
        """Leaves the context as a whole-stream run would (clock, statistics, writer sink)."""
        self.ctx.clock = self.clock
        self.ctx.stats = self.stats
        if self.sinks and isinstance(self.sinks[0], DenseLevelSink):
            dense = self.sinks[0]
            self.ctx.sink = dense if dense.in_storage_order else _joined_sink(dense.pieces)
        elif self.block.kind in ("level_write", "value_write"):
            self.ctx.sink = _joined_sink(self.sinks)


@dataclass
class _FoldPiece(Piece):
    """Inputs of an order-1 sparse accumulator inside one reduction (no flushing stop): run
    closed by a synthetic ``S1`` (which flushes what it accumulated) and ``D``, whose outputs
    become the entries it carries, not tokens."""


class _AccumulatorRunner(_PieceRunner):
    """An order-1 sparse accumulator, which may be cut inside a reduction.

    Its cut rule waits for a flushing stop; a reduction longer than the round's budget (an
    output row summing millions of products) would keep all its input until then. Instead the
    accumulator *folds* what it holds: the entries accumulated so far (coordinate and float32
    sum, in key order) are carried, and the next piece runs with them in front as pairs of its
    own, stamped 0, its real tokens delayed by as many steps. A fresh accumulator fed the
    carried pairs first holds exactly the carried sums (0.0 plus a sum is that sum) and adds
    the next values to them in arrival order, as the whole reduction would; its steps on them
    are taken off its clock, stamps, steps and operations.
    """

    def __init__(self, block, ctx, split, budget=None):
        super().__init__(block, ctx, split, budget)
        self.carry: list[Stream] | None = None
        """Per output, the entries accumulated in the open reduction (data tokens only)."""

    def _fronts(self) -> tuple[list[Stream], list[list[Stream]]]:
        """As :meth:`_PieceRunner._fronts`, but an open reduction (a leftover after the last
        flush, or a first queued piece without a flushing stop) followed by a long piece is
        joined with that piece up to its first flushing stop only: the piece cut there holds
        the whole joined prefix, and the long piece's rest, a view, is cut alone next (joined
        whole, every token of it would be copied once more)."""
        split = self._reduction_joined()
        if split is None:
            return super()._fronts()
        streams, rest = split
        self.pending = [[s] + later for s, later in zip(streams, rest)]
        return streams, rest

    def _reduction_joined(self) -> tuple[list[Stream], list[list[Stream]]] | None:
        """Per input, the open reduction joined with the long piece after it up to the first
        flush of the coordinates' long piece, and the queued rest; None when the queues do
        not start with an open reduction and a long piece (or the payload is a dense scan's
        rows)."""
        if len(self.pending) != 2 or any(len(pieces) < 2 for pieces in self.pending):
            return None
        left, long = self.pending[0][:2]
        if not len(left) or len(long) < self.front:
            return None
        if len(left) >= self.front and fast_native.first_at_least(left.code, 1):
            return None  # a long piece with a flush: cut alone
        if self.budget is not None and any(len(p[0]) >= self.budget for p in self.pending):
            return None  # a reduction holding the round's budget folds (_next_piece)
        first = int(fast_native.first_at_least(long.code, 1))
        if not first:
            return None
        end = len(left) + first  # tokens of the joined prefix, in lock step
        streams, rest = [], []
        for left, long, *later in self.pending:
            k = end - len(left)
            if not 0 < k < len(long):
                return None
            after = long.after(k)
            if after is None:
                return None
            streams.append(concat([left, long.head(k)]))
            rest.append([after] + later)
        return streams, rest

    def _next_piece(self, streams: list[Stream]) -> Piece | None:
        piece = super()._next_piece(streams)
        if piece is not None or self.budget is None:
            return piece
        ended = [bool(len(s)) and s.code[-1] == DONE_CODE for s in streams]
        n = min(len(s) - e for s, e in zip(streams, ended))  # read in lock step
        if n < self.budget and not self._fold_alone(streams, n):
            return None  # not worth folding yet: wait for the flush
        return _FoldPiece([s.head(n) for s in streams], [n, n], 2)  # closed when run

    def _fold_alone(self, streams: list[Stream], n: int) -> bool:
        """Whether to fold long first pieces with more queued behind them (cut alone by
        :meth:`_fronts`) before the round's budget: without a flush they would be joined with
        everything queued (:meth:`advance`), one more copy of every token, to fold it then.
        Not while the entries carried in front would be a good part of the piece."""
        carried = len(self.carry[0]) if self.carry else 0
        return n >= 4 * carried and all(len(p) > 1 and p[0] is s for p, s in zip(self.pending, streams))

    def _simulate(self, piece: Piece) -> list[Stream]:
        ctx = self.ctx
        fold = isinstance(piece, _FoldPiece)
        carry = self.carry or [None] * len(piece.ins)
        k = len(carry[0]) if carry[0] is not None else 0
        if not (k or fold):
            return super()._simulate(piece)
        delay = k * ctx.ii
        ins = [_carried_before(c, s, self.clock, delay, fold) for c, s in zip(carry, piece.ins)]
        full = simulate(ctx, ins)
        for o in full:
            o.shift -= delay
        ctx.clock -= delay
        ctx.stats.steps -= k
        if k:
            ctx.stats.ops -= k * int(np.prod(carry[1].data.shape[1:], dtype=np.int64))
        return full

    def _real_outputs(self, piece: Piece, full: list[Stream]) -> list[Stream]:
        if not isinstance(piece, _FoldPiece):
            self.carry = None
            return super()._real_outputs(piece, full)
        entries = len(full[0]) - 2  # the synthetic S1 flushed them, then S0 and D
        self.carry = None
        if entries:
            zeros = np.zeros(entries, fast_stream.TIME_DTYPE)
            codes = np.full(entries, DATA, np.int8)
            self.carry = [Stream(codes, o.data[:entries].copy(), zeros, True) for o in full]
        return [_EMPTY for _ in full]


def _without_close(full: Stream, piece: Piece) -> Stream | None:
    """The real outputs of a piece closed by two synthetic steps (a walked unit's close, then
    ``D``) followed by the ``D`` step's token alone: written over the close's token, where the
    output's arrays are the block's own (none is a view of an input); else None."""
    if full._data is None or len(full) < 2:
        return None
    mine = (full.code, full._data, full.base)
    if any(np.may_share_memory(a, b) for s in piece.ins for b in (s.code, s._data, s.base)
           if b is not None for a in mine):
        return None
    for a in mine:
        a[-2] = a[-1]
    return full.head(len(full) - 1)


def _carried_before(carried: Stream | None, s: Stream, clock: int, delay: int,
                    close: bool) -> Stream:
    """One stream, in one allocation: the ``carried`` entries stamped 0, then ``s`` with its
    stamps raised to ``clock`` and ``delay`` later, then (``close``) a synthetic ``S1`` and
    ``D`` stamped like its last token."""
    k = len(carried) if carried is not None else 0
    n = len(s)
    m = k + n + (2 if close else 0)
    dtype = s.data.dtype if not k else np.result_type(carried.data.dtype, s.data.dtype)
    stamp = fast_stream.TIME_DTYPE
    code = np.empty(m, s.code.dtype)
    data = np.empty((m,) + s.data.shape[1:], dtype=dtype)  # every entry is written: no memset
    time = np.empty(m, stamp)
    if k:
        code[:k] = DATA
        data[:k] = carried.data
        time[:k] = 0
    code[k:k + n] = s.code
    data[k:k + n] = s.data
    np.maximum(s.base, stamp(clock - s.shift), out=time[k:k + n])
    time[k:k + n] += stamp(s.shift + delay)
    if close:
        code[-2:] = (1, DONE_CODE)
        data[-2:] = 0
        time[-2:] = time[k + n - 1] if k + n else 0
    return Stream(code, data, time, s.monotone)


class _CoroutineRunner(_Runner):
    """A block whose state is more than a clock: its reference coroutine, resumed whenever new
    tokens arrive, until it waits on an input that has none yet."""

    def __init__(self, block, ctx):
        super().__init__(block, ctx)
        self.gen = IMPLEMENTATIONS[block.kind](ctx)

    def feed(self, port: int, piece: Stream) -> None:
        self.ctx._ins[port].queue.extend(piece.pairs())
        self.fresh = True

    def advance(self) -> list[list[Stream]]:
        self.fresh = False
        ctx = self.ctx
        while not self.done:
            try:
                wait = self.gen.send(None)
            except StopIteration:
                self.done = True
                left = [f"'{c.name}' ({len(c.queue)} tokens, consumer '{self.block.name}')"
                        for c in ctx._ins if c.queue]
                if left:
                    raise StreamError("blocks finished with unconsumed tokens on " + ", ".join(left)) from None
                break
            except SimulationError:
                raise
            except Exception as exc:
                raise SimulationError(f"block '{self.block.name}' ({self.block.kind}): {exc!r}") from exc
            ch = wait[1]
            if not ch.queue:
                if self.complete[ctx._ins.index(ch)]:
                    raise DeadlockError(
                        f"deadlock: '{self.block.name}' waits for a token on channel '{ch.name}' "
                        f"from '{ch.producer}' (its producer has finished: the stream ended early)",
                        {self.block.name: ch.name})
                break
        produced = []
        for ch in ctx._outs:
            produced.append([from_pairs(ch.trace)] if ch.trace else [])
            ch.trace = []
        return produced

    def finish(self) -> None:
        self.ctx.stats.cycles = self.ctx.clock


@contextlib.contextmanager
def _token_limit(ctx, limit: int | None):
    """``ctx.token_limit`` set to ``limit`` for the duration."""
    saved, ctx.token_limit = ctx.token_limit, limit
    try:
        yield
    finally:
        ctx.token_limit = saved


FRONT_TOKENS = 1 << 16
"""Queued pieces at least this long are cut one at a time instead of joined first: joining
copies every token once more, while a short piece costs a block call more than its copy."""

_EMPTY = Stream(np.zeros(0, np.int8), np.zeros(0, np.int32), np.zeros(0, np.int32), True, 0)


_NO_STAMPS = np.zeros(0, np.int32)


def _drain_concat(parts: list, dtype) -> np.ndarray:
    """``np.concatenate(parts)`` cast to ``dtype``, dropping each part from ``parts`` once it is
    copied (a part nothing else holds is freed before the next is copied)."""
    total = sum(len(p) for p in parts)
    out = np.empty((total,) + parts[0].shape[1:], dtype=dtype)
    at = 0
    for i in range(len(parts)):
        part, parts[i] = parts[i], None
        out[at:at + len(part)] = part
        at += len(part)
        del part
    return out


def _joined_sink(sinks: list):
    """A writer's sink from the sinks of its pieces (streams without stamps and arrays, or
    token lists); a level writer's stream gets stamps 0 (untouched zero pages: no memory).

    Empties ``sinks``: each piece is let go as soon as it is copied, so joining a result takes
    about its own size once more, not twice.
    """
    if all(isinstance(s, Stream) for s in sinks):
        if not sinks:
            return _EMPTY
        typed = [s.data.dtype for s in sinks if np.any(s.code == DATA)] or [sinks[0].data.dtype]
        code = np.concatenate([s.code for s in sinks])
        parts = [s.data for s in sinks]
        sinks.clear()
        return Stream(code, _drain_concat(parts, np.result_type(*typed)), np.zeros(len(code), np.int32))
    if all(isinstance(s, np.ndarray) for s in sinks):
        if not sinks:
            return np.zeros(0, np.float32)
        parts = list(sinks)
        sinks.clear()
        return _drain_concat(parts, np.result_type(*parts))
    out: list = []
    for s in sinks:
        out.extend(s.tokens() if isinstance(s, Stream) else list(s))
    return out


def _dense_level_size(ctx) -> int | None:
    """The size of the dense level a level writer writes, or None (not dense, or malformed)."""
    fmt = ctx.output_format()
    level = int(ctx.block.attrs["level"])
    if not 0 <= level < len(fmt.levels) or fmt.levels[level].format != "dense":
        return None
    return int(fmt.levels[level].size(fmt.shape))


def _uses_coroutine(block: Block) -> bool:
    return block.kind in STATEFUL


def outer_scanners(graph, order) -> set[str]:
    """Scans fed by the root (through broadcasts only): the outermost loop's scanners."""
    producers = graph.producers()
    found = set()
    for b in order:
        if b.kind != "scan":
            continue
        src = producers[b.inputs[0]]
        while src.kind == "broadcast":
            src = producers[src.inputs[0]]
        if src.kind == "root":
            found.add(b.name)
    return found


class _Windows:
    """Windows of outer coordinates, sized so a round's longest piece stays near ``target``
    tokens and the stream bytes it holds at once near ``byte_target`` (when given)."""

    def __init__(self, target: int, byte_target: int | None = None):
        self.target = target
        self.byte_target = byte_target
        self.width = 1
        self.low = 0
        self.peaks: list[int] = []
        """Per round, the most stream bytes alive at once (:func:`_pending_bytes`)."""

    def next(self, longest: int, peak: int = 0) -> int:
        """The upper bound of the next window, given the last round's longest piece and the
        most stream bytes it held at once."""
        if self.low:
            grow = 4.0
            if longest:
                grow = min(grow, self.target / longest)
            if self.byte_target is not None and peak:
                grow = min(grow, self.byte_target / peak)
            self.width = max(1, int(self.width * grow))
        self.low += self.width
        return self.low


QUEUED_TOKEN_BYTES = 100
"""Bytes of one token queued for a reference coroutine (a Python tuple of its code and payload
and its stamp, and the list's pointer to it)."""


def _pending_bytes(runners) -> int:
    """Bytes of the stream pieces the runners hold for their next rounds (each array once)."""
    seen: set[int] = set()
    total = 0
    for r in runners:
        if isinstance(r, _PieceRunner):
            total += held_bytes((p for pieces in r.pending for p in pieces), seen)
        else:
            total += QUEUED_TOKEN_BYTES * sum(len(ch.queue) for ch in r.ctx._ins)
    return total


def run(graph, order, inputs, arch, trace: bool, chunking) -> KernelResult:
    """Simulates ``graph`` in rounds over windows of outer coordinates (see the module doc).

    The first window is one outer coordinate; windows grow at most 4x a round (the stream
    that made a whole-stream run give up need not be the longest, so it cannot size them).
    """
    split = chunking.chunk_tokens
    target = split if split is not None else max(1, (chunking.stream_tokens() or 1) // 2)
    producers = graph.producers()
    consumers = graph.consumers()
    port_of = {ch: (consumers[ch].name, consumers[ch].inputs.index(ch)) for ch in consumers}
    sources = outer_scanners(graph, order)
    runners: dict[str, _Runner] = {}
    for b in order:
        if _uses_coroutine(b):
            runners[b.name] = _CoroutineRunner(b, make_context(b, producers, arch, inputs, graph.outputs))
        else:
            ctx = make_context(b, producers, arch, inputs, graph.outputs, token_limit=target)
            kind = _AccumulatorRunner if b.kind == "spacc" and len(b.inputs) == 2 else _PieceRunner
            budgeted = b.name not in sources and b.kind in ("scan", "spacc")  # what expands, or keeps
            runners[b.name] = kind(b, ctx, split, budget=target if budgeted else None)
    held: dict[str, list[Stream]] = {}
    traces: dict[str, list] = {ch: [] for b in graph.blocks for ch in b.outputs} if trace else {}

    measure = split is None  # forced chunks (tests) are not sized by their bytes

    def one_round() -> tuple[int, int]:
        """Every block with new input runs; returns the longest piece produced and the most
        bytes of stream pieces alive at once (pending, plus a block's inputs and outputs while
        it runs; :func:`_pending_bytes`)."""
        longest = peak = 0
        for b in order:
            r = runners[b.name]
            if r.done or not r.fresh:
                continue
            before = _pending_bytes(runners.values()) if measure else 0
            produced = r.advance()
            if measure:
                peak = max(peak, before + held_bytes(p for ps in produced for p in ps))
            for ch, pieces in zip(b.outputs, produced):
                for piece in pieces:
                    longest = max(longest, len(piece))
                    if trace:
                        traces[ch].extend(piece.pairs())
                    if b.name in sources:
                        held.setdefault(ch, []).append(piece)
                    elif ch in port_of:
                        name, port = port_of[ch]
                        runners[name].feed(port, piece)
            if r.done and b.name not in sources:
                for ch in b.outputs:
                    if ch in port_of:
                        name, port = port_of[ch]
                        runners[name].finished_input(port)
        return longest, peak

    one_round()  # the root and the outer scanners, whole
    while _backlog(runners.values()):
        one_round()
    outer = _OuterFibers(held, [b for b in graph.blocks if b.name in sources])

    def shared(stamps: np.ndarray, front: Stream) -> bool:
        """Whether ``stamps`` may share memory with the stamps of a stream still to be read
        other than ``front``: pending for a block, or held by the outer scanners."""
        for other in runners.values():
            if not isinstance(other, _PieceRunner):
                continue
            for pieces in other.pending:
                for p in pieces:
                    if p is front:
                        continue
                    while p is not None:
                        if np.may_share_memory(stamps, p.base):
                            return True
                        p = p.closed
        return any(np.may_share_memory(stamps, s.base) for entry in outer.outputs for _, s in entry[1])

    for r in runners.values():
        r.shared = shared
    try:
        # once a block's clock passes half the stamp type's range, the rest of the run stamps with
        # int64 (the pending pieces widened) instead of redoing the kernel when a clock overflows
        with contextlib.ExitStack() as wide:
            byte_target = None
            if measure and chunking.memory_budget is not None:
                byte_target = chunking.stream_bytes()
            windows = _Windows(target, byte_target)
            longest, peak, rounds = 0, 0, 1  # longest piece and most bytes since the last window
            backlog, last = False, False
            while True:
                if _clock_past_half_range(runners.values()):
                    wide.enter_context(wide_stamps())
                    _widen_stamps(runners.values(), outer)
                    log.info("%s: clocks past half the stamp range; int64 stamps from here on",
                             graph.name)
                if not backlog:  # the last window is through: release the next
                    if last:
                        break
                    high = windows.next(longest, peak)
                    longest = peak = 0
                    last = high >= outer.extent
                    for ch, piece in outer.release(high, last):
                        if ch in port_of:
                            name, port = port_of[ch]
                            if len(piece):
                                runners[name].feed(port, piece)
                            if last:
                                runners[name].finished_input(port)
                round_longest, round_peak = one_round()
                longest, peak = max(longest, round_longest), max(peak, round_peak)
                windows.peaks.append(round_peak)
                rounds += 1
                backlog = _backlog(runners.values())
            stuck = [r for r in runners.values() if not r.done]
            if stuck:
                r = stuck[0]
                waiting = [ch for ch, p in zip(r.block.inputs, r.pending) if p] or list(r.block.inputs)
                raise DeadlockError(
                    f"deadlock: '{r.block.name}' cannot finish: an input stream ended early "
                    f"(waiting on {', '.join(waiting)})",
                    {r.block.name: waiting[0] if waiting else ""})
            log.info("%s: %d rounds over %d outer coordinates, stream pieces at most %.3f GiB at once",
                     graph.name, rounds, outer.extent, max(windows.peaks, default=0) / 2**30)
            for r in runners.values():
                r.finish()
            contexts = {b.name: runners[b.name].ctx for b in graph.blocks}
            return KernelResult(
                outputs=assemble_outputs(graph, contexts, fast_write.assemble_result),
                cycles=max((ctx.clock for ctx in contexts.values()), default=0),
                blocks={b.name: contexts[b.name].stats for b in graph.blocks},
                trace={ch: traces[ch] for b in graph.blocks for ch in b.outputs} if trace else None,
            )
    finally:
        # shared reaches every runner: left set, the cycle would hold the run's streams (GBs)
        # until the collector's next full pass
        for r in runners.values():
            r.shared = _always_shared


def _backlog(runners) -> bool:
    """Whether a block stopped at its round's budget with input left."""
    return any(isinstance(r, _PieceRunner) and r.backlog for r in runners)


def _clock_past_half_range(runners) -> bool:
    """Whether a block's clock passed half of what the current stamp type holds."""
    half = fast_stream.MAX_STAMP // 2
    return any((r.clock if isinstance(r, _PieceRunner) else r.ctx.clock) > half for r in runners)


def _widen_stamps(runners, outer: "_OuterFibers") -> None:
    """Gives every stream piece kept for later rounds int64 stamps (in place)."""
    def widen(s: Stream | None) -> None:
        while s is not None:
            s.base = s.base.astype(np.int64, copy=False)
            s = s.closed

    for r in runners:
        if isinstance(r, _PieceRunner):
            for pieces in r.pending:
                for p in pieces:
                    widen(p)
    for entry in outer.outputs:
        for _, s in entry[1]:
            widen(s)


class _OuterFibers:
    """The outer scanners' whole outputs, released by windows of coordinates.

    Each outer scanner emits one fiber, ``c_0 .. c_(n-1) S0 D``; a window ``[low, high)``
    releases the tokens of its coordinates, the last one the rest. Outputs of another form are
    released whole in the first window.
    """

    def __init__(self, held: dict[str, list[Stream]], blocks: list[Block]):
        self.outputs = []  # (crd stream, [(channel, stream)], released so far)
        self.extent = 0
        for b in blocks:
            streams = [(ch, concat(held.get(ch) or [_EMPTY])) for ch in b.outputs]
            crd = streams[0][1]
            n = len(crd) - 2
            if n < 0 or crd.code[-2] != 0 or np.any(crd.code[:n] != DATA):
                n = 0
                coords = np.zeros(0, np.int64)
            else:
                coords = crd.data[:n]
                if n:
                    self.extent = max(self.extent, int(coords.max()) + 1)
            self.outputs.append([coords, streams, 0])

    def release(self, high: int, last: bool) -> list[tuple[str, Stream]]:
        """Per output channel, its tokens of coordinates below ``high`` not yet released."""
        out = []
        for entry in self.outputs:
            coords, streams, start = entry
            stop = len(streams[0][1]) if last else max(start, int(np.searchsorted(coords, high)))
            entry[2] = stop
            for ch, s in streams:
                out.append((ch, s.head(stop).tail(start) if start else s.head(stop)))
        return out

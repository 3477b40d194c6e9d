"""Vectorized level scanner, repeater and locate (see ``docs/timing.md`` for their steps).

All follow the scanner rule: an input data token owns one output fiber, closed by ``S0`` or
by ``S(k+1)`` when the next input token is ``S_k`` (absorbed); a bare input ``S_k`` gives
``S(k+1)``. A locate reads its parent references the same way, one unit per fiber of its
coordinates. Every step of these blocks emits exactly one token per output, so the output
streams are laid out step by step and stamped with the step clocks.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.scan import scanned_level
from fuseflow.sim.engines import fast_native
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE, DATA, EMPTY_CODE, TIME_DTYPE, Stream,
    check_stamps, coordinate_dtype, count_code, ends_with_done, ensure_memory,
    finish, has_repeat, index_dtype,
)

SCAN_BYTES_PER_TOKEN = 30
"""Peak bytes a scan allocates per output token (outputs, stamps and temporaries)."""


def ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(lo[i], hi[i])``."""
    lengths = hi - lo
    offsets = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    bound = max(total, int(np.abs(hi).max()) if len(hi) else 0)
    dtype = index_dtype(bound, -bound)
    out = np.arange(total, dtype=dtype)
    out -= np.repeat((offsets - lo).astype(dtype), lengths)
    return out


def unit_heads(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of tokens that own a child fiber (data, ``N``) and of stops they absorb."""
    owner = (code == DATA) | (code == EMPTY_CODE)
    absorbed = np.zeros(len(code), dtype=bool)
    absorbed[1:] = owner[:-1] & (code[1:] >= 0)
    return owner, absorbed


def _dense_size(ctx, level) -> int | None:
    """The size of the scanned level if it is dense (or a range), else None."""
    if level is None:
        return int(ctx.block.attrs["size"])
    tree, lvl, fmt = level
    return tree.fmt.levels[lvl].size(tree.fmt.shape) if fmt == "dense" else None


def scan(ctx, ins):
    """ref -> crd, ref: one step per coordinate, one per fiber close, ``N`` and bare stop."""
    s = ins[0]
    level = scanned_level(ctx)
    code = s.code
    if not ends_with_done(s) or has_repeat(code) or s.data.dtype.kind != "i":
        return None
    owner, absorbed = unit_heads(code)
    data = code == DATA
    refs = s.data[data]
    size = _dense_size(ctx, level)
    if size is not None:
        ensure_memory(ctx, len(refs) * size, SCAN_BYTES_PER_TOKEN)
        if size and np.count_nonzero(absorbed) == np.count_nonzero(code >= 0) and len(refs) == np.count_nonzero(owner):
            return _scan_dense_fibers(ctx, ins, refs, size)
    if size is not None:  # dense, with N or bare stops: ref r's fiber is r*size .. r*size + size-1
        lo = refs.astype(np.int64) * size
        hi = lo + size
        ref_dtype = index_dtype(*(((int(refs.max()) + 1) * size, int(refs.min()) * size)
                                  if len(refs) else (0, 0)))
        table = starts = None
    else:
        tree, lvl, fmt = level
        lo, hi, starts = _fiber_bounds(tree, lvl, refs)
        table = tree.crd[lvl]
        ref_dtype = None
    # one pass: the coordinates, the shortest fiber, the last child of a non-empty one
    ncrd, shortest, top, nonempty = (int(x) for x in fast_native.span_stats(lo, hi))
    if size is None and tree.pos[lvl] is not None and len(refs):  # the entries under the refs
        entries = ncrd if starts is None else int((tree.pos[lvl][refs + 1] - tree.pos[lvl][refs]).sum())
        ensure_memory(ctx, entries, SCAN_BYTES_PER_TOKEN)
    if len(lo) and shortest < 0:
        return None  # a malformed level: the reference reports it
    if size is None and fmt != "singleton":
        ctx.stats.ref_reads += 2 * len(refs)
    if ref_dtype is None:
        ref_dtype = index_dtype(top if nonempty else 0)
    return _scan_layout(ctx, ins, absorbed, lo, hi, ncrd, ref_dtype, size, table, starts)


def _fiber_bounds(tree, level: int, refs: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Per reference, the child ids ``lo .. hi - 1`` of its fiber in a compressed or singleton
    level (:meth:`FiberTree.fiber` without building them), and the run starts of a grouping level (a
    child is a run: its coordinate is ``crd[starts[child]]``), else None."""
    fmt = tree.fmt
    if fmt.levels[level].format == "singleton":
        if fmt.groups(level - 1):
            runs = tree._run_starts(level - 1)
            lo, hi = runs[refs], runs[refs + 1]
        else:
            lo = refs.astype(np.int64)
            hi = lo + 1
    else:
        pos = tree.pos[level]
        lo, hi = np.empty(len(refs), pos.dtype), np.empty(len(refs), pos.dtype)
        if not fast_native.segment_bounds(pos, refs, lo, hi):  # numpy's indexing, its errors
            lo, hi = pos[refs], pos[refs + 1]
    if not fmt.groups(level):
        return lo, hi, None
    starts = tree._run_starts(level)
    first = np.searchsorted(starts, lo, side="right") - 1
    return first, np.searchsorted(starts, hi, side="left"), starts


_LEVEL_RANGE: dict[int, tuple] = {}
"""``id(crd) -> (weak reference to crd, min, max)``: a level's coordinate range, computed once
per array (a chunked run scans the same level once per round)."""


def _level_range(crd: np.ndarray) -> tuple[int, int]:
    """The least and greatest coordinate of a level's ``crd`` array (0, 0 if empty)."""
    import weakref

    hit = _LEVEL_RANGE.get(id(crd))
    if hit is not None and hit[0]() is crd:
        return hit[1], hit[2]
    bounds = (int(crd.min()), int(crd.max())) if len(crd) else (0, 0)
    if len(_LEVEL_RANGE) > 64:
        _LEVEL_RANGE.clear()
    _LEVEL_RANGE[id(crd)] = (weakref.ref(crd), *bounds)
    return bounds


_NO_TABLE = np.zeros(0, dtype=np.int64)


def _scan_layout(ctx, ins, absorbed, lo, hi, ncrd, ref_dtype, size, table, starts):
    """A scan's outputs, laid out per input token in one compiled pass
    (``fast_native.scan_layout``): a data token's fiber (its children ``lo .. hi - 1``) and
    close, ``N`` and close, a bare stop's ``S(k+1)``, ``D``; the coordinates read from the
    level's ``table`` (through the run ``starts`` of a grouping level), or ``0 .. size-1`` for
    a dense level, whose ``table`` is None."""
    s = ins[0]
    code = s.code
    ii, lat = ctx.ii, ctx.latency
    # one step per coordinate, per unit (the tokens not absorbed) and per N (its close)
    total = len(code) - int(np.count_nonzero(absorbed)) + ncrd + count_code(code, EMPTY_CODE)
    check_stamps(ii * total)
    out_code = np.empty(total, dtype=CODE_DTYPE)
    ref_out = np.empty(total, dtype=ref_dtype)
    if table is None:
        wide = coordinate_dtype(max(size - 1, 0))
        gather, table = 0, _NO_TABLE
    else:
        ctx.stats.crd_reads += ncrd
        wide = coordinate_dtype(*reversed(_level_range(table))) if ncrd else np.int16
        gather = 1 if starts is None else 2
    crd_out = np.empty(total, dtype=wide)
    stamps = np.empty(total, dtype=TIME_DTYPE)
    last = fast_native.scan_layout(code, s.base, s.shift, lo, hi, table,
                                   _NO_TABLE if starts is None else starts, gather, ii, lat,
                                   out_code, crd_out, ref_out, stamps)
    check_stamps(int(last))
    if gather and wide != np.int16:
        narrow = coordinate_dtype(int(crd_out.max()), int(crd_out.min()))
        if narrow != wide:
            crd_out = crd_out.astype(narrow)
    outs = [Stream(out_code, crd_out, stamps), Stream(out_code, ref_out, stamps)]
    return finish(ctx, ins, outs, None, ii, stamps=stamps)


def _scan_dense_fibers(ctx, ins, refs: np.ndarray, n: int):
    """A dense scan whose input holds only data, the stops they absorb, and ``D``.

    Every reference then owns n >= 1 coordinates and a close: the output is one row of n + 1
    tokens per reference (plus ``D``), codes, coordinates and stamps written in one compiled
    pass (``fast_native.dense_fibers``); the child references stay rows (:attr:`Stream.rows`).
    """
    s = ins[0]
    rows = len(refs)
    total = rows * (n + 1) + 1
    ii, lat = ctx.ii, ctx.latency
    # the clocks' bound: the last point (D's step) is at most the latest stamp plus every step
    check_stamps(ii * rows * (n + 1) + max(int(s.base.max()) + s.shift, 0))
    out_code = np.empty(total, dtype=CODE_DTYPE)
    crd_out = np.empty(total, dtype=coordinate_dtype(n))
    stamps = np.empty(total, dtype=TIME_DTYPE)
    last = int(fast_native.dense_fibers(s.code, s.base, s.shift, n, ii, lat, out_code, crd_out,
                                        stamps))
    check_stamps(last + ii * n + lat)
    ref_rows = (refs, n, index_dtype((int(refs.max()) + 1) * n if rows else 0, int(refs.min()) * n if rows else 0))
    return finish(ctx, ins, [Stream(out_code, crd_out, stamps), Stream(out_code, None, stamps, rows=ref_rows)], None,
                  ii, steps=total, last=last)


def repeat(ctx, ins):
    """ref|val, repsig -> ref|val: one step per repeat signal.

    The input splits into units: a data (or ``N``) token with the stop it may absorb, or a bare
    stop; ``D`` ends it. The j-th ``S`` signal consumes the j-th unit; ``R`` re-emits the
    current unit's token. The output is laid out per unit: its token once per signal, the
    ``S`` step's token overwritten by the closing stop.
    """
    src, sig = ins
    if not (ends_with_done(src) and ends_with_done(sig)) or has_repeat(src.code):
        return None
    owner, absorbed = unit_heads(src.code)
    heads = np.flatnonzero(~absorbed)  # one per unit, D last
    scode = sig.code
    owns = owner[heads[:-1]]
    sidx = np.empty(len(heads) - 1, dtype=np.int64)  # each unit's S signal
    if not fast_native.signal_stops(scode, owns, sidx):
        return None  # signals other than R, S0 and a final D; not one S per unit; R on a stop or D
    out_code = np.empty(len(scode), dtype=CODE_DTYPE)
    out_data = np.empty((len(scode),) + src.data.shape[1:], dtype=src.data.dtype)  # tiles: whole tiles
    fast_native.repeat_layout(src.code, src.data, heads, sidx, out_code, out_data)
    # every step peeks its unit's head; S after a data head also peeks the next input token
    stamps, shift = unit_stamps(ctx, sig, src, heads, sidx, owns)
    return finish(ctx, ins, [Stream(out_code, out_data, stamps, shift=shift)], None, ctx.ii, stamps=stamps,
                  shift=shift)


def unit_stamps(ctx, lead: Stream, src: Stream, heads: np.ndarray, sidx: np.ndarray,
                closes: np.ndarray) -> tuple[np.ndarray, int]:
    """Step stamps, ``(array, shift)``, of a block that takes one step per token of ``lead`` and
    walks ``src`` unit by unit (repeater: signals and input; locate: coordinates and parent
    references).

    Unit u is ``src[heads[u]]`` plus, where ``closes[u]``, the next token; lead tokens
    ``sidx[u-1]+1 .. sidx[u]`` act on it (the last unit, ``D``, on the rest). Every step peeks
    its unit's head; step ``sidx[u]`` also reaches the next token where ``closes[u]``. The
    recurrence runs compiled (``fast_native.unit_clocks``), unless the lead's stamps are at
    least ``ii`` apart and win at every step (``fast_native.lead_wins``): the block shares them.
    """
    ii = ctx.ii
    gapped = lead.monotone and lead.gap >= ii
    if gapped:  # a bound on every clock: the latest stamp of either plus every step
        late = int(src.base[-1] if src.monotone else src.base.max()) + src.shift
        check_stamps(max(late, int(lead.base[-1]) + lead.shift) + ii * len(lead) + ctx.latency)
        if fast_native.lead_wins(lead.base, lead.shift, src.base, src.shift, heads, sidx, closes, ii):
            return lead.base, lead.shift + ctx.latency
    else:
        check_stamps(ii * len(lead))
    stamps = np.empty(len(lead), dtype=TIME_DTYPE)
    last = fast_native.unit_clocks(lead.base, lead.shift, src.base, src.shift, heads, sidx, closes,
                                   ii, ctx.latency, stamps)
    check_stamps(int(last))
    return stamps, 0


def _located_size(ctx) -> int | None:
    """The size of the level a locate reads, or None if it is not dense (the reference errs)."""
    attrs = ctx.block.attrs
    if attrs.get("tensor") is None:
        return int(attrs["size"])
    tree = ctx.tensor()
    level = int(attrs["level"])
    if not 0 <= level < len(tree.fmt.levels) or tree.fmt.levels[level].format != "dense":
        return None
    return tree.fmt.levels[level].size(tree.fmt.shape)


def locate(ctx, ins):
    """crd, ref -> ref, crd: one step per coordinate token.

    The parent references split into units as a scanner reads them (a data or ``N`` reference
    with the stop it may absorb, or a bare stop; ``D`` last), one per fiber of the coordinates:
    the fiber's tokens peek the unit's head and its closing stop consumes the unit. Declined
    (the reference reports the error, or handles the unusual form): a closing stop other than
    the one a scanner of the parent would emit, coordinates under a bare parent stop, a
    coordinate outside the level.
    """
    crd, ref = ins
    size = _located_size(ctx)
    cc, rc = crd.code, ref.code
    if (size is None or not (ends_with_done(crd) and ends_with_done(ref)) or crd.data.dtype.kind != "i"
            or ref.data.dtype.kind != "i" or has_repeat(rc) or has_repeat(cc)):
        return None
    owner, absorbed = unit_heads(rc)
    heads = np.flatnonzero(~absorbed)  # one per unit, D last
    sidx = np.flatnonzero(cc >= 0)  # each fiber's closing stop; D ends the last unit
    if len(sidx) != len(heads) - 1:
        return None
    h = heads[:-1]
    closes = absorbed[h + 1]  # a data unit whose stop S_k gives S(k+1)
    expected = np.where(rc[h] >= 0, rc[h] + 1, np.where(closes, rc[h + 1] + 1, 0))
    lengths = np.diff(sidx, prepend=-1, append=len(cc) - 1)  # lead tokens per unit
    if not np.array_equal(cc[sidx], expected) or np.any(lengths[~owner[heads]] != 1):
        return None
    unit_code = rc[heads]
    out_code = cc
    in_range = 0 <= crd.data.min() and crd.data.max() < size  # controls' payloads too (usually 0)
    if np.any(unit_code == EMPTY_CODE):  # coordinates under an N parent give N and are not checked
        data = cc == DATA
        under_empty = data & np.repeat(unit_code == EMPTY_CODE, lengths)
        out_code = np.where(under_empty, EMPTY_CODE, cc).astype(CODE_DTYPE)
        data &= ~under_empty
    elif not in_range:
        data = cc == DATA
    if not in_range and (crd.data.min(where=data, initial=0) < 0 or crd.data.max(where=data, initial=-1) >= size):
        return None
    parents = np.where(unit_code == DATA, ref.data[heads], 0)
    dtype = index_dtype(int(parents.max()) * size + size, int(parents.min()) * size)
    out_data = np.repeat(parents.astype(dtype) * dtype(size), lengths)
    np.add(out_data, crd.data, out=out_data, casting="unsafe")  # controls' payloads are never read
    stamps, shift = unit_stamps(ctx, crd, ref, heads, sidx, closes)
    outs = [Stream(out_code, out_data, stamps, shift=shift), Stream(cc, crd.data, stamps, shift=shift)]
    return finish(ctx, ins, outs, None, ctx.ii, stamps=stamps, shift=shift)

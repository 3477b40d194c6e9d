"""Stream control: which stop levels each stream of a ``sam.graph`` carries, checked statically.

Every stream of a dataflow graph is nested in a sequence of loop levels: its stop tokens
``S0 .. S(k-1)`` close the fibers of those ``k`` levels. Blocks that consume several streams
token by token (an ALU, a repeater and its signal, a locator and its parent references, the
coordinate and reference inputs of a joiner) need them to have the same *control structure*,
the same levels over the same coordinates, or the simulator stops with a ``StreamError``
("operands have different control structure") at run time. This module infers the
structure of every stream from the ops that define it and reports each mismatch at its op,
as ``sam-verify`` does for the other structural rules:

====================  =========================================================================
op                    structure of its results (``P`` the parent's, ``C`` the coordinates')
====================  =========================================================================
``root``              ``()``: one reference, no stop level
``scan``              ``P + (level,)``; the level is the tensor level scanned (or the dense
                      range) under ``P``
``locate``            ``C``; its parent references must have ``C``'s structure minus one level
``repsiggen``         ``C``
``repeat``            the signal's; the input must have the signal's structure minus one level
``intersect/union``   the common outer levels of the coordinate inputs plus one joined level
``array``, ``alu``    the operands' (all of them must agree)
``reduce``            the input's minus its innermost level
``spacc``             the input's minus the level ``order`` above the innermost, the levels
                      below it re-accumulated
``crddrop/crdhold``   the inner coordinates'; the outer ones must be one level shorter
``fork``/``join``     each lane's forked level marked with its lane; the join (its ``order``
                      the forked level's coordinates) removes the mark at its depth
====================  =========================================================================

Two levels are the same when they enumerate the same coordinates: scans of the same tensor
level (or dense ranges of one size) whose parents have the same structure and the same
*absent* references (``N``, which a union gives the inputs that lack a coordinate; an
absent reference scans as one absent coordinate), or joins of the same levels.

A reducer also needs the coordinates of the level above its input's innermost one whenever
an enclosing level can have empty fibers (the stream grammar cannot tell an empty fiber from
an empty outer fiber); the check reports a reducer without them, and one given coordinates of
another structure. Writers must receive, for level ``l`` of a result, a coordinate stream of
``l + 1`` levels, and values of as many levels as the result has (coordinate droppers in
front of them only remove empty fibers).

``check_graph`` returns located :class:`~fuseflow.dialects.verify.Diagnostic` records whose
messages start with :data:`TAG`; graphs the lowering builds must never have any (the fuzzers
count one as an internal error).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.dialects.ir import op_of
from fuseflow.dialects.types import UnsupportedTypeError, storage_levels
from fuseflow.dialects.tiles import val_tile
from fuseflow.dialects.verify import Diagnostic

TAG = "stream control:"
"""The start of every message of this check."""


@dataclass(frozen=True)
class Level:
    """One loop level of a stream: the coordinates it enumerates (``key``, compared) and, not
    compared, whether its fibers can be empty and how to name it in a message."""

    key: tuple
    may_be_empty: bool = field(default=True, compare=False)
    text: str = field(default="?", compare=False)


@dataclass(frozen=True)
class Stream:
    """The control structure of one stream: its levels, outermost first, and the sources of
    the absent references (``N``) it may hold."""

    levels: tuple[Level, ...]
    absent: frozenset = frozenset()

    @property
    def depth(self) -> int:
        return len(self.levels)

    def describe(self) -> str:
        if not self.levels:
            return "no stop level (one token per graph)"
        names = ", ".join(level.text for level in self.levels)
        plural = "s" if self.depth > 1 else ""
        return f"{self.depth} stop level{plural} ({names})"


ROOT = Stream(())


class _Error(Exception):
    pass


def check_graph(graph_op) -> list[Diagnostic]:
    """The stream-control errors of one ``sam.graph`` (see the module docstring)."""
    return _check(graph_op).diagnostics


def structures(graph_op) -> dict:
    """The control structure (:class:`Stream`) of every stream of one ``sam.graph``, keyed by
    value; streams of ops in error are absent."""
    checker = _check(graph_op)
    return {v: s for v, s in checker.streams.items() if v not in checker.poisoned}


def _check(graph_op) -> _Checker:
    checker = _Checker(op_of(graph_op))
    for op in list(graph_op.regions[0].blocks[0].operations):
        op = op_of(op)
        handler = _HANDLERS.get(op.name)
        if handler is None:
            continue
        try:
            handler(checker, op)
        except _Error as err:
            checker.diagnostics.append(Diagnostic(op.location, f"'{op.name}' op {TAG} {err}"))
            checker.poison(op)
    return checker


class _Checker:
    def __init__(self, graph_op):
        self.graph = graph_op
        self.args = {arg: i for i, arg in enumerate(graph_op.regions[0].blocks[0].arguments)}
        self.streams: dict = {}
        self.poisoned: set = set()
        self.diagnostics: list[Diagnostic] = []
        self.writes: dict[tuple[int, int], Stream] = {}

    def poison(self, op) -> None:
        """Results of an op in error are unknown: their users are not checked again."""
        for result in op.results:
            self.poisoned.add(result)

    def get(self, value) -> Stream | None:
        """The structure of stream ``value``; None when unknown (an op in error made it)."""
        if value in self.poisoned:
            return None
        return self.streams.get(value)

    def set(self, value, stream: Stream | None) -> None:
        if stream is None:
            self.poisoned.add(value)
        else:
            self.streams[value] = stream

    def operands(self, op) -> tuple[list, int | None]:
        """The stream operands and the tensor operand's index (None without one)."""
        streams, tensor = [], None
        for value in op.operands:
            if value in self.args:
                tensor = self.args[value]
            else:
                streams.append(value)
        return streams, tensor


def _int(op, name: str, default: int | None = None) -> int | None:
    if name not in op.attributes:
        return default
    return int(mlir.IntegerAttr(op.attributes[name]).value)


def _ints(op, name: str) -> list[int] | None:
    if name not in op.attributes:
        return None
    return [int(v) for v in mlir.DenseI64ArrayAttr(op.attributes[name])]


def _known(*streams):
    return all(s is not None for s in streams)


def _same(a: Stream, b: Stream, what_a: str, what_b: str) -> None:
    if a.levels != b.levels:
        raise _Error(f"{what_a} and {what_b} have different control structure; {what_a}: "
                     f"{a.describe()}; {what_b}: {b.describe()}")


def _one_level_above(outer: Stream, inner: Stream, what_outer: str, what_inner: str) -> None:
    """``outer`` must have ``inner``'s levels but its innermost."""
    if inner.depth == 0:
        raise _Error(f"{what_inner} carries no stop level, so {what_outer} has no level above it")
    if outer.levels != inner.levels[:-1]:
        raise _Error(f"{what_outer} must carry the levels of {what_inner} but the innermost; "
                     f"{what_outer}: {outer.describe()}; {what_inner}: {inner.describe()}")


# Ops -----------------------------------------------------------------------------------

def _root(c: _Checker, op) -> None:
    c.set(op.results[0], ROOT)


def _level_format(c: _Checker, tensor: int, level: int) -> tuple[str, int] | None:
    arg = list(c.graph.regions[0].blocks[0].arguments)[tensor]
    try:
        shape, levels = storage_levels(arg.type)
    except UnsupportedTypeError:
        return None
    if not 0 <= level < len(levels):
        return None                   # the dialect verifier reports it
    return levels[level].format, levels[level].size(shape)


def _scan(c: _Checker, op) -> None:
    (parent,), tensor = c.operands(op)
    p = c.get(parent)
    if p is None:
        for r in op.results:
            c.set(r, None)
        return
    level = _int(op, "level", 0)
    if tensor is None:
        size = _int(op, "size", 0)
        fmt, key = "dense", ("dense", size, p.absent)
        text = f"dense range of {size}"
    else:
        found = _level_format(c, tensor, level)
        if found is None:
            for r in op.results:
                c.set(r, None)
            return
        fmt, size = found
        key = ("dense", size, p.absent) if fmt == "dense" else ("scan", tensor, level, p.absent)
        text = f"level {level} of input #{tensor}"
    new = Level(key, may_be_empty=fmt != "dense" or size == 0, text=text)
    stream = Stream(p.levels + (new,), p.absent)
    c.set(op.results[0], stream)
    c.set(op.results[1], stream)


def _locate(c: _Checker, op) -> None:
    (crd, parent), _ = c.operands(op)
    cs, ps = c.get(crd), c.get(parent)
    if _known(cs, ps):
        _one_level_above(ps, cs, "the parent references", "the coordinates")
        out = Stream(cs.levels, cs.absent | ps.absent)
    else:
        out = None
    c.set(op.results[0], out)
    c.set(op.results[1], cs)


def _repsiggen(c: _Checker, op) -> None:
    c.set(op.results[0], c.get(list(op.operands)[0]))


def _repeat(c: _Checker, op) -> None:
    stream, signal = list(op.operands)
    s, g = c.get(stream), c.get(signal)
    if not _known(s, g):
        c.set(op.results[0], None)
        return
    _one_level_above(s, g, "the repeated input", "the repeat signal")
    c.set(op.results[0], Stream(g.levels, s.absent))


def _joiner(c: _Checker, op) -> None:
    ref_groups = _ints(op, "ref_groups") or []
    n = len(ref_groups)
    val_groups = _ints(op, "val_groups") or [0] * n
    operands = list(op.operands)
    crds = operands[:n]
    refs = operands[n:n + sum(ref_groups)]
    vals = operands[n + sum(ref_groups):]
    results = list(op.results)
    crd_streams = [c.get(v) for v in crds]
    if not _known(*crd_streams) or not crd_streams:
        for r in results:
            c.set(r, None)
        return
    first = crd_streams[0]
    for i, s in enumerate(crd_streams):
        if s.depth == 0:
            raise _Error(f"coordinate input #{i} carries no stop level")
        if s.levels[:-1] != first.levels[:-1]:
            raise _Error(f"coordinate inputs #0 and #{i} must share their outer levels; #0: "
                         f"{first.describe()}; #{i}: {s.describe()}")
    # Each input's references and values must iterate with its coordinates.
    r = v = 0
    for i, (g_ref, g_val) in enumerate(zip(ref_groups, val_groups)):
        for k, value in enumerate(refs[r:r + g_ref]):
            s = c.get(value)
            if s is not None:
                _same(s, crd_streams[i], f"reference input #{r + k}", f"coordinate input #{i}")
        for k, value in enumerate(vals[v:v + g_val]):
            s = c.get(value)
            if s is not None:
                _same(s, crd_streams[i], f"value input #{v + k}", f"coordinate input #{i}")
        r, v = r + g_ref, v + g_val
    inner = [s.levels[-1] for s in crd_streams]
    kind = op.name.removeprefix("sam.")
    keys = frozenset(level.key for level in inner)
    if kind == "intersect":
        empty = any(level.may_be_empty for level in inner)
    else:
        empty = all(level.may_be_empty for level in inner)
    joined = Level((kind, keys), empty, f"{kind} of ({', '.join(lv.text for lv in inner)})")
    levels = first.levels[:-1] + (joined,)
    c.set(results[0], Stream(levels))
    # A union gives an input that lacks a coordinate an absent reference (N).
    ref_out, val_out = results[1:1 + sum(ref_groups)], results[1 + sum(ref_groups):]
    r = v = 0
    for i, (g_ref, g_val) in enumerate(zip(ref_groups, val_groups)):
        absent = crd_streams[i].absent
        if kind == "union" and inner[i].key[0] != "dense":
            absent = absent | {("absent", joined.key, inner[i].key)}
        for value in ref_out[r:r + g_ref] + val_out[v:v + g_val]:
            c.set(value, Stream(levels, absent))
        r, v = r + g_ref, v + g_val


def _array(c: _Checker, op) -> None:
    (ref,), _ = c.operands(op)
    c.set(op.results[0], c.get(ref))


def _alu(c: _Checker, op) -> None:
    streams = [c.get(v) for v in op.operands]
    if not _known(*streams):
        c.set(op.results[0], None)
        return
    if len(streams) == 2:
        _same(streams[0], streams[1], "lhs", "rhs")
    c.set(op.results[0], Stream(streams[0].levels))


def _reduce(c: _Checker, op) -> None:
    operands = list(op.operands)
    s = c.get(operands[0])
    if s is None:
        c.set(op.results[0], None)
        return
    if s.depth == 0:
        raise _Error("input carries no stop level to reduce")
    outer = s.levels[:-1]
    if len(operands) > 1:
        o = c.get(operands[1])
        if o is not None and o.levels != outer:
            raise _Error(f"the outer coordinates must carry the levels of the input but the "
                         f"innermost; the outer coordinates: {o.describe()}; the input: "
                         f"{s.describe()}")
    else:
        empty = [level.text for level in outer if level.may_be_empty]
        if empty:
            raise _Error(f"reduces {s.describe()} without the outer coordinates, but the "
                         f"fibers of {', '.join(empty)} can be empty (an empty outer fiber "
                         "would be reduced as an empty fiber)")
    c.set(op.results[0], Stream(outer))


def _spacc(c: _Checker, op) -> None:
    operands = list(op.operands)
    crds, val = operands[:-1], operands[-1]
    n = len(crds)
    s = c.get(val)
    crd_streams = [c.get(v) for v in crds]
    results = list(op.results)
    if not _known(s, *crd_streams):
        for r in results:
            c.set(r, None)
        return
    if s.depth < n + 1:
        raise _Error(f"order {n} needs values of at least {n + 1} stop levels; the values: "
                     f"{s.describe()}")
    cut = s.depth - n - 1                 # position of the reduced level
    for i, cs in enumerate(crd_streams):
        want = Stream(s.levels[:cut + 2 + i])
        _same(cs, want, f"coordinate input #{i}", f"the values' first {cut + 2 + i} levels")
    reduced = s.levels[cut]
    new = tuple(Level(("spacc", reduced.key, level.key), True, f"{level.text} accumulated over "
                      f"{reduced.text}") for level in s.levels[cut + 1:])
    base = s.levels[:cut]
    for i, r in enumerate(results[:-1]):
        c.set(r, Stream(base + new[:i + 1]))
    c.set(results[-1], Stream(base + new))


def _crd_pair(c: _Checker, op) -> tuple[Stream, Stream] | None:
    inner, outer = list(op.operands)
    i, o = c.get(inner), c.get(outer)
    if not _known(i, o):
        return None
    _one_level_above(o, i, "the outer coordinates", "the inner coordinates")
    return i, o


def _crddrop(c: _Checker, op) -> None:
    pair = _crd_pair(c, op)
    if pair is None:
        c.set(op.results[0], None)
        c.set(op.results[1], None)
        return
    i, o = pair
    last = o.levels[-1]
    dropped = Level(("drop", last.key, i.levels[-1].key), True, f"{last.text} (dropped)")
    outer = o.levels[:-1] + (dropped,)
    c.set(op.results[0], Stream(outer + i.levels[-1:]))
    c.set(op.results[1], Stream(outer))


def _crdhold(c: _Checker, op) -> None:
    pair = _crd_pair(c, op)
    inner = None if pair is None else Stream(pair[0].levels)
    c.set(op.results[0], inner)
    c.set(op.results[1], inner)


def _lane(level: Level, lanes: int, lane: int) -> Level:
    """Lane ``lane`` of ``lanes`` of a forked level. Forks of streams of one structure deal
    alike, so the mark names the structure, not the fork; a lane's fibers can be empty unless
    the level is dense with at least one coordinate per lane."""
    dense = level.key[0] == "dense" and level.key[1] >= lanes
    return Level(("lane", level.key, lanes, lane), level.may_be_empty or not dense,
                 f"{level.text} (lane {lane})")


def _fork(c: _Checker, op) -> None:
    s = c.get(list(op.operands)[0])
    results = list(op.results)
    for lane, result in enumerate(results):
        if s is None or s.depth == 0:
            c.set(result, None if s is None else s)
            continue
        marked = s.levels[:-1] + (_lane(s.levels[-1], len(results), lane),)
        c.set(result, Stream(marked, s.absent))


def _unmark(level: Level) -> Level:
    return Level(level.key[1], level.may_be_empty, level.text.removesuffix(
        f" (lane {level.key[3]})"))


def _join(c: _Checker, op) -> None:
    order, *lanes = [c.get(v) for v in op.operands]
    if not _known(order, *lanes):
        c.set(op.results[0], None)
        return
    depth = _int(op, "depth", 1)
    plain = None
    for index, s in enumerate(lanes):
        pos = s.depth - 1 - depth
        level = s.levels[pos] if 0 <= pos < s.depth else None
        if level is None or level.key[0] != "lane":
            marked = [p for p, lv in enumerate(s.levels) if lv.key[0] == "lane"]
            grown = f"grew {s.depth - 1 - marked[-1]} stop levels after the fork, but " \
                if marked else "is no lane of a fork: "
            raise _Error(f"lane #{index} {grown}the join's depth is {depth}")
        if level.key[3] != index or level.key[2] != len(lanes):
            raise _Error(f"lane #{index} is lane {level.key[3]} of a fork of {level.key[2]} "
                         "lanes")
        levels = s.levels[:pos] + (_unmark(level),) + s.levels[pos + 1:]
        if plain is None:
            plain = levels
        elif levels != plain:
            raise _Error(f"lanes #0 and #{index} have different control structure")
    if order.levels != plain[:len(plain) - depth]:
        raise _Error(f"the order must carry the levels of the lanes down to the forked one; "
                     f"the order: {order.describe()}; the lanes: {Stream(plain).describe()}")
    c.set(op.results[0], Stream(plain))


def _undropped(levels: tuple[Level, ...]) -> tuple:
    return tuple(lv.key[1] if lv.key[0] == "drop" else lv.key for lv in levels)


def _result_levels(c: _Checker, result: int) -> int | None:
    results = list(c.graph.results)
    if not 0 <= result < len(results):
        return None
    try:
        return len(storage_levels(results[result].type)[1])
    except UnsupportedTypeError:
        return None


def _level_write(c: _Checker, op) -> None:
    s = c.get(list(op.operands)[0])
    result, level = _int(op, "result", 0), _int(op, "level", 0)
    if s is None:
        return
    if s.depth != level + 1:
        raise _Error(f"level {level} of result #{result} needs coordinates of {level + 1} "
                     f"stop levels; the coordinates: {s.describe()}")
    c.writes[(result, level)] = s


def _value_write(c: _Checker, op) -> None:
    s = c.get(list(op.operands)[0])
    result = _int(op, "result", 0)
    levels = _result_levels(c, result)
    if s is None or levels is None:
        return
    levels -= len(val_tile(list(op.operands)[0].type) or ())  # tiles fill the innermost levels
    if s.depth != levels:
        raise _Error(f"result #{result} has {levels} storage levels; its values: "
                     f"{s.describe()}")
    last = c.writes.get((result, levels - 1))
    if last is not None and _undropped(last.levels) != _undropped(s.levels):
        raise _Error(f"the values of result #{result} do not iterate with the coordinates of "
                     f"its last level; the values: {s.describe()}; the coordinates: "
                     f"{last.describe()}")


_HANDLERS = {
    "sam.root": _root, "sam.scan": _scan, "sam.locate": _locate, "sam.repsiggen": _repsiggen,
    "sam.repeat": _repeat, "sam.intersect": _joiner, "sam.union": _joiner,
    "sam.array": _array, "sam.alu": _alu, "sam.reduce": _reduce, "sam.spacc": _spacc,
    "sam.crddrop": _crddrop, "sam.crdhold": _crdhold, "sam.fork": _fork, "sam.join": _join,
    "sam.level_write": _level_write, "sam.value_write": _value_write,
}

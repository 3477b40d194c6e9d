"""A kernel's cost model compiled once into straight-line Python: the fast prediction path.

:func:`fuseflow.explore.kernel.predict_graph` walks the block graph and applies each block's
rule (:mod:`~fuseflow.explore.rules`) to :class:`~fuseflow.explore.streams.Level` objects:
tens of microseconds per block, mostly interpreter overhead (objects, dicts, calls). The
structure of that walk depends only on the graph, the architecture's block costs and the
input formats, so :func:`compile_graph` runs it once *symbolically* and emits one Python
function whose local variables are the token counts of the streams:

- a stream field is a constant when it follows from the formats alone (dense levels under
  the root, sizes) and is folded; a stream forwarded unchanged (broadcast, locate,
  repsiggen) is the same variables, not a copy;
- the light rules (scan, repeat, array, alu, reduce, crddrop, crdhold, writers, fork,
  join) are emitted inline, with the branches the data decide (empty fibers, histograms
  present or not) kept as run-time conditionals;
- joiners and sparse accumulators, whose arithmetic is array work, call the reference rule
  on :class:`Level` objects built from the variables (the same code, so the same numbers);
- what no total or result reads is dropped (dead-code elimination);
- clocks are folded into one expression: a block ends at
  ``max(start + II·steps, max_in(last_p + burst_p·II))`` with constant starts, so the
  kernel's last clock is ``max_a(start_a + II_a·steps_a + LP_a)``, ``LP_a`` the longest path
  from block ``a`` over edge weights ``L_p − II_p + burst_p·II_b``: constants, plus the
  bursts of sparse accumulators (run-time values) with integer coefficients.

The compiled function returns the kernel's totals (cycles, tokens, steps and each counter of
:data:`~fuseflow.explore.prediction.COUNTERS`) and the statistics of its results; per-block
predictions are rebuilt by the reference walk when asked for
(:class:`~fuseflow.explore.prediction.KernelPrediction` is lazy). ``test/explore`` holds the
two paths equal.
"""

from __future__ import annotations

import math
import re

import numpy as np

from fuseflow.explore import rules
from fuseflow.explore.prediction import COUNTERS
from fuseflow.explore.stats import LevelStats, TensorStats, dot, weighted
from fuseflow.explore.streams import Level
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.stats import WORD_BYTES


class Unsupported(Exception):
    """A graph the compiler does not handle; the reference walk predicts it."""


class _Sym:
    """One level of a stream at compile time: each field a float constant, ``None``
    (``hist``/``sizes`` known absent) or the name of a variable of the emitted code.
    ``groups``: what the equal entries of ``hist`` are known from (a name for
    :func:`rules.hist_groups`; None: not known), kept while ``hist`` is only scaled.
    ``scaled``: ``(coords, factor, total)`` names with ``hist = coords * factor if coords
    is not None and total else None`` (a scan's histogram of measured counts), or None.
    ``factored``: ``(base, factor)``, ``base`` a name or constant (None or an array) and
    ``factor`` a name or float with ``hist`` equal to ``base * factor`` entry by entry (None
    when ``base`` is), for accumulators, which read a few entries of it; or None."""

    __slots__ = ("items", "nulls", "stops", "bare", "size", "nonzero", "hist", "sizes", "obj",
                 "groups", "scaled", "factored")
    FIELDS = ("items", "nulls", "stops", "bare", "size", "nonzero", "hist", "sizes")

    def __init__(self, items, nulls=0.0, stops=0.0, bare=0.0, size=0.0, nonzero=1.0,
                 hist=None, sizes=None, obj=None, groups=None, scaled=None, factored=None):
        self.items, self.nulls, self.stops, self.bare = items, nulls, stops, bare
        self.size, self.nonzero, self.hist, self.sizes = size, nonzero, hist, sizes
        self.obj = obj          # a variable holding this level as a Level object, if built
        self.groups = groups
        self.scaled = scaled
        self.factored = factored

    def with_(self, **changes) -> "_Sym":
        """A copy with ``changes``; a new ``hist`` drops the groups unless ``groups`` is
        given, and what it is scaled from."""
        groups = changes.pop("groups", None if "hist" in changes else self.groups)
        scaled = None if "hist" in changes else self.scaled
        factored = None if "hist" in changes else self.factored
        fields = {name: getattr(self, name) for name in self.FIELDS}
        fields.update(changes)
        return _Sym(**fields, groups=groups, scaled=scaled, factored=factored)


_NAME = re.compile(r"\b[vk]\d+\b")


class _Code:
    """Emitted statements (single assignments, some guarded) with constant folding and
    dead-code elimination."""

    def __init__(self):
        self.stmts: list[tuple[tuple[str, ...], str]] = []
        self.namespace: dict = {}
        self._count = 0
        self._consts: dict = {}
        self._exprs: dict[str, str] = {}
        self._lets: dict[str, str] = {}        # variable -> expression, of let()

    def fresh(self) -> str:
        self._count += 1
        return f"v{self._count}"

    def const(self, value) -> str:
        """A name for a non-literal constant (an array, a format, an object)."""
        key = id(value)
        if key not in self._consts:
            name = f"k{len(self._consts)}"
            self._consts[key] = (name, value)
            self.namespace[name] = value
        return self._consts[key][0]

    def lit(self, x) -> str:
        if isinstance(x, str):
            return x
        if x is None:
            return "None"
        if isinstance(x, (bool, np.bool_)):
            return repr(bool(x))
        if math.isfinite(x):
            return repr(float(x))
        return self.const(float(x))

    def let(self, expr: str) -> str:
        """A variable holding the pure expression ``expr`` (the same text, the same
        variable: expressions have no side effects and variables are assigned once)."""
        name = self._exprs.get(expr)
        if name is None:
            name = self._exprs[expr] = self.fresh()
            self.stmts.append(((name,), f"{name} = {expr}"))
            self._lets[name] = expr
        return name

    def block(self, targets: tuple[str, ...], code: str) -> None:
        """A statement defining several variables (an if/else, a tuple unpack)."""
        self.stmts.append((targets, code))

    # Arithmetic on constants and variables, folded where both are constants.
    def add(self, a, b):
        if isinstance(a, float) and isinstance(b, float):
            return a + b
        if b == 0.0 and isinstance(b, float):
            return a
        return self.let(f"{self.lit(a)} + {self.lit(b)}")

    def sub(self, a, b):
        if isinstance(a, float) and isinstance(b, float):
            return a - b
        if b == 0.0 and isinstance(b, float):
            return a
        return self.let(f"{self.lit(a)} - {self.lit(b)}")

    def mul(self, a, b):
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(b, float) and b == 1.0:
            return a
        if isinstance(a, float) and a == 1.0:
            return b
        return self.let(f"{self.lit(a)} * {self.lit(b)}")

    def div(self, a, b):
        """``a / b`` (``b`` nonzero)."""
        if isinstance(a, float) and isinstance(b, float):
            return a / b
        if isinstance(b, float) and b == 1.0:
            return a
        return self.let(f"{self.lit(a)} / {self.lit(b)}")

    def div0(self, a, b):
        """``a / b if b else 0.0``."""
        if isinstance(b, float):
            if not b:
                return 0.0
            if isinstance(a, float):
                return a / b
            if b == 1.0:
                return a
            return self.let(f"{self.lit(a)} / {self.lit(b)}")
        return self.let(f"{self.lit(a)} / {b} if {b} else 0.0")

    def max(self, *args):
        """``max(*args)`` as comparisons (a call of the builtin costs several of them)."""
        if all(isinstance(a, float) for a in args):
            return max(args)
        return self.fold(args, ">")

    def fold(self, args, op: str):
        """``max(*args)`` (``op`` ``>``) or ``min(*args)`` (``<``) taken as the builtin
        does, left to right, keeping the current value unless an argument compares
        ``op`` to it (the same value, the same one of equal values); leading constants
        folded."""
        pick = max if op == ">" else min
        args = list(args)
        k = 0
        while k < len(args) and isinstance(args[k], float):
            k += 1
        if k > 1:
            args[:k] = [pick(args[:k])]
        value = args[0]
        for arg in args[1:]:
            value = self.let(_pick(self.lit(value), self.lit(arg), op))
        return value

    def tokens(self, level: _Sym):
        """``items + stops + 1`` (a stream's tokens)."""
        return self.add(self.add(level.items, level.stops), 1.0)

    def data(self, level: _Sym):
        return self.sub(level.items, level.nulls)

    def own_empty(self, profile):
        if len(profile) < 2:
            return 0.0
        return self.max(self.sub(profile[-1].bare, profile[-2].bare), 0.0)

    def source(self, roots: list[str], name: str = "kernel", args: str = "stats",
               inline: bool = True, inputs: list[str] = ()) -> str:
        """The function's text: only the statements ``roots`` depend on (single-use
        variables written into their use: :meth:`_inline`, unless ``inline`` is False).
        ``inputs``: the variables of ``args[0]``, ``args[1]``, ... (every element), read by
        one unpacking when ``inline`` and two or more are used."""
        needed = set(roots)
        kept = []
        for targets, code in reversed(self.stmts):
            if any(t in needed for t in targets):
                kept.append(code)
                needed.update(set(_NAME.findall(code)) - set(targets))
        kept.reverse()
        if inline:
            kept = self._inline(kept, roots, set(inputs))
            loads = [f"{v} = {args}[{i}]" for i, v in enumerate(inputs)]
            used = [v if line in kept else "_" for v, line in zip(inputs, loads)]
            if len(used) - used.count("_") >= 2:
                kept = [f"{', '.join(used)} = {args}"] + [c for c in kept if c not in loads]
        body = "\n".join(kept).split("\n")
        lines = [f"def {name}({args}):"] + ["    " + line for line in body]
        lines.append(f"    return ({', '.join(roots)},)")
        return "\n".join(lines)

    def _inline(self, kept: list[str], roots: list[str], keep: set) -> list[str]:
        """``kept`` with each :meth:`let` variable that one later :meth:`let` expression
        reads and nothing else does written into that expression, in parentheses (the
        same operations on the same values, two bytecodes fewer: expressions are pure,
        and variables assigned once are the same wherever they are read)."""
        lets = self._lets
        in_lets: dict[str, int] = {}
        elsewhere = set(roots)
        assigned: dict[str, int] = {}
        for code in kept:
            target = code.split(" = ", 1)[0]
            if lets.get(target) is not None and code == f"{target} = {lets[target]}":
                for n in _NAME.findall(lets[target]):
                    in_lets[n] = in_lets.get(n, 0) + 1
                assigned[target] = assigned.get(target, 0) + 1
            else:
                for n in _NAME.findall(code):
                    elsewhere.add(n)
                for n in {n for line in code.split("\n") if " = " in line
                          for n in _NAME.findall(line.split(" = ", 1)[0])}:
                    assigned[n] = assigned.get(n, 0) + 1       # statements assigning n
        inlined: dict[str, str] = {}
        out = []
        for code in kept:
            target = code.split(" = ", 1)[0]
            if lets.get(target) is None or code != f"{target} = {lets[target]}":
                out.append(code)
                continue
            expr = _NAME.sub(lambda m: inlined.get(m.group(0), m.group(0)), lets[target])
            if in_lets.get(target) == 1 and target not in elsewhere and target not in keep \
                    and assigned[target] == 1 and all(
                        assigned.get(n, 1) == 1 for n in _NAME.findall(expr)):
                inlined[target] = f"({expr})"
            else:
                out.append(f"{target} = {expr}")
        return out


def _pick(current: str, arg: str, op: str) -> str:
    """The expression of one step of ``max`` (``op`` ``>``) or ``min`` (``<``): ``arg``
    if it compares ``op`` to ``current``, else ``current`` (both names or literals)."""
    return f"{arg} if {arg} {op} {current} else {current}"


def _min(a: str, b: str) -> str:
    """``min(a, b)`` as an expression (``a``, ``b`` names or literals)."""
    return f"({_pick(a, b, '<')})"


class _Scratch:
    """Stands in for a BlockPrediction when a reference rule runs inside compiled code (the
    class attributes are its initial counters: nothing to set per instance)."""

    steps = 0.0
    burst = 1.0
    ops = crd_reads = ref_reads = val_reads = crd_writes = ref_writes = val_writes = 0.0


class CompiledKernel:
    """One kernel compiled for one architecture and its input formats (see the module doc).

    ``run(stats)`` returns ``(totals, outputs)``: totals as a dict named like
    :meth:`KernelPrediction.summary` (without the derived byte totals), outputs the
    statistics of the graph's results."""

    def __init__(self, graph: BlockGraph, order: list[Block], costs: dict, formats: list,
                 inline: bool = True):
        self.formats = formats
        self.source, namespace = _compile(graph, order, costs, formats, inline)
        exec(compile(self.source, f"<cost model of {graph.name}>", "exec"), namespace)
        self._fn = namespace["kernel"]
        self.graph = graph

    def run(self, inputs):
        return self._fn(inputs)


_TOTALS = ("cycles", "tokens", "steps") + COUNTERS + ("buffer_bytes",)


def _compile(graph: BlockGraph, order: list[Block], costs: dict, formats: list,
             inline: bool = True):
    from fuseflow.explore import native     # numba: loaded by the first compiled kernel

    code = _Code()
    ns = code.namespace
    ns.update(Level=Level, np=np, math=math, _Scratch=_Scratch, rules=rules, native=native,
              accumulate_key=rules.accumulate_key, join_two=rules.join_two,
              LevelStats=LevelStats, TensorStats=TensorStats, dot=dot, weighted=weighted)
    ctx = rules.RuleContext([], list(graph.outputs))
    ns["ctx"] = ctx
    profiles: dict[str, tuple] = {}
    written: dict = {}
    sums = {k: [] for k in ("tokens", "steps") + COUNTERS + ("buffer_bytes",)}
    steps_of: dict[str, object] = {}
    burst_of: dict[str, object] = {}          # channel -> 1.0 or a variable
    block_burst: dict[str, object] = {}
    input_stats = [code.let(f"stats[{i}]") for i in range(len(formats))]
    level_stats: dict = {}

    def stats_level(t: int, index: int) -> str:
        if (t, index) not in level_stats:
            level_stats[(t, index)] = code.let(f"{input_stats[t]}.levels[{index}]")
        return level_stats[(t, index)]

    def attr(obj: str, name: str) -> str:
        return code.let(f"{obj}.{name}")

    for block in order:
        ins = [profiles[ch] for ch in block.inputs]
        counters: dict[str, object] = {}
        outs, steps, burst = _emit(block, ins, code, counters, written, formats, stats_level,
                                   attr, graph, ctx)
        for c, factor in rules.tile_factors(block).items():    # as rules.apply
            if c in counters:
                counters[c] = code.mul(counters[c], factor)
        steps_of[block.name] = steps
        block_burst[block.name] = burst
        if block.kind == "spacc":       # KernelPrediction.buffer_bytes
            levels = max(len(block.outputs) - 1, 1)
            sums["buffer_bytes"].append(code.mul(burst, float(WORD_BYTES * (levels + 1))))
        sums["steps"].append(steps)
        for c, v in counters.items():
            sums[c].append(v)
        for ch, profile in zip(block.outputs, outs):
            profiles[ch] = profile
            sums["tokens"].append(code.tokens(profile[-1]))
        latency, interval = costs[block.kind]
        for ch in block.outputs:
            if interval == 0:
                inherited = {burst_of[c] for c in block.inputs if isinstance(burst_of[c], str)}
                if len(inherited) > 1:
                    raise Unsupported(f"{block.name}: a zero-interval block merging bursts")
                burst_of[ch] = inherited.pop() if inherited else 1.0
            else:
                burst_of[ch] = burst
    roots = []
    for key in ("tokens", "steps") + COUNTERS + ("buffer_bytes",):
        roots.append(_sum(code, sums[key]))
    roots.insert(0, _cycles(code, graph, order, costs, steps_of, burst_of))
    roots = [code.lit(r) for r in roots]
    outputs = [_written(code, graph, written, r) for r in range(len(graph.outputs))]
    roots.append(code.let(f"[{', '.join(outputs)}]") if outputs else "[]")
    return code.source(roots, inline=inline, inputs=input_stats), ns


def _sum(code: _Code, terms: list):
    """``sum(terms)``: constants added at compile time, repeated variables multiplied."""
    const = 0.0
    counts: dict[str, int] = {}
    for t in terms:
        if isinstance(t, float):
            const += t
        else:
            counts[t] = counts.get(t, 0) + 1
    if not counts:
        return const
    if not const and len(counts) == 1 and next(iter(counts.values())) == 1:
        return next(iter(counts))
    parts = [v if n == 1 else f"{n}.0 * {v}" for v, n in counts.items()]
    if const:
        parts.append(code.lit(const))
    return code.let(" + ".join(parts))


def _cycles(code: _Code, graph, order, costs, steps_of, burst_of):
    """The kernel's last clock: ``max_a(start_a + II_a·steps_a + LP_a)``."""
    consumers = graph.consumers()
    start: dict[str, float] = {}
    first: dict[str, float] = {}
    for block in order:
        s = max((first[ch] for ch in block.inputs), default=0.0)
        start[block.name] = s
        for ch in block.outputs:
            first[ch] = s + costs[block.kind][0]
    # Longest paths: block -> {burst coefficients (sorted (var, coeff) pairs): constant}.
    paths: dict[str, dict] = {}
    for block in reversed(order):
        best = {(): 0.0}
        latency, interval = costs[block.kind]
        for ch in block.outputs:
            nxt = consumers.get(ch)
            if nxt is None:
                continue
            ii = costs[nxt.kind][1]
            burst = burst_of[ch]
            const = latency - interval
            extra = ()
            if isinstance(burst, float):
                const += burst * ii
            elif ii:
                extra = ((burst, float(ii)),)
            for vec, c in paths[nxt.name].items():
                merged = dict(vec)
                for var, coeff in extra:
                    merged[var] = merged.get(var, 0.0) + coeff
                key = tuple(sorted(merged.items()))
                if best.get(key, -math.inf) < c + const:
                    best[key] = c + const
        paths[block.name] = best
    # Group the terms by burst vector; within one, keep the largest constant per steps.
    groups: dict[tuple, dict] = {}
    for block in order:
        interval = costs[block.kind][1]
        steps = steps_of[block.name]
        for vec, c in paths[block.name].items():
            terms = groups.setdefault(vec, {})
            if isinstance(steps, float) or interval == 0:
                value = start[block.name] + (steps * interval if interval else 0.0) + c
                terms[None] = max(terms.get(None, -math.inf), value)
            else:
                key = (steps, interval)
                terms[key] = max(terms.get(key, -math.inf), start[block.name] + c)
    if not groups:
        return 0.0
    outer = []
    for vec, terms in groups.items():
        parts = []
        for key, c in terms.items():
            if key is None:
                parts.append(code.lit(c))
            else:
                steps, interval = key
                scaled = steps if interval == 1 else f"{steps} * {code.lit(float(interval))}"
                parts.append(f"{scaled} + {code.lit(c)}" if c else scaled)
        inner = parts[0] if len(parts) == 1 else \
            code.fold([p if _is_name(p) else code.let(p) for p in parts], ">")
        for var, coeff in vec:
            inner = f"{inner} + {var}" if coeff == 1.0 else f"{inner} + {code.lit(coeff)} * {var}"
        outer.append(inner)
    if len(outer) == 1:
        return code.let(outer[0])
    return code.fold([o if _is_name(o) else code.let(o) for o in outer], ">")


def _is_name(text: str) -> bool:
    """Whether ``text`` is a variable or a literal (not an expression)."""
    return bool(_NAME.fullmatch(text)) or _LITERAL.fullmatch(text) is not None


_LITERAL = re.compile(r"-?\d+\.\d*(e[-+]?\d+)?|-?\d+e[-+]?\d+|k\d+")


def _level_obj(code: _Code, sym: _Sym) -> str:
    """A variable holding ``sym`` as a :class:`Level` (built once)."""
    if sym.obj is None:
        args = ", ".join(code.lit(getattr(sym, f)) for f in _Sym.FIELDS)
        if all(not isinstance(getattr(sym, f), str) for f in _Sym.FIELDS):
            sym.obj = code.const(Level(*(getattr(sym, f) for f in _Sym.FIELDS)))
        else:
            sym.obj = code.let(f"Level({args})")
    return sym.obj


def _profile_obj(code: _Code, profile: tuple) -> str:
    return code.let("(" + "".join(_level_obj(code, s) + ", " for s in profile) + ")")


def _from_obj(code: _Code, obj: str) -> _Sym:
    """A level computed at run time by a reference rule: its fields read from the object."""
    sym = _Sym(*(code.let(f"{obj}.{f}") for f in _Sym.FIELDS))
    sym.obj = obj
    return sym


def _emit(block: Block, ins, code: _Code, counters, written, formats, stats_level, attr,
          graph, ctx):
    """Emits ``block``'s rule; returns its output profiles, steps and burst."""
    kind = block.kind
    a = block.attrs
    if kind == "root":
        return [(_Sym(1.0),)], 2.0, 1.0
    if kind in ("locate",):
        return [ins[0], ins[0]], code.tokens(ins[0][-1]), 1.0
    if kind in ("repsiggen", "broadcast"):
        return [ins[0]] * len(block.outputs), code.tokens(ins[0][-1]), 1.0
    if kind == "scan":
        return _emit_scan(block, ins, code, counters, formats, stats_level, attr)
    if kind == "repeat":
        value, signal = ins[0][-1], ins[1]
        last = signal[-1]
        share = code.div0(value.nulls, value.items)
        scale = code.div0(last.items, value.items)
        hist = None
        if value.hist is not None:
            hist = code.let(f"None if {value.hist} is None else {value.hist} * "
                            f"{code.lit(scale)}")
        level = last.with_(nulls=code.mul(last.items, share), nonzero=value.nonzero,
                           size=value.size, hist=hist, groups=value.groups)
        return [signal[:-1] + (level,)], code.tokens(last), 1.0
    if kind == "array":
        refs = ins[0][-1]
        stats = _input(code, formats, a['tensor'])
        # TensorStats.nonzero_fraction, inline (a property call costs several statements)
        nzf = code.div0(code.let(f"{stats}.nonzeros"), code.let(f"{stats}.values"))
        data = code.data(refs)
        counters["val_reads"] = data
        share = code.div0(data, refs.items)
        level = refs.with_(nulls=0.0, nonzero=code.mul(nzf, share), hist=None)
        return [ins[0][:-1] + (level,)], code.tokens(refs), 1.0
    if kind == "alu":
        values = ins[0][-1]
        op = a.get("op")
        z = values.nonzero
        if len(ins) == 2:
            z2 = ins[1][-1].nonzero
            if op == "div":
                z = values.nonzero
            elif op in ("mul", "min", "mask_fill"):
                z = code.mul(z, z2)
            else:
                z = code.sub(1.0, code.mul(code.sub(1.0, z), code.sub(1.0, z2)))
        elif op == "relu":
            z = code.div0(z, 2.0)
        elif op not in rules._KEEPS_ZEROS:
            z = 1.0
        counters["ops"] = values.items
        level = values.with_(nulls=0.0, nonzero=z, hist=None)
        return [ins[0][:-1] + (level,)], code.tokens(values), 1.0
    if kind == "reduce":
        profile = ins[0]
        values, parent = profile[-1], profile[-2]
        data = code.data(values)
        counters["ops"] = data
        steps = code.add(code.add(data, values.stops), 1.0)
        per_fiber = code.div0(data, code.max(code.sub(parent.items, code.own_empty(profile)),
                                             1.0))
        z = code.let(f"-math.expm1({code.lit(per_fiber)} * math.log1p(-"
                     f"{_min(code.lit(values.nonzero), '0.999999999999')}))")
        if len(ins) > 1:
            level = parent.with_(nulls=0.0, nonzero=z, hist=None)
        else:
            level = parent.with_(items=values.stops, nulls=0.0, bare=0.0, nonzero=z, hist=None)
        return [profile[:-2] + (level,)], steps, 1.0
    if kind == "crddrop":
        inner, outer = ins[0], ins[1]
        o = outer[-1]
        dropped = code.own_empty(inner)
        fib = outer[-2].items if len(outer) >= 2 else 1.0
        nonempty = code.max(code.sub(fib, code.own_empty(outer)), 0.0)
        per_fiber = code.div0(o.items, nonempty)
        drop = code.div0(dropped, o.items)
        gone = code.let(f"{code.lit(nonempty)} * {code.lit(drop)} ** {code.lit(per_fiber)}")
        hist = None
        if o.hist is not None:
            hist = code.let(f"None if {o.hist} is None else {o.hist} * (1.0 - "
                            f"{code.lit(drop)})")
        kept = o.with_(items=code.sub(o.items, dropped), bare=code.add(o.bare, gone), hist=hist,
                       groups=o.groups)
        i = inner[-1]
        level = _Sym(i.items, i.nulls, code.add(kept.items, kept.bare), code.add(0.0, kept.bare),
                     i.size)
        return [outer[:-1] + (kept, level), outer[:-1] + (kept,)], code.tokens(o), 1.0
    if kind == "crdhold":
        inner, outer = ins[0], ins[1]
        held = inner[-1].with_(size=outer[-1].size, hist=None)
        return [inner, inner[:-1] + (held,)], code.tokens(inner[-1]), 1.0
    if kind == "level_write":
        crd = ins[0][-1]
        result, level = int(a["result"]), int(a["level"])
        stored = graph.outputs[result].levels[level].format
        if stored != "dense":
            counters["crd_writes"] = code.data(crd)
        if stored == "compressed":
            counters["ref_writes"] = crd.stops
        written[(result, level)] = ins[0]
        return [], code.tokens(crd), 1.0
    if kind == "value_write":
        counters["val_writes"] = ins[0][-1].items
        written[(int(a["result"]), None)] = ins[0]
        return [], code.tokens(ins[0][-1]), 1.0
    if kind == "fork":
        lanes = float(len(block.outputs))
        last = ins[0][-1]
        hist = None
        if last.hist is not None:
            hist = code.let(f"None if {last.hist} is None else {last.hist} / {code.lit(lanes)}")
        lane = last.with_(items=code.div0(last.items, lanes), nulls=code.div0(last.nulls, lanes),
                          hist=hist, groups=last.groups)
        return [ins[0][:-1] + (lane,)] * len(block.outputs), code.tokens(last), 1.0
    if kind == "join":
        lanes = ins[1:]
        first = lanes[0][-1]
        items, nulls = first.items, first.nulls
        for p in lanes[1:]:
            items, nulls = code.add(items, p[-1].items), code.add(nulls, p[-1].nulls)
        hist = None
        if first.hist is not None:
            hist = code.let(f"None if {first.hist} is None else {first.hist} * "
                            f"{code.lit(float(len(lanes)))}")
        steps = code.tokens(lanes[0][-1])
        for p in lanes[1:]:
            steps = code.add(steps, code.tokens(p[-1]))
        return [lanes[0][:-1] + (first.with_(items=items, nulls=nulls, hist=hist,
                                             groups=first.groups),)], steps, 1.0
    if kind in ("intersect", "union"):
        return _emit_joiner(block, ins, code)
    if kind == "spacc":
        return _emit_spacc(block, ins, code, counters)
    raise Unsupported(f"{block.name}: no compiled rule for '{kind}' blocks")


def _input(code: _Code, formats, tensor: int) -> str:
    return code.let(f"stats[{int(tensor)}]")


def _emit_scan(block, ins, code: _Code, counters, formats, stats_level, attr):
    parent = ins[0][-1]
    data = code.data(parent)
    tensor = block.attrs.get("tensor")
    sizes = None
    if tensor is None:
        size = float(block.attrs["size"])
        items = code.mul(data, size)
        empty = 0.0 if size else data
        fmt = "dense"
    else:
        t, index = int(tensor), int(block.attrs["level"])
        fmt_t = formats[t]
        fmt = fmt_t.levels[index].format
        size = float(fmt_t.levels[index].size(fmt_t.shape))
        lv = stats_level(t, index)
        # LevelStats.mean and empty_fraction, inline
        fibers = attr(lv, "fibers")
        mean = code.div0(attr(lv, "items"), fibers)
        fraction = code.div0(attr(lv, "empty"), fibers)
        if parent.hist is None:
            items, empty = code.mul(data, mean), code.mul(data, fraction)
        else:
            items, empty = code.fresh(), code.fresh()
            bp = attr(lv, "by_parent")
            ebp = attr(lv, "empty_by_parent")
            groups = attr(lv, "size_groups")
            ph = parent.hist
            # stats.weighted keeps the sums on the level for the histogram's array: a
            # constant, or the measured counts a scan's histogram is a multiple of.
            if parent.scaled is None:
                present, length = f"{ph} is not None", ph
                sums = [f"    {items}, {empty} = weighted({lv}, {ph})"]
            else:
                # The scaled histogram is there when its counts are (and not empty), of
                # their length: the test does not build it (an array product) when only
                # the sums read it.
                base, factor, total = parent.scaled
                present, length = f"{base} is not None and {code.lit(total)}", base
                sums = [f"    {items}, {empty} = weighted({lv}, {base})",
                        f"    {items}, {empty} = {factor} * {items}, {factor} * {empty}"]
            if isinstance(code.namespace.get(ph), np.ndarray):     # a constant histogram
                known = code.let(f"{bp} is not None and {len(code.namespace[ph])} == len({bp})")
            else:
                known = code.let(f"{present} and {bp} is not None and "
                                 f"len({length}) == len({bp})")
            code.block((items, empty), "\n".join([
                f"if {known}:",
                *sums,
                "else:",
                f"    {items} = {code.lit(data)} * {mean}",
                f"    {empty} = {code.lit(data)} * {fraction}"]))
            # A separate statement: dropped when nothing reads the fiber sizes.
            sizes = code.let(f"({ph}, {bp}, 1.0, {groups}) if {known} else None")
    groups = scaled = factored = None
    if fmt == "dense":
        if not size:
            hist = None
        else:
            if isinstance(data, float):
                hist = code.const(np.full(int(size), data))
            else:
                # np.full(size, data) as ones times data (1.0 · data is data), a cheaper call
                ones = code.const(np.ones(int(size)))
                hist = code.let(f"{ones} * {data}")
                factored = (ones, data)
            groups = code.const(_one_group(int(size)))
    else:
        t = int(tensor)
        lv = stats_level(t, int(block.attrs["level"]))
        coords, total = attr(lv, "coords"), attr(lv, "items")
        factor = code.let(f"{code.lit(items)} / {total} if {total} else 0.0")
        hist = code.let(f"{coords} * {factor} if {coords} is not None and {total} else None")
        scaled = (coords, factor, total)
        factored = (code.let(f"{coords} if {total} else None"), factor)
        # Measured counts are grouped once per tensor (rules.hist_groups), estimated ones not.
        groups = code.let(f"{lv} if {_input(code, formats, t)}.measured else None")
    level = _Sym(code.add(items, parent.nulls), parent.nulls,
                 code.add(parent.items, parent.bare), code.add(empty, parent.bare), size, 1.0,
                 hist, sizes, groups=groups, scaled=scaled, factored=factored)
    if fmt != "dense":
        counters["crd_reads"] = items
        if fmt != "singleton":
            counters["ref_reads"] = code.mul(2.0, data)
    profile = ins[0] + (level,)
    return [profile, profile], code.tokens(level), 1.0


def _one_group(size: int) -> tuple:
    """The groups (:func:`rules.hist_groups`) of a histogram of ``size`` equal entries."""
    return (np.zeros(size, dtype=np.intp), np.array([size]), np.array([0]))


_SETS = {"spacc": ("ops",)}
"""Counters besides steps that the reference-run rules set."""


def _emit_reference(block, ins, code: _Code, counters):
    """Runs the reference rule on Level objects; reads its outputs and counters back."""
    name = code.const(block)
    args = ", ".join(_profile_obj(code, p) for p in ins)
    out = code.fresh()
    code.block((out,), f"{out} = _Scratch()")
    result = code.fresh()
    code.block((result,), f"{result} = rules.RULES[{name}.kind]({name}, [{args}], ctx, {out})")
    for c in _SETS.get(block.kind, ()):
        counters[c] = code.let(f"{result} and {out}.{c}")
    steps = code.let(f"{result} and {out}.steps")       # (after the rule has run)
    burst = code.let(f"{result} and {out}.burst") if block.kind == "spacc" else 1.0
    outs = []
    if block.kind in ("intersect", "union"):
        prefix = ins[0][:-1]
        for k in range(len(block.outputs)):
            level = _from_obj(code, code.let(f"{result}[{k}][-1]"))
            outs.append(prefix + (level,))
    else:                                       # spacc: head + the new coordinate levels
        n = int(block.attrs.get("order", len(ins) - 1))
        values = ins[n]
        r = len(values) - n - 1
        if r < 1:
            raise Unsupported(f"{block.name}: spacc without a reduced level")
        head = values[:r]
        last = code.let(f"{result}[{n}]")
        new = [_from_obj(code, code.let(f"{last}[{r + j}]")) for j in range(n)]
        for j in range(n):
            outs.append(head + tuple(new[:j + 1]))
        final = _from_obj(code, code.let(f"{last}[-1]"))
        outs.append(head + tuple(new[:-1]) + (final,))
    return outs, steps, burst


def _tuple(code: _Code, items) -> str:
    return "(" + "".join(code.lit(x) + ", " for x in items) + ")"


def _emit_joiner(block, ins, code: _Code):
    """``rules._joiner`` inline: the scalar arithmetic emitted, the counts by
    ``rules.join_counts`` and the thinned fiber sizes by ``rules.thin_sizes``."""
    groups, k, lasts, union, profile = rules.joiner_operands(block, ins)
    if len(profile) < 2:
        raise Unsupported(f"{block.name}: a joiner of root streams")
    parent = profile[-2]
    n = parent.items
    datas = [code.data(last) for last in lasts]
    widest = code.div(code.max(*datas), code.max(n, 1.0))
    size = code.max(*[last.size for last in lasts], widest, 1.0)
    operands = []
    for p, data in zip(ins[:k], datas):
        nonempty = code.sub(n, code.own_empty(p))
        share = code.div0(nonempty, n)
        if isinstance(nonempty, float) and isinstance(data, float):
            each = data / nonempty if nonempty > 0 else 0.0
        else:
            each = code.let(f"{code.lit(data)} / {code.lit(nonempty)} "
                            f"if {code.lit(nonempty)} > 0 else 0.0")
        operands.append((share, each))
    arrays = [(last.hist, data, last.size) for last, data in zip(lasts, datas)]
    pj, items, merged, hist = (code.fresh() for _ in range(4))
    if k == 2:                                  # the common case, without the tuples
        args = ", ".join(code.lit(x) for x in (*operands[0], *operands[1], size, union, n,
                                               *arrays[0], *arrays[1]))
        call = f"join_two({args}, native)"
    else:                                       # histograms, data and sizes as tuples
        listed = ["".join(_tuple(code, x) + ", " for x in operands)] + \
            [_tuple(code, [a[i] for a in arrays]) for i in range(3)]
        call = (f"rules.join_many(({listed[0]}), {code.lit(size)}, {union}, {code.lit(n)}, "
                f"{', '.join(listed[1:])}, native)")
    code.block((pj, items, merged, hist), f"{pj}, {items}, {merged}, {hist} = {call}")
    sizes = None
    if not union and any(last.sizes is not None for last in lasts):
        pairs = [_tuple(code, (last.sizes, data)) for last, data in zip(lasts, datas)]
        sizes = code.let(f"rules.thin_sizes(({''.join(x + ', ' for x in pairs)}), {items})")
    empty = code.mul(n, code.sub(1.0, pj))
    level = _Sym(items, 0.0, code.add(parent.items, parent.bare), code.add(empty, parent.bare),
                 size, 1.0, hist, sizes)
    steps = merged
    for last in lasts:
        steps = code.add(steps, last.nulls)
    steps = code.add(code.add(steps, level.stops), 1.0)
    outs = [profile[:-1] + (level,)]
    port = k
    for data, g in zip(datas, groups):
        nulls = code.max(code.sub(items, data), 0.0) if union else 0.0
        for value in ins[port:port + g]:
            outs.append(profile[:-1] + (level.with_(nulls=nulls, nonzero=value[-1].nonzero),))
        port += g
    return outs, steps, 1.0


def _emit_spacc(block, ins, code: _Code, counters):
    """``rules._spacc`` inline: the scalar arithmetic emitted, the key levels by
    ``rules.accumulate``."""
    n = int(block.attrs.get("order", len(ins) - 1))
    values = ins[n]
    r = len(values) - n - 1
    if r < 1:
        raise Unsupported(f"{block.name}: spacc without a reduced level")
    above, reduced = values[r - 1], values[r]
    nonempty = code.max(code.sub(above.items, code.max(code.sub(reduced.bare, above.bare),
                                                       0.0)), 0.0)
    draws = code.div0(reduced.items, nonempty)
    empty_below = code.div0(code.own_empty(ins[0]), reduced.items)
    counters["ops"] = code.data(values[-1])
    steps = code.tokens(values[-1])
    crds = [ins[j][-1] for j in range(n)]
    names = [code.fresh() for _ in range(4 * n)]
    args = ", ".join(code.lit(x) for x in (reduced.items, reduced.size, reduced.sizes,
                                           above.items, nonempty, draws, empty_below))
    memo = code.const(rules.NodeMemo())         # this accumulator's node-vector work
    if n == 1:
        # One key level: the histogram as the scan's counts and factor when it is one.
        c = crds[0]
        h, hscale = c.factored if c.factored is not None else (c.hist, 1.0)
        code.block(tuple(names), f"{', '.join(names)} = accumulate_key({args}, "
                                 f"{code.lit(h)}, {code.lit(hscale)}, {code.lit(code.data(c))}, "
                                 f"{code.lit(c.size)}, {code.lit(c.groups)}, {memo}, native)")
    else:
        arrays = [_tuple(code, (c.hist, code.data(c), c.size)
                         + ((c.groups,) if c.groups is not None else ())) for c in crds]
        code.block(tuple(names), f"{', '.join(names)}, = rules.accumulate({args}, "
                                 f"({''.join(a + ', ' for a in arrays)}), {memo}, native)")
    levels = []
    parent = above
    for j, crd in enumerate(crds):
        keys, empty, hist, sizes = names[4 * j:4 * j + 4]
        if j:
            hist = sizes = None                 # rules.accumulate: only the first level's
        level = _Sym(keys, 0.0, code.add(parent.items, parent.bare),
                     code.add(empty, parent.bare), crd.size, 1.0, hist, sizes)
        levels.append(level)
        parent = level
    z = values[-1].nonzero
    per_key = code.div0(code.data(values[-1]), levels[-1].items)     # as rules._spacc
    if isinstance(per_key, float) and not per_key:
        merged = z
    else:
        merged = code.let(f"-math.expm1({code.lit(per_key)} * math.log1p(-"
                          f"{_min(code.lit(z), '0.999999999999')})) if {code.lit(per_key)} "
                          f"else {code.lit(z)}")
    head = values[:r]
    burst = code.max(code.div(code.tokens(levels[-1]), code.max(reduced.stops, 1.0)), 1.0)
    outs = [head + tuple(levels[:j + 1]) for j in range(n)]
    final = levels[-1].with_(nonzero=code.fold([merged, 1.0], "<")
                             if isinstance(merged, str) else min(merged, 1.0))
    outs.append(head + tuple(levels[:-1]) + (final,))
    return outs, steps, burst


def _written(code: _Code, graph, written, result: int) -> str:
    """Emits the statistics of graph result ``result`` (``kernel._written``)."""
    fmt = graph.outputs[result]
    levels = []
    refs = 1.0
    for index, spec in enumerate(fmt.levels):
        size = spec.size(fmt.shape)
        profile = written.get((result, index))
        if spec.format == "dense" or profile is None:
            items = code.mul(refs, float(size))
            if isinstance(items, float):
                levels.append(code.const(LevelStats(refs, items, 0.0, size)))
            else:
                levels.append(code.let(f"LevelStats({code.lit(refs)}, {items}, 0.0, {size})"))
        else:
            last = profile[-1]
            items, empty = code.data(last), code.own_empty(profile)
            parent = fmt.levels[index - 1].size(fmt.shape) \
                if index and fmt.levels[index - 1].format == "dense" else 0
            args = ", ".join(code.lit(x) for x in (refs, items, empty))
            levels.append(code.let(f"rules.written_level({args}, {size}, "
                                   f"{code.lit(last.hist)}, {code.lit(last.sizes)}, {parent}, "
                                   "native)"))
        refs = items
    values = written.get((result, None))
    count = values[-1].items if values is not None else refs
    nonzero = values[-1].nonzero if values is not None else 0.0
    nonzeros = code.mul(count, nonzero)
    return code.let(f"TensorStats({code.const(fmt)}, ({''.join(v + ', ' for v in levels)}), "
                    f"{code.lit(refs)}, {code.lit(nonzeros)})")

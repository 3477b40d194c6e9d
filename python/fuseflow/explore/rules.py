"""Per-block token propagation: each rule maps its input stream profiles to its output
profiles and fills the block's steps and counters (the equations of ``docs/costmodel.md``).

A rule is ``rule(block, ins, ctx, out) -> list[Profile]``: ``ins`` are the profiles of the
block's input channels in port order, ``ctx`` the kernel's :class:`RuleContext`, ``out`` the
:class:`~fuseflow.explore.prediction.BlockPrediction` whose counters it sets. Steps follow
the per-block costs of ``docs/timing.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fuseflow.explore.joins import UNIQUE_ABOVE, distinct, fold, held
from fuseflow.explore.prediction import BlockPrediction
from fuseflow.explore.stats import LevelStats, TensorStats, coord_groups, dot
from fuseflow.explore.streams import ROOT, Level, Profile, fibers, own_empty, tokens
from fuseflow.sim.formats import TensorFormat
from fuseflow.sim.graph import Block


@dataclass
class RuleContext:
    """What rules read besides their input streams, and what the writers record."""

    inputs: list[TensorStats]
    """Statistics of the graph's input tensors, bound in the graph's formats."""
    outputs: list[TensorFormat]
    """Declared formats of the graph's results."""
    written: dict[tuple[int, int | None], Profile] = field(default_factory=dict)
    """``(result, level)`` -> the profile a level writer received; ``(result, None)`` for the
    value writer."""


def _root(block, ins, ctx, out):
    out.steps = 2.0
    return [ROOT]


def _scan(block, ins, ctx, out):
    parent = ins[0][-1]
    data = parent.data
    sizes = None
    tensor = block.attrs.get("tensor")
    if tensor is None:
        stats = None
        size = float(block.attrs["size"])
        items, empty, fmt = data * size, 0.0 if size else data, "dense"
    else:
        stats = ctx.inputs[tensor].levels[int(block.attrs["level"])]
        fmt = ctx.inputs[tensor].fmt.levels[int(block.attrs["level"])].format
        size = float(stats.size)
        if (parent.hist is not None and stats.by_parent is not None
                and len(parent.hist) == len(stats.by_parent)):
            # References into a dense level follow its coordinates: weigh each fiber by how
            # often its parent coordinate occurs.
            items = dot(parent.hist, stats.by_parent)
            empty = dot(parent.hist, stats.empty_by_parent)
            sizes = (parent.hist, stats.by_parent, 1.0, stats.size_groups)
        else:
            items, empty = data * stats.mean, data * stats.empty_fraction
    if fmt == "dense":
        hist = np.full(int(size), data) if size else None
    elif stats.coords is not None and stats.items:
        hist = stats.coords * (items / stats.items)
    else:
        hist = None
    level = parent.child(items + parent.nulls, empty, parent.nulls, size, hist=hist,
                         sizes=sizes)
    if fmt != "dense":
        out.crd_reads = items
        if fmt != "singleton":
            out.ref_reads = 2.0 * data
    out.steps = level.tokens
    profile = ins[0] + (level,)
    return [profile, profile]


def _locate(block, ins, ctx, out):
    out.steps = tokens(ins[0])
    return [ins[0], ins[0]]


def _passthrough(block, ins, ctx, out):
    out.steps = tokens(ins[0])
    return [ins[0]] * len(block.outputs)


def _repeat(block, ins, ctx, out):
    value, signal = ins[0][-1], ins[1]
    share = value.nulls / value.items if value.items else 0.0
    scale = signal[-1].items / value.items if value.items else 0.0
    level = signal[-1].with_(nulls=signal[-1].items * share, nonzero=value.nonzero,
                             size=value.size,
                             hist=None if value.hist is None else value.hist * scale)
    out.steps = tokens(signal)
    return [signal[:-1] + (level,)]


def joiner_operands(block, ins):
    """A joiner's reference groups, its number of coordinate inputs, their innermost levels,
    whether it is a union, and its first input's profile."""
    groups = block.attrs.get("ref_groups")
    groups = [int(g) for g in groups] if groups else [1] * (len(ins) // 2)
    k = len(groups)
    return groups, k, [p[-1] for p in ins[:k]], block.kind == "union", ins[0]


def _joiner(block, ins, ctx, out):
    groups, k, lasts, union, profile = joiner_operands(block, ins)
    parent = profile[-2]
    n_fibers = fibers(profile)
    datas = [last.items - last.nulls for last in lasts]
    size = max(max(last.size for last in lasts), max(datas) / max(n_fibers, 1.0), 1.0)
    operands = []
    for p, data in zip(ins[:k], datas):
        nonempty = n_fibers - own_empty(p)
        operands.append((nonempty / n_fibers if n_fibers else 0.0,
                         data / nonempty if nonempty > 0 else 0.0))
    pj, items, merged, hist = join_counts(
        operands, size, union, n_fibers, [(last.hist, data, last.size)
                                          for last, data in zip(lasts, datas)])
    sizes = None if union else thin_sizes([(last.sizes, data) for last, data in
                                            zip(lasts, datas)], items)
    level = parent.child(items, n_fibers * (1.0 - pj), size=size, hist=hist, sizes=sizes)
    out.steps = merged + sum(last.nulls for last in lasts) + level.stops + 1.0
    outs = [profile[:-1] + (level,)]
    port = k
    for data, g in zip(datas, groups):
        nulls = max(items - data, 0.0) if union else 0.0
        for value in ins[port:port + g]:
            outs.append(profile[:-1] + (level.with_(nulls=nulls, nonzero=value[-1].nonzero),))
        port += g
    return outs


def join_counts(operands, size: float, union: bool, n_fibers: float, arrays, native=None):
    """``(p, items, merged, hist)`` of a join of ``n_fibers`` fibers: the probability that a
    joined fiber is nonempty, the joined items, the items of the operands' union (the
    joiner's steps) and the joined coordinates' histogram. ``operands``: ``(p_i, a_i)``
    (nonempty with ``p_i``, then ``a_i`` coordinates) for the density model (``joins.fold``);
    ``arrays``: ``(hist_i, data_i, size_i)``, used when an operand has a histogram (a fiber
    holds coordinate ``c`` with probability ``hist_i(c) / fibers``). ``native``: as for
    :func:`accumulate`."""
    joined = None
    if n_fibers:
        for a in arrays:
            if a[0] is not None:
                joined = (_joined_hist if native is None else native.joined_hist)(
                    arrays, n_fibers, union)
                break
    if joined is None:
        pj, aj = fold(operands, size, union)
        pu, au = fold(operands, size, True)
        return pj, n_fibers * pj * aj, n_fibers * pu * au, None
    return _with_histogram(operands, size, union, *joined)


def _with_histogram(operands, size: float, union: bool, hist, items: float, merged: float):
    """:func:`join_counts`' result once the operands' histograms gave ``(hist, items,
    merged)``: the probability a joined fiber is nonempty from the operands' ``p_i``."""
    if union:
        miss = 1.0
        for q, _ in operands:
            miss *= 1.0 - q
        pj = 1.0 - miss
    else:
        pj = fold(operands, size, False)[0]
    return pj, items if pj else 0.0, merged, hist


def join_two(p1: float, a1: float, p2: float, a2: float, size: float, union: bool,
             n_fibers: float, h1, data1: float, size1: float, h2, data2: float,
             size2: float, native):
    """:func:`join_counts` of two operands with ``native`` (a compiled kernel's joiner),
    flat: both histograms of one length are one compiled call (``native.join_all``),
    other cases :func:`join_counts` itself."""
    if n_fibers and h1 is not None and h2 is not None and len(h1) == len(h2):
        hist, items, merged = native.join_all((h1, h2), n_fibers, union)
        # join_counts' product over the operands, two factors
        pj = 1.0 - (1.0 - p1) * (1.0 - p2) if union else fold(((p1, a1), (p2, a2)), size,
                                                               False)[0]
        return pj, items if pj else 0.0, merged, hist
    return join_counts(((p1, a1), (p2, a2)), size, union, n_fibers,
                       ((h1, data1, size1), (h2, data2, size2)), native)


def join_many(operands, size: float, union: bool, n_fibers: float, hists: tuple,
              datas: tuple, sizes: tuple, native):
    """:func:`join_counts` with ``native`` (a compiled kernel's joiner of three or more
    operands), the arrays given as their histograms, data and sizes: operands that all have
    histograms of one length are one ``native.join_all`` call on ``hists`` itself (what
    ``native.joined_hist`` calls then, without its loop and tuples), other cases
    :func:`join_counts` itself."""
    if n_fibers:
        length = -1
        for h in hists:
            if h is None or (length >= 0 and len(h) != length):
                break
            length = len(h)
        else:
            return _with_histogram(operands, size, union,
                                   *native.join_all(hists, n_fibers, union))
    return join_counts(operands, size, union, n_fibers, tuple(zip(hists, datas, sizes)),
                       native)


def thin_sizes(operands, items: float):
    """The fiber sizes (:attr:`Level.sizes`) of an intersection: the first operand's that
    knows them (``(sizes, data)`` per operand), thinned uniformly to ``items``."""
    for sizes, data in operands:
        if sizes is not None and data:
            weights, each, scale, by_size = sizes
            return (weights, each, scale * (items / data), by_size)
    return None


def _joined_hist(arrays, n_fibers: float, union: bool):
    """``(hist, items, merged)`` of a join from its operands' histograms (an operand without
    one spread uniformly over its ``size``), or None when their lengths differ: a fiber holds
    coordinate ``c`` of operand ``i`` with probability ``x_i(c) = h_i(c) / fibers``; the
    join holds it with ``Π x_i`` (intersection) or ``1 − Π (1 − x_i)`` (union); ``merged``
    is the union's items."""
    inv = 1.0 / n_fibers
    present, length = [], None
    for h, data, size in arrays:
        if h is None:
            m = max(int(round(size)), 1)
            x = min(data / m * inv, 1.0)           # uniform: a scalar, summed as m of them
        else:
            m = len(h)
            x = np.minimum(h * inv, 1.0)
        if length is not None and m != length:
            return None
        length = m
        present.append(x)
    if len(present) == 2:
        x1, x2 = present
        hit = x1 * x2
        s1, s2, sh = (float(_sum(x)) if isinstance(x, np.ndarray) else x * length
                      for x in (x1, x2, hit))
        anyof = s1 + s2 - sh
        hist = ((x1 + x2 - hit) if union else hit) * n_fibers
        if not isinstance(hist, np.ndarray):
            hist = np.full(length, hist)
        return hist, n_fibers * (anyof if union else sh), n_fibers * anyof
    hit, miss = present[0], 1.0 - present[0]
    for x in present[1:]:
        hit, miss = hit * x, miss * (1.0 - x)
    anyof = 1.0 - miss
    hist = n_fibers * (anyof if union else hit)
    if not isinstance(hist, np.ndarray):
        hist = np.full(length, hist)
    merged = n_fibers * (float(_sum(anyof)) if isinstance(anyof, np.ndarray)
                         else anyof * length)
    return hist, float(_sum(hist)), merged


_sum = np.add.reduce


def _array(block, ins, ctx, out):
    refs = ins[0][-1]
    stats = ctx.inputs[block.attrs["tensor"]]
    out.val_reads = refs.data
    out.steps = refs.tokens
    share = refs.data / refs.items if refs.items else 0.0
    return [ins[0][:-1] + (refs.with_(nulls=0.0, nonzero=stats.nonzero_fraction * share,
                                      hist=None),)]


_KEEPS_ZEROS = {"neg", "relu", "sqrt", "tanh", "gelu", "scalar_mul", "scalar_div", "mul", "div"}


def _alu(block, ins, ctx, out):
    op = block.attrs.get("op")
    values = ins[0][-1]
    z = values.nonzero
    if len(ins) == 2:
        z2 = ins[1][-1].nonzero
        z = z * z2 if op in ("mul", "min", "mask_fill") else 1.0 - (1.0 - z) * (1.0 - z2)
        if op == "div":
            z = values.nonzero
    elif op == "relu":
        z = z / 2.0            # a symmetric sign distribution: half the nonzeros clamp to 0
    elif op not in _KEEPS_ZEROS:
        z = 1.0
    out.ops = values.items
    out.steps = values.tokens
    return [ins[0][:-1] + (values.with_(nulls=0.0, nonzero=z, hist=None),)]


def _reduce(block, ins, ctx, out):
    profile = ins[0]
    values, parent = profile[-1], profile[-2]
    out.ops = values.data
    out.steps = values.data + values.stops + 1.0
    per_fiber = values.data / max(parent.items - own_empty(profile), 1.0)
    z = -math.expm1(per_fiber * math.log1p(-min(values.nonzero, 1.0 - 1e-12)))
    if len(ins) > 1:                    # outer coordinates: no value for empty outer fibers
        level = parent.with_(nulls=0.0, nonzero=z, hist=None)
    else:
        level = parent.with_(items=values.stops, nulls=0.0, bare=0.0, nonzero=z, hist=None)
    return [profile[:-2] + (level,)]


def _spacc(block, ins, ctx, out):
    n = int(block.attrs.get("order", len(ins) - 1))
    values = ins[n]
    r = len(values) - n - 1
    if r < 1:
        raise ValueError(f"{block.name}: spacc of order {n} needs a reduced level above its "
                         f"{n} coordinate levels")
    above, reduced = values[r - 1], values[r]
    nonempty = max(above.items - max(reduced.bare - above.bare, 0.0), 0.0)
    draws = reduced.items / nonempty if nonempty else 0.0
    empty_below = own_empty(ins[0]) / reduced.items if reduced.items else 0.0
    out.ops = values[-1].data
    out.steps = tokens(values)
    crds = [ins[j][-1] for j in range(n)]
    counts = accumulate(reduced.items, reduced.size, reduced.sizes, above.items, nonempty,
                        draws, empty_below, [(c.hist, c.data, c.size) for c in crds])
    levels: list[Level] = []
    parent = above
    for j, crd in enumerate(crds):
        keys, empty, hist, sizes = counts[4 * j:4 * j + 4]
        level = parent.child(keys, empty, size=crd.size, hist=hist, sizes=sizes)
        levels.append(level)
        parent = level
    # A key's value merges the values that land on it: values in per key out on average.
    z = values[-1].nonzero
    per_key = values[-1].data / levels[-1].items if levels[-1].items else 0.0
    merged = -math.expm1(per_key * math.log1p(-min(z, 1.0 - 1e-12))) if per_key else z
    head = values[:r]
    # One flush per reduced fiber, sent at once; its consumer then needs a step per token.
    out.burst = max(levels[-1].tokens / max(reduced.stops, 1.0), 1.0)
    outs = [head + tuple(levels[:j + 1]) for j in range(n)]
    outs.append(head + tuple(levels[:-1]) + (levels[-1].with_(nonzero=min(merged, 1.0)),))
    return outs


def accumulate(items: float, size: float, sizes, above: float, nonempty: float, draws: float,
               empty_below: float, crds, memo: NodeMemo | None = None,
               native=None) -> tuple:
    """The key levels of a sparse accumulator that merges ``nonempty`` fibers (of ``draws``
    items on average, or of the measured ``sizes``, :attr:`Level.sizes`) of a reduced level
    of ``items`` coordinates out of ``size``, under ``above`` items; ``empty_below``: the
    share of reduced items whose first key level is empty; ``crds``: ``(hist, data, size)``
    of each key level's input, or ``(hist, data, size, groups)``, ``groups`` what the
    histogram's equal entries are known from (:func:`hist_groups`). Returns ``(keys, empty,
    hist, sizes)`` of each key level, flattened. ``memo``: the call site's
    :class:`NodeMemo` (None: nothing kept); ``native``: :mod:`fuseflow.explore.native` to do
    the array work in compiled calls (a compiled kernel's), or None (numpy)."""
    if native is not None and len(crds) == 1:
        h, data, crd_size, *known = crds[0]
        return accumulate_key(items, size, sizes, above, nonempty, draws, empty_below, h, 1.0,
                              data, crd_size, known[0] if known else None, memo, native)
    return _accumulate(items, size, sizes, above, nonempty, draws, empty_below, crds, memo,
                       native)


def _accumulate(items: float, size: float, sizes, above: float, nonempty: float,
                draws: float, empty_below: float, crds, memo: NodeMemo | None,
                native) -> tuple:
    """:func:`accumulate` without the one-call path of :func:`accumulate_key`."""
    weights, by_size, member = _fiber_sizes(sizes, items, nonempty, draws, memo, native)
    out = []
    space = 1.0
    for j, (h, data, crd_size, *known) in enumerate(crds):
        space *= max(crd_size, 1.0)
        hist = None
        if j == 0 and h is not None and items:
            # Each reduced item holds coordinate c with probability hist(c) / items; a
            # fiber of `draws` items keeps c unless every one misses it.
            # Averaged over the fibers' sizes (the formula is concave in the size).
            groups = hist_groups(known[0]) if known else None
            if native is not None:
                hist, per_fiber, keys = native.held(weights, by_size, h, 1.0 / items, size,
                                                    groups)
            else:
                q = np.minimum(h * (1.0 / items), 1.0)
                hist, per_fiber = held(weights, by_size, q, size, groups)
                keys = float(_sum(hist))
        else:
            per_item = data / items if items else 0.0
            per_fiber = np.array([distinct(d, per_item, space) for d in by_size])
            keys = dot(weights, per_fiber)
        key_sizes = None
        if j == 0:
            empty = (above - nonempty) + (dot(weights, empty_below ** by_size)
                                          if empty_below or not draws else 0.0)
            if member is not None:
                key_sizes = _key_sizes(sizes[0], per_fiber, member, keys, memo, native)
        else:
            empty = 0.0
        out += (keys, empty, hist, key_sizes)
    return tuple(out)


def accumulate_key(items: float, size: float, sizes, above: float, nonempty: float,
                   draws: float, empty_below: float, h, hscale: float, data: float,
                   crd_size: float, known, memo: NodeMemo | None, native) -> tuple:
    """:func:`accumulate` of one key level (``crds`` the single ``(h · hscale, data,
    crd_size, known)``: a compiled kernel passes a scan's measured counts and their factor
    without building the histogram, ``hscale`` 1 otherwise) with ``native``. With a
    histogram and known fiber sizes in at most :data:`SIZE_BINS` groups (an aggregation
    over measured node degrees) it is one compiled call (``native.accumulate_key``), the
    node sums kept in ``memo``; without known sizes (fibers of the mean size) one call
    of ``native.held_mean``; other cases take :func:`accumulate`'s general path."""
    if sizes is not None and items and h is not None and sizes[3] is not None:
        weights, _, scale, (unique, index) = sizes
        # hist_groups(known), inline
        coords = known if known is None or type(known) is tuple \
            else known.coord_groups or coord_groups(known)
        n_unique = len(unique)
        if n_unique <= SIZE_BINS and (coords is not None or h.size * n_unique <= UNIQUE_ABOVE):
            if type(index) is NodeMap:
                mapped, base, table = True, index.base, index.table
                n_groups = len(table)
            else:
                mapped, base, table, n_groups = False, index, _NO_TABLE, n_unique
            kept = memo.sums if memo is not None else None
            if kept is not None and kept[0][0] is weights and kept[0][1] is base \
                    and kept[0][2] == n_groups:
                grouped, keyed, by_key = kept[1]         # _node_sums' entry, checked inline
            else:
                grouped, keyed, by_key = _node_sums(weights, base, n_groups, memo, native)
            index_c, counts, first = coords if coords is not None else _NO_GROUPS
            need = bool(empty_below) or not draws
            extended = np.empty(len(table) + 1, dtype=np.intp) if mapped else _NO_TABLE
            found, keys, total, empty, out = native.accumulate_key(
                grouped, table, unique, scale, items, nonempty, h, hscale, 1.0 / items, first,
                counts, index_c, float(size), by_key, empty_below, extended, need)
            if found:
                hist, groups = out[:-n_unique - 1], out[-n_unique - 1:]
                key_sizes = (weights, None, keys / total,
                             (groups, NodeMap(keyed, extended) if mapped else keyed)) \
                    if total else None
                return (keys, (above - nonempty) + (empty if need else 0.0), hist, key_sizes)
    elif sizes is None and items and h is not None:
        # Fibers of the mean size (_fiber_sizes without sizes) in one compiled call, the
        # keys' groups known or too few keys to group (native.held's cases without
        # np.unique).
        coords = known if known is None or type(known) is tuple \
            else known.coord_groups or coord_groups(known)
        if coords is not None or h.size <= UNIQUE_ABOVE:
            index_c, counts, first = coords if coords is not None else _NO_GROUPS
            hist, keys = native.held_mean(nonempty, draws, h, hscale, 1.0 / items, first,
                                          counts, index_c, float(size))
            return (keys, (above - nonempty) + (dot(np.array([nonempty]), empty_below
                                                    ** np.array([draws]))
                                                if empty_below or not draws else 0.0),
                    hist, None)
    if h is not None and hscale != 1.0:
        h = h * hscale
    return _accumulate(items, size, sizes, above, nonempty, draws, empty_below,
                       ((h, data, crd_size, known),), memo, native)


def _node_sums(weights: np.ndarray, base: np.ndarray, groups: int, memo: NodeMemo | None,
               native=None):
    """``(_grouped, *_keyed)`` of ``weights`` over ``base`` (kept in ``memo``; ``native``:
    in one compiled call)."""
    key = (weights, base, groups)
    kept = _recall(memo, "sums", key)
    if kept is not None:
        return kept
    if native is not None and len(base):        # (numpy's bincount of nothing is integral)
        return _keep(memo, "sums", key, native.node_sums(weights, base, groups))
    return _keep(memo, "sums", key, (_grouped(weights, base, groups, None),
                                     *_keyed(weights, base, groups, None)))


def hist_groups(source) -> tuple | None:
    """The ``(index, counts, first)`` groups of equal entries of a histogram (see
    :func:`~fuseflow.explore.joins.held`) from ``source``: None (not known), the groups
    themselves, or the measured :class:`LevelStats` whose ``coords`` the histogram is a
    multiple of (its :func:`~fuseflow.explore.stats.coord_groups`, computed once per
    level)."""
    if source is None or isinstance(source, tuple):
        return source
    return coord_groups(source)


class NodeMemo:
    """The node-vector work of one sparse accumulator (one call site of :func:`accumulate`),
    kept with the arrays it was computed from. The fiber sizes an accumulator averages over
    come with a weight and a size group per coordinate of the level above (2,708 on Cora,
    17,716 on DBLP); adding the weights up per group takes most of a repeated prediction of
    a small graph, yet its inputs are the compiled kernel's constants, a measured level's
    ``by_parent`` groups and the maps built from them once here (:class:`NodeMap`): the same
    objects on every prediction from the same measured statistics. Each entry is reused
    while its arrays are the same objects (``is``; node vectors are never changed in place)
    and replaced otherwise: one ``(key, value)`` entry per kind, the arrays of the last
    prediction (:func:`_recall`, :func:`_keep`)."""

    __slots__ = ("grouped", "keyed", "bins", "sums")

    def __init__(self):
        self.grouped = self.keyed = self.bins = self.sums = None


class NodeMap:
    """The group of each coordinate of a level, ``table[base]``, left unapplied: ``base``
    maps the coordinates to groups fixed by the statistics (measured fiber sizes, kept in a
    :class:`NodeMemo`), ``table`` those groups to this prediction's (size bins, key
    counts), so the work per prediction is on ``table``, a few dozen entries. Built
    per coordinate only for a written level (:meth:`resolve`)."""

    __slots__ = ("base", "table")

    def __init__(self, base: np.ndarray, table: np.ndarray):
        self.base, self.table = base, table

    def resolve(self) -> np.ndarray:
        """The group of each coordinate."""
        return self.table[self.base]


def _recall(memo: NodeMemo | None, slot: str, key: tuple):
    """What ``memo`` keeps in ``slot`` for ``key`` (its arrays the same objects, its numbers
    equal), or None."""
    kept = getattr(memo, slot) if memo is not None else None
    if kept is None:
        return None
    for a, b in zip(kept[0], key):
        if a is not b and (isinstance(b, (np.ndarray, NodeMap)) or a != b):
            return None
    return kept[1]


def _keep(memo: NodeMemo | None, slot: str, key: tuple, value):
    """``value``, kept in ``memo``'s ``slot`` for ``key``."""
    if memo is not None:
        setattr(memo, slot, (key, value))
    return value


def _grouped(weights: np.ndarray, index: np.ndarray, groups: int,
             memo: NodeMemo | None) -> np.ndarray:
    """``bincount(index, weights)`` over ``groups`` groups (kept in ``memo``)."""
    key = (weights, index, groups)
    kept = _recall(memo, "grouped", key)
    if kept is not None:
        return kept
    return _keep(memo, "grouped", key, np.bincount(index, weights=weights, minlength=groups))


def _keyed(weights: np.ndarray, member: np.ndarray, groups: int,
           memo: NodeMemo | None) -> tuple[np.ndarray, np.ndarray]:
    """``member`` where the weight is positive, else ``groups`` (no fiber merged), and the
    weights added up per entry (kept in ``memo``)."""
    key = (weights, member, groups)
    kept = _recall(memo, "keyed", key)
    if kept is not None:
        return kept
    index = np.where(weights > 0.0, member, groups)
    return _keep(memo, "keyed", key,
                 (index, np.bincount(index, weights=weights, minlength=groups + 1)))


def _key_sizes(weights: np.ndarray, per_fiber: np.ndarray, member,
               keys: float, memo: NodeMemo | None = None, native=None) -> tuple | None:
    """The :attr:`Level.sizes` of an accumulator's first key level: under each coordinate of
    the level above, the keys of a fiber of that coordinate's size (``per_fiber`` of its size
    group ``member``, an array or a :class:`NodeMap`; none where no fiber is merged,
    ``weights`` 0), scaled to add up to ``keys``. A result written from it keeps its fibers'
    sizes (``by_parent``), so the next kernel's accumulator averages over them too instead
    of applying itself to the mean fiber. The sizes per coordinate are left to be taken
    from the groups (None). ``native``: as for :func:`accumulate`."""
    n = len(per_fiber)
    mapped = isinstance(member, NodeMap)
    if mapped:
        base, by_base = _keyed(weights, member.base, len(member.table), memo)
        table = member.table
    else:
        base, by_base = _keyed(weights, member, n, memo)
        table = _NO_TABLE
    if native is not None:
        groups, extended = np.empty(n + 1), np.empty(len(table) + mapped, dtype=np.intp)
        total = native.key_counts(per_fiber, by_base, table, groups, extended)
        table = extended
    else:
        groups = np.concatenate((per_fiber, _ZERO))
        counts = by_base
        if mapped:
            table = np.append(table, n)
            counts = np.bincount(table, weights=by_base, minlength=n + 1)
        total = dot(counts, groups)             # Σ weights · sizes, summed per group
    if not total:
        return None
    return (weights, None, keys / total, (groups, NodeMap(base, table) if mapped else base))


SIZE_BINS = 64
"""Fiber sizes an accumulator's keys are averaged over (more distinct sizes are binned)."""

_BIN_EDGES = np.linspace(0.0, 1.0, SIZE_BINS + 1)[1:-1]
_ZERO = np.zeros(1)
_NO_TABLE = np.zeros(0, dtype=np.intp)
_NO_GROUPS = (_NO_TABLE, _NO_TABLE, _NO_TABLE)


def _fiber_sizes(known, items: float, nonempty: float, draws: float,
                 memo: NodeMemo | None = None, native=None):
    """``(weights, sizes, member)`` of the fibers an accumulator merges: their measured sizes
    when the reduced level knows them (``known``, its :attr:`Level.sizes`, adding up to its
    ``items``), else ``nonempty`` fibers of the mean size ``draws``. ``member`` maps each
    coordinate of the level above (the index of :attr:`Level.sizes`) to its entry of
    ``sizes`` (an array or a :class:`NodeMap`), or is None. Sizes of no weight, or of no
    coordinates, get weight 0. ``native``: as for :func:`accumulate` (up to
    :data:`SIZE_BINS` sizes)."""
    if known is not None and items:
        weights, sizes, scale, groups = known
        unique, index = groups if groups is not None else np.unique(sizes,
                                                                    return_inverse=True)
        mapped = isinstance(index, NodeMap)
        if mapped:
            grouped = _grouped(weights, index.base, len(index.table), memo)
        else:
            grouped = _grouped(weights, index, len(unique), memo)
        if native is not None and len(unique) <= SIZE_BINS:
            out, sizes = np.empty(len(unique)), np.empty(len(unique))
            if native.size_weights(grouped, index.table if mapped else _NO_TABLE, unique,
                                   scale, items, nonempty, out, sizes):
                return out, sizes, index
            return np.array([nonempty]), np.array([draws]), None
        if mapped:
            grouped = np.bincount(index.table, minlength=len(unique), weights=grouped)
        total = dot(grouped, unique) * scale        # Σ weights · sizes, summed per group
        if abs(total - items) <= 0.01 * items:
            grouped, unique, index, weight = _size_bins(unique, grouped, scale, index, memo)
            return grouped * (nonempty / weight if weight else 0.0), unique, index
    return np.array([nonempty]), np.array([draws]), None


def _size_bins(unique: np.ndarray, grouped: np.ndarray, scale: float, index,
               memo: NodeMemo | None) -> tuple:
    """``(weights, sizes, member, total weight)`` of fiber sizes ``unique · scale`` of
    weights ``grouped`` (coordinates in groups ``index``), in at most :data:`SIZE_BINS`
    bins. Kept in ``memo`` for the same arrays and scale: sizes measured once, weighted by
    a compiled constant (an accumulator reading a measured level)."""
    key = (unique, grouped, scale, index)
    kept = _recall(memo, "bins", key)
    if kept is not None:
        return kept
    unique = unique * scale
    grouped = np.where(unique <= 0.0, 0.0, grouped)
    if len(unique) > SIZE_BINS:
        # Sizes (ascending) in bins of about equal weight, each at its mean size.
        order = np.argsort(unique)
        ranked = grouped[order]
        edges = np.searchsorted(np.cumsum(ranked) / ranked.sum(), _BIN_EDGES)
        bin_of = np.empty(len(unique), dtype=np.intp)
        bin_of[order] = np.searchsorted(edges, np.arange(len(unique)), side="right")
        total = np.bincount(bin_of, weights=grouped, minlength=SIZE_BINS)
        mass = np.bincount(bin_of, weights=grouped * unique, minlength=SIZE_BINS)
        unique = mass / np.where(total > 0.0, total, 1.0)
        grouped = total
        index = NodeMap(index.base, bin_of[index.table]) \
            if isinstance(index, NodeMap) else NodeMap(index, bin_of)
    return _keep(memo, "bins", key, (grouped, unique, index, float(_sum(grouped))))


def written_level(refs: float, items: float, empty: float, size: int, hist, sizes,
                  parent_size: int, native=None) -> LevelStats:
    """The statistics of a written level of a kernel result: ``refs`` fibers, ``items``
    coordinates, ``empty`` empty fibers, the histogram of its coordinates (``hist``, when it
    spans the level) and, under a dense level of ``parent_size`` coordinates
    (``parent_size`` 0 otherwise), its fibers' sizes per parent coordinate when the stream
    knew them (:attr:`Level.sizes`, e.g. an accumulator's keys per row): ``by_parent``
    scaled to the written ``items``, ``empty_by_parent`` 1 for a coordinate whose fibers are
    empty and the remaining empty fibers spread over the others. ``native``: as for
    :func:`accumulate` (an accumulator's keys)."""
    coords = hist if hist is not None and len(hist) == size else None
    if sizes is None or not parent_size or not items or len(sizes[0]) != parent_size:
        return LevelStats(refs, items, empty, size, coords)
    weights, each, scale, groups = sizes
    if native is not None and each is None and groups is not None:
        unique, index = groups
        mapped = type(index) is NodeMap
        factor, by_parent, empty_by_parent, resolved, scaled = native.written_arrays(
            weights, unique, index.base if mapped else index,
            index.table if mapped else _NO_TABLE, scale, refs / parent_size, items, empty,
            mapped)
        if not factor:
            return LevelStats(refs, items, empty, size, coords)
        return LevelStats(refs, items, empty, size, coords, by_parent, empty_by_parent,
                          (scaled, resolved if mapped else index))
    if groups is not None:
        unique, index = groups
        if isinstance(index, NodeMap):
            index = index.resolve()
        if each is None:                        # an accumulator's keys (_key_sizes)
            each = unique[index]
    per = refs / parent_size                    # stored fibers under each parent coordinate
    total = float(each.sum()) * per
    if not total or abs(dot(weights, each) * scale - items) > 0.01 * items:
        return LevelStats(refs, items, empty, size, coords)
    factor = items / total
    by_parent = each * factor
    zero = by_parent <= 0.0
    nonzero = parent_size - int(np.count_nonzero(zero))
    rest = max(empty - per * (parent_size - nonzero), 0.0)
    share = min(rest / (per * nonzero), 1.0) if nonzero else 0.0
    empty_by_parent = np.where(zero, 1.0, share)
    groups = np.unique(by_parent, return_inverse=True) if groups is None \
        else (unique * factor, index)
    return LevelStats(refs, items, empty, size, coords, by_parent, empty_by_parent, groups)


def _crddrop(block, ins, ctx, out):
    inner, outer = ins[0], ins[1]
    o = outer[-1]
    dropped = own_empty(inner)
    nonempty = max(fibers(outer) - own_empty(outer), 0.0)
    per_fiber = o.items / nonempty if nonempty else 0.0
    drop = dropped / o.items if o.items else 0.0
    kept = o.with_(items=o.items - dropped, bare=o.bare + nonempty * drop ** per_fiber,
                   hist=None if o.hist is None else o.hist * (1.0 - drop))
    level = kept.child(inner[-1].items, 0.0, inner[-1].nulls, inner[-1].size)
    out.steps = tokens(outer)
    return [outer[:-1] + (kept, level), outer[:-1] + (kept,)]


def _crdhold(block, ins, ctx, out):
    inner, outer = ins[0], ins[1]
    out.steps = tokens(inner)
    return [inner, inner[:-1] + (inner[-1].with_(size=outer[-1].size, hist=None),)]


def _level_write(block, ins, ctx, out):
    crd = ins[0][-1]
    result, level = int(block.attrs["result"]), int(block.attrs["level"])
    stored = ctx.outputs[result].levels[level].format
    if stored != "dense":
        out.crd_writes = crd.data
    if stored == "compressed":
        out.ref_writes = crd.stops
    out.steps = crd.tokens
    ctx.written[(result, level)] = ins[0]
    return []


def _value_write(block, ins, ctx, out):
    out.val_writes = ins[0][-1].items
    out.steps = tokens(ins[0])
    ctx.written[(int(block.attrs["result"]), None)] = ins[0]
    return []


def _fork(block, ins, ctx, out):
    """Deals the forked level's data tokens round robin, the counter running on across
    fibers: of ``N`` tokens lane ``p`` gets ``ceil((N - p) / P)`` (none when ``N <= p``: a
    level with fewer coordinates than lanes leaves lanes idle); stops go to every lane."""
    lanes = len(block.outputs)
    last = ins[0][-1]
    outs = []
    for p in range(lanes):
        share = math.ceil((last.items - p) / lanes - 1e-9) if last.items > p else 0.0
        scale = min(share / last.items, 1.0) if last.items > 0 else 0.0
        outs.append(ins[0][:-1] + (last.with_(
            items=last.items * scale, nulls=last.nulls * scale,
            hist=None if last.hist is None else last.hist * scale),))
    out.steps = last.tokens
    return outs


def _join(block, ins, ctx, out):
    lanes = ins[1:]                               # ins[0] is the order (free)
    first = lanes[0][-1]
    merged = first.with_(items=sum(p[-1].items for p in lanes),
                         nulls=sum(p[-1].nulls for p in lanes),
                         hist=None if first.hist is None else first.hist * len(lanes))
    out.steps = sum(tokens(p) for p in lanes)
    return [lanes[0][:-1] + (merged,)]


RULES = {
    "root": _root, "scan": _scan, "locate": _locate, "repsiggen": _passthrough,
    "repeat": _repeat, "intersect": _joiner, "union": _joiner, "array": _array, "alu": _alu,
    "reduce": _reduce, "spacc": _spacc, "crddrop": _crddrop, "crdhold": _crdhold,
    "level_write": _level_write, "value_write": _value_write, "fork": _fork, "join": _join,
    "broadcast": _passthrough,
}
"""Block kind -> rule."""


def apply(block: Block, ins: list[Profile],
          ctx: RuleContext) -> tuple[list[Profile], BlockPrediction]:
    """Runs ``block``'s rule: its output profiles and its prediction (steps and counters,
    scaled by :func:`tile_factors`; ``tokens_out`` filled from the output profiles)."""
    out = BlockPrediction(block.name, block.kind)
    outs = RULES[block.kind](block, ins, ctx, out)
    for counter, factor in tile_factors(block).items():
        setattr(out, counter, getattr(out, counter) * factor)
    out.tokens_out = {ch: tokens(p) for ch, p in zip(block.outputs, outs)}
    return outs, out


def tile_factors(block: Block) -> dict[str, float]:
    """Per counter, the elements each token the rule counts stands for when ``block``'s
    values are tiles (the loader's ``tiles``; the simulator counts elements): a value load
    reads its tile, a value writer writes it, an accumulator or a reduction adds it, an ALU
    does :func:`~fuseflow.sim.blocks.tiles.product_ops` per step (result elements times
    contracted indices). Empty for scalar values."""
    tiles = block.attrs.get("tiles")
    if not tiles:
        return {}
    ins, outs = tiles

    def elements(shape) -> float:
        return float(math.prod(shape)) if shape else 1.0

    kind = block.kind
    if kind == "array":
        return {"val_reads": elements(outs[0] if outs else ())}
    if kind == "alu":
        from fuseflow.dialects.tiles import TileSpec
        from fuseflow.sim.blocks.tiles import product_ops

        spec = block.attrs.get("tile")
        spec = TileSpec.parse(spec, len(ins)) if spec else None
        return {"ops": float(product_ops(spec, ins, outs[0] if outs else ()))}
    if kind in ("spacc", "reduce"):
        return {"ops": elements(next((t for t in ins if t), ()))}
    if kind == "value_write":
        return {"val_writes": elements(ins[0] if ins else ())}
    return {}

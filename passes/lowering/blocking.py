"""Blocked (BSR) dimensions as scalar index notation: each one split into block and offset.

A BSR matrix ``A[i, k]`` with ``b×c`` blocks stores four levels: block rows ``i // b``
(dense), block columns ``k // c`` (compressed), in-block rows ``i % b`` and in-block columns
``k % c`` (dense: zeros inside a stored block are explicit values). :func:`blocked_variants`
splits every dimension variable a blocked level indexes into two variables: the *block index*
(it keeps the variable's name, extent ``n / b``) and the *in-block offset* (a fresh variable,
extent ``b``). The BSR use then scans its four levels with four variables, and the order
search and the stream lowering see an ordinary kernel. Every other mention of a split
variable is rewritten over the pair:

* a **dense level** over a split dimension (a dense operand, or the dense rows of a CSR
  operand) is read as two dense levels through a host-side ``tensor.expand_shape`` view
  (:class:`View`): dense coordinate ``c`` of parent ``r`` has reference ``r*n + c``, which is
  ``(r*(n/b) + c//b)*b + c%b``, so the view is the same storage read with other strides;
* a **compressed or singleton level** over a split dimension cannot be split that way (its
  coordinates would have to be divided): a located error names the operand, level and
  dimension;
* a **reduction** over a split variable reduces over both variables;
* a **result** with the same blocking is written natively at its four levels; a result whose
  dense levels cover a split dimension is written expanded and turned back into the kernel's
  result type on the host after the graph (:class:`ResultView`: ``linalg.transpose``, then
  ``tensor.collapse_shape``). A dense result is written either row-major expanded
  (``[n/b, b, m/c, c]``) or block-major (``[n/b, m/c, b, c]``, the BSR level order); the
  layout whose best dataflow order ranks best is kept, row-major among equals, or with an
  explicit order the first layout that order visits in storage order.

Two blocked levels that split one dimension with different block sizes are an error.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from fuseflow import mlir
from fuseflow.dialects.types import storage_levels
from fuseflow.passes.lowering.einsum import (
    KernelExpr,
    LoweringError,
    Root,
    Use,
    _var_rank,
    tree_rebuilder,
)
from fuseflow.passes.lowering.order import order_cost, ranked_orders, violation


@dataclass(frozen=True)
class Split:
    """A dimension variable split by blocked levels: ``var`` (now the block index) and
    ``offset`` (the in-block offset) with ``var_old = var * block + offset``."""

    var: str
    offset: str
    block: int


@dataclass(frozen=True)
class View:
    """A host-side ``tensor.expand_shape`` of kernel input ``operand`` read by a rewritten use."""

    operand: int
    result_type: object                          # the expanded RankedTensorType
    reassociation: tuple[tuple[int, ...], ...]

    @property
    def key(self):
        return (self.operand, str(self.result_type))


@dataclass(frozen=True)
class ResultView:
    """A graph result written over split dimensions, or transposed: ``graph_type`` is
    transposed by ``permutation`` (if any) into ``expanded_type`` and collapsed by
    ``reassociation`` (if any)."""

    graph_type: object
    expanded_type: object
    permutation: tuple[int, ...] | None
    reassociation: tuple[tuple[int, ...], ...] | None


@dataclass
class Blocking:
    """A kernel with its blocked dimensions split, and the host views it needs."""

    expr: KernelExpr
    views: dict[int, View]                       # uid -> the view its use reads
    results: dict[int, ResultView]               # root index -> its host-side view
    splits: dict[str, Split] = field(default_factory=dict)  # split variable -> its split

    @property
    def offsets(self) -> tuple[str, ...]:
        """The in-block offset variables."""
        return tuple(sp.offset for sp in self.splits.values())


def blocked_variants(expr: KernelExpr, input_types: list, loc) -> list[Blocking]:
    """``expr`` with the dimensions blocked levels index split (see the module doc), once per
    way its dense results over split dimensions can be laid out (row-major first).

    ``input_types`` are the kernel inputs' types; errors are located at ``loc``."""
    splits = _collect_splits(expr, input_types, loc)
    if not splits:
        return [Blocking(expr, {}, {})]
    uses, views = {}, {}
    for u in expr.uses:
        uses[u.uid], view = _split_use(u, input_types[u.operand], splits, loc)
        if view is not None:
            views[u.uid] = view
    sizes = {}
    for var, extent in expr.sizes.items():
        if var in splits:
            sizes[var] = extent // splits[var].block
            sizes[splits[var].offset] = splits[var].block
        else:
            sizes[var] = extent
    sizes = dict(sorted(sizes.items(), key=lambda kv: _var_rank(kv[0])))
    layouts = [_result_layouts(root, splits, loc) for root in expr.roots]
    variants = []
    for choice in itertools.product(*layouts):
        roots = [replace(r, out_vars=out_vars, result_type=graph_type)
                 for r, (out_vars, graph_type, _) in zip(expr.roots, choice)]
        split = _rebuild(KernelExpr(roots, list(expr.uses), sizes, expr.loc), uses, splits)
        results = {r.index: view for r, (_, _, view) in zip(expr.roots, choice) if view}
        variants.append(Blocking(split, views, results, splits))
    return variants


def _collect_splits(expr: KernelExpr, input_types: list, loc) -> dict[str, Split]:
    """The block size of every variable a blocked level indexes (they must agree)."""
    found: dict[str, tuple[int, str]] = {}

    def note(var, kind, block, who):
        if kind == "id":
            return
        if var in found and found[var][0] != block:
            raise LoweringError(loc, f"dimension variable {var} is blocked by {found[var][0]} in "
                                     f"{found[var][1]} and by {block} in {who}; the block sizes "
                                     "of a shared dimension must agree")
        found.setdefault(var, (block, who))

    for u in expr.uses:
        for var, (kind, block) in zip(u.vars, u.blocks):
            note(var, kind, block, _operand_name(u.operand, input_types))
    for root in expr.roots:
        _, levels = storage_levels(root.result_type)
        for var, level in zip(root.out_vars, levels):
            note(var, level.kind, level.block, f"result #{root.index} ('{root.result_type}')")
    for var, (block, who) in found.items():
        if expr.sizes[var] % block:
            raise LoweringError(loc, f"block size {block} of {who} does not divide the extent "
                                     f"{expr.sizes[var]} of dimension variable {var}")
    next_rank = max(_var_rank(v) for v in expr.sizes) + 1
    splits = {}
    for var in sorted(found, key=_var_rank):
        splits[var] = Split(var, f"d{next_rank}", found[var][0])
        next_rank += 1
    return splits


def _operand_name(operand: int, input_types: list) -> str:
    return f"operand #{operand} ('{input_types[operand]}')"


def _split_vars(variables, splits: dict[str, Split]) -> tuple[str, ...]:
    out = []
    for v in variables:
        out += [splits[v].var, splits[v].offset] if v in splits else [v]
    return tuple(out)


def _split_use(u: Use, tensor_type, splits: dict[str, Split], loc) -> tuple[Use, View | None]:
    """``u`` over split variables, and the view it reads (None: it reads its operand)."""
    _, levels = storage_levels(tensor_type)
    what = f"operand #{u.operand} ('{tensor_type}')"
    if u.blocks:
        names = []
        for var, (kind, _), index in zip(u.vars, u.blocks, u.levels):
            if kind == "id" and var in splits:
                _unsplittable(what, index, levels[index], var, splits, loc,
                              "a tensor with blocked levels is read natively")
            names.append(var if kind == "id" else
                         splits[var].var if kind == "div" else splits[var].offset)
        return replace(u, vars=tuple(names), blocks=()), None
    if not any(v in splits for v in u.vars):
        return u, None
    dim_var = {levels[index].dim: var for index, var in zip(u.levels, u.vars)}
    for index, var in zip(u.levels, u.vars):
        if var in splits and levels[index].format != "dense":
            _unsplittable(what, index, levels[index], var, splits, loc,
                          "only dense levels can be split into blocks and offsets")
    split_dims = {d: splits[v].block for d, v in dim_var.items() if v in splits}
    expanded, reassociation, new_levels = _expanded_type(tensor_type, split_dims)
    scanned, names = [], []
    for index, var in zip(u.levels, u.vars):
        scanned += new_levels[index]
        names += [splits[var].var, splits[var].offset] if var in splits else [var]
    return (replace(u, levels=tuple(scanned), vars=tuple(names)),
            View(u.operand, expanded, reassociation))


def _unsplittable(what: str, index: int, level, var: str, splits, loc, why: str):
    verb = "writes" if what.startswith("result") else "reads"
    raise LoweringError(loc, f"{what} {verb} dimension {level.dim} (variable {var}, split into "
                             f"blocks of {splits[var].block} by a blocked level of the kernel) "
                             f"with its {level.format} level {index}; {why}")


def _expanded_type(tensor_type, split_dims: dict[int, int]):
    """``tensor_type`` with each dimension ``d`` of ``split_dims`` expanded to
    ``[n/b, b]``: (type, reassociation, new level indices of each old level)."""
    rt = mlir.RankedTensorType(tensor_type)
    shape, levels = storage_levels(tensor_type)
    new_shape, groups = [], []
    for d, n in enumerate(shape):
        if d in split_dims:
            groups.append((len(new_shape), len(new_shape) + 1))
            new_shape += [n // split_dims[d], split_dims[d]]
        else:
            groups.append((len(new_shape),))
            new_shape.append(n)
    new_levels, dims, lvl_types = [], [], []
    enc = mlir.sparse_tensor.EncodingAttr(rt.encoding) if rt.encoding is not None else None
    for index, level in enumerate(levels):
        new_levels.append(tuple(range(len(dims), len(dims) + len(groups[level.dim]))))
        dims += groups[level.dim]
        if enc is not None:
            lvl_types += [enc.lvl_types[index]] * len(groups[level.dim])
    with rt.context, mlir.Location.unknown():
        encoding = None
        if enc is not None:
            dim_to_lvl = mlir.ir.AffineMap.get(len(new_shape), 0,
                                               [mlir.ir.AffineDimExpr.get(d) for d in dims])
            encoding = mlir.sparse_tensor.EncodingAttr.get(lvl_types, dim_to_lvl, None,
                                                           enc.pos_width, enc.crd_width)
        expanded = mlir.RankedTensorType.get(new_shape, rt.element_type, encoding)
    return expanded, tuple(groups), new_levels


def _result_layouts(root: Root, splits: dict[str, Split], loc) -> list[tuple]:
    """(out_vars, graph result type, ResultView or None) for each way ``root`` can be written."""
    _, levels = storage_levels(root.result_type)
    what = f"result #{root.index} ('{root.result_type}')"
    if any(lv.kind != "id" for lv in levels):
        names = []
        for index, (var, level) in enumerate(zip(root.out_vars, levels)):
            if level.kind == "id" and var in splits:
                _unsplittable(what, index, level, var, splits, loc,
                              "a tensor with blocked levels is written natively")
            names.append(var if level.kind == "id" else
                         splits[var].var if level.kind == "div" else splits[var].offset)
        return [(tuple(names), root.result_type, None)]
    if not any(v in splits for v in root.out_vars):
        return [(root.out_vars, root.result_type, None)]
    for index, (var, level) in enumerate(zip(root.out_vars, levels)):
        if var in splits and level.format != "dense":
            _unsplittable(what, index, level, var, splits, loc,
                          "only dense levels can be split into blocks and offsets")
    split_dims = {lv.dim: splits[v].block for v, lv in zip(root.out_vars, levels) if v in splits}
    expanded, reassociation, _ = _expanded_type(root.result_type, split_dims)
    row_major = _split_vars(root.out_vars, splits)
    layouts = [(row_major, expanded, ResultView(expanded, expanded, None, reassociation))]
    if mlir.RankedTensorType(root.result_type).encoding is None:
        offsets = [splits[v].offset for v in root.out_vars if v in splits]
        block_major = tuple(v for v in row_major if v not in offsets) + tuple(offsets)
        if block_major != row_major:
            perm = tuple(block_major.index(v) for v in row_major)
            ext = mlir.RankedTensorType(expanded)
            graph_type = mlir.RankedTensorType.get([ext.shape[row_major.index(v)]
                                                    for v in block_major], ext.element_type,
                                                   loc=mlir.Location.unknown(ext.context))
            layouts.append((block_major, graph_type,
                            ResultView(graph_type, expanded, perm, reassociation)))
    return layouts


def _rebuild(expr: KernelExpr, uses: dict[int, Use], splits: dict[str, Split]) -> KernelExpr:
    """``expr`` with its uses replaced and its reductions over split variables."""
    rebuild = tree_rebuilder(
        lambda use: uses[use.uid],
        lambda node, body: replace(node, vars=_split_vars(node.vars, splits), body=body,
                                   free=tuple(sorted(_split_vars(node.free, splits),
                                                     key=_var_rank))))

    roots = [replace(r, expr=rebuild(r.expr)) for r in expr.roots]
    return KernelExpr(roots, [uses[u.uid] for u in expr.uses], expr.sizes, expr.loc)


def choose_layout(variants: list[Blocking], order: tuple[str, ...] = ()) -> Blocking:
    """The variant an explicit ``order`` is legal for (the first one if none is: results laid
    out differently constrain the order differently, so at most one is), or without an order
    the one whose best order ranks best."""
    if len(variants) == 1:
        return variants[0]
    if order:
        return next((v for v in variants if violation(v.expr, order) is None), variants[0])
    best, best_cost = variants[0], None
    for variant in variants:
        first = next(ranked_orders(variant.expr), None)
        if first is None:
            continue
        cost = order_cost(variant.expr, first)[:-1]      # not the order's own tie-break
        if best_cost is None or cost < best_cost:
            best, best_cost = variant, cost
    return best


# Values as tiles ------------------------------------------------------------------------

@dataclass(frozen=True)
class Tiles:
    """A kernel lowered with tiles as values: the in-block offset variables are not iterated;
    each value is a tile over the offsets its node depends on (``axes``, in the order of the
    full dataflow order's offset suffix)."""

    axes: tuple[str, ...]
    """Every offset variable, in tile-axis order."""
    sizes: dict[str, int]
    """The offsets' extents (the block sizes)."""
    uses: dict[int, tuple[str, ...]]
    """uid -> the tile axes of its loaded values (the use's innermost levels)."""
    reduced: dict[int, tuple[str, ...]]
    """rid -> the tile axes the reduction sums (maxes) inside each tile."""
    roots: dict[int, tuple[str, ...]]
    """result index -> the tile axes of its values (its innermost levels)."""

    def shape(self, axes) -> tuple[int, ...]:
        return tuple(self.sizes[a] for a in axes)

    def sort(self, axes) -> tuple[str, ...]:
        """``axes`` in tile-axis order."""
        return tuple(a for a in self.axes if a in axes)


def tile_order(blocking: Blocking, order: tuple[str, ...]) -> tuple[str, ...]:
    """The full dataflow order of a tile lowering from any order of the kernel: its block
    variables in that order, then the offsets ordered as the sparse (non-dense) uses store
    them (by variable rank where nothing constrains)."""
    offsets = set(blocking.offsets)
    prefix = tuple(v for v in order if v not in offsets)
    after: dict[str, set[str]] = {o: set() for o in offsets}
    for u in blocking.expr.uses:
        if u.dense:
            continue
        mine = [v for v in u.vars if v in offsets]
        for a, b in zip(mine, mine[1:]):
            after[b].add(a)
    suffix: list[str] = []
    while len(suffix) < len(offsets):
        ready = sorted((o for o in offsets if o not in suffix and after[o] <= set(suffix)),
                       key=_var_rank)
        if not ready:
            raise LoweringError(blocking.expr.loc, "the blocked operands store their in-block "
                                                   "offsets in conflicting orders; values "
                                                   "cannot be tiles")
        suffix.append(ready[0])
    return prefix + tuple(suffix)


def to_tiles(expr: KernelExpr, offsets: tuple[str, ...], input_types: list, loc):
    """``expr`` (over the split variables, uses bound to the graph's operands) without its
    offset variables, and the :class:`Tiles` its values take; a LoweringError where a tile
    is not the innermost dense levels of a use or result."""
    sizes = {o: expr.sizes[o] for o in offsets}
    uses, tile_uses = {}, {}
    for u in expr.uses:
        axes = _trailing(u.vars, offsets, f"operand #{u.operand}", loc)
        _, levels = storage_levels(input_types[u.operand])
        k = len(axes)
        if k and (tuple(u.levels[-k:]) != tuple(range(len(levels) - k, len(levels)))
                  or any(levels[i].format != "dense" for i in u.levels[-k:])):
            raise LoweringError(loc, f"operand #{u.operand} ('{input_types[u.operand]}') holds "
                                     "its in-block offsets in levels that are not its innermost "
                                     "dense levels; values cannot be tiles")
        uses[u.uid] = replace(u, vars=u.vars[:len(u.vars) - k], levels=u.levels[:len(u.levels) - k])
        tile_uses[u.uid] = axes
    reduced: dict[int, tuple[str, ...]] = {}

    def without_offsets(node, body):
        kept = tuple(v for v in node.vars if v not in offsets)
        if not kept:
            raise LoweringError(node.loc or loc, "a reduction over in-block offsets alone "
                                                 "cannot run on tiles")
        new = replace(node, vars=kept, body=body,
                      free=tuple(v for v in node.free if v not in offsets))
        reduced[new.rid] = tuple(v for v in node.vars if v in offsets)
        return new

    rebuild = tree_rebuilder(lambda use: uses[use.uid], without_offsets)

    roots, tile_roots = [], {}
    for r in expr.roots:
        axes = _trailing(r.out_vars, offsets, f"result #{r.index}", loc)
        roots.append(replace(r, expr=rebuild(r.expr),
                             out_vars=r.out_vars[:len(r.out_vars) - len(axes)]))
        tile_roots[r.index] = axes
    stripped = KernelExpr(roots, [uses[u.uid] for u in expr.uses],
                          {v: n for v, n in expr.sizes.items() if v not in offsets}, expr.loc)
    return stripped, Tiles(tuple(offsets), sizes, tile_uses, reduced, tile_roots)


def _trailing(variables, offsets, what: str, loc) -> tuple[str, ...]:
    """The offsets among ``variables``, which must be their last ones."""
    axes = tuple(v for v in variables if v in offsets)
    if axes and tuple(variables[len(variables) - len(axes):]) != axes:
        raise LoweringError(loc, f"{what} has levels over in-block offsets ({', '.join(axes)}) "
                                 "above other levels; values cannot be tiles")
    return axes

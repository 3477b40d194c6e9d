"""Planning a kernel's lowering: fused expression + dataflow order -> graph plan, no IR built.

:meth:`KernelAnalysis.of` reads one ``fuse.kernel`` once: its fused index notation (copies of
an intermediate unified, blocked dimensions split), where its errors are reported, its
operand and result types. :func:`plan_kernel` lowers it under one order into a
:class:`KernelPlan`: the host views placed before the graph (``tensor.expand_shape`` of
operands read over split dimensions, ``linalg.transpose`` of dense operands visited out of
storage order), the ``sam`` ops of the graph (:class:`~.builder.PlannedOp`) and the host ops
that turn the graph's results back into the kernel's result types. Nothing is built, so
nothing is erased: an order the lowering cannot realize is a :class:`LoweringError`, and
:func:`legal_orders` is the orders, best first, that plan. ``emit_kernel`` in
:mod:`fuseflow.passes.lower_to_sam` turns a plan into IR.

Plans are cached per order in the analysis (an analysis is reused for one kernel's questions:
its legal orders, then the plan of the chosen one). Inside :func:`shared_analyses` (a compile
of one module: schedule, verify, lower), :meth:`KernelAnalysis.of` reads each kernel op once
and every pass reuses its analysis and plans.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from fuseflow import mlir
from fuseflow.dialects.ir import op_key
from fuseflow.dialects.types import storage_levels
from fuseflow.passes.ir_utils import is_trivial_producer, op_of
from fuseflow.passes.lowering.blocking import (
    Blocking,
    ResultView,
    blocked_variants,
    choose_layout,
    tile_order,
    to_tiles,
)
from fuseflow.passes.lowering.builder import PlanBuilder, PlannedOp
from fuseflow.passes.lowering.copies import unify_copies
from fuseflow.passes.lowering.einsum import KernelExpr, LoweringError, extract_kernel, is_row_major
from fuseflow.passes.lowering.lower import KernelLowering
from fuseflow.passes.lowering.order import dense_permutations, ranked_orders, violation

ORDER_ATTEMPTS = 64
"""Orders tried, best first, for a kernel's default order (and the legal orders an error
lists) before a kernel is reported as not lowerable."""

RELAXED_ORDERS = 4 * ORDER_ATTEMPTS
"""The best orders that break some level order that are ranked by their conversions."""

LISTED_ORDERS = 20
"""At most this many legal orders are listed in an error message."""


@dataclass(frozen=True)
class HostView:
    """A host op computing a graph operand before the graph from ``source`` (a kernel operand
    index, or another view): ``expand`` (``tensor.expand_shape`` by ``reassociation``),
    ``transpose`` (``linalg.transpose`` by ``permutation``) or ``convert`` (``tensor.cast``
    to ``result_type``: the same sparse level formats over the dimensions in another order)."""

    kind: str
    source: object
    result_type: object
    reassociation: tuple[tuple[int, ...], ...] = ()
    permutation: tuple[int, ...] = ()


@dataclass(frozen=True)
class KernelPlan:
    """One kernel's lowering under one order, as data."""

    name: str
    order: tuple[str, ...]
    einsum: str
    """The fused expression the graph computes, over its operands (``fuseflow.einsum``)."""
    inputs: tuple
    """Each graph operand: a kernel operand index or a :class:`HostView`."""
    views: tuple[HostView, ...]
    """The host views, in the order they are created before the graph."""
    result_types: tuple
    """The graph's result types."""
    result_views: dict[int, ResultView]
    """Results written over split dimensions: turned back into the kernel's types after it."""
    ops: tuple[PlannedOp, ...]
    block: tuple[int, ...] = ()
    """The schedule's block: non-empty when values are tiles (:mod:`.blocking`)."""

    @property
    def size(self) -> int:
        """The number of planned ``sam`` ops: an estimate of the graph's size."""
        return len(self.ops)


_SHARED: ContextVar[dict | None] = ContextVar("fuseflow_shared_analyses", default=None)


@contextmanager
def shared_analyses():
    """Within this block :meth:`KernelAnalysis.of` returns one analysis per kernel op, so the
    passes of one compile (schedule, verify-schedule, lower-to-sam) read and plan each kernel
    once. Kernel bodies must not change inside the block (their schedules may), and no kernel
    is looked up after kernels were erased (an address may be reused)."""
    token = _SHARED.set({} if _SHARED.get() is None else _SHARED.get())
    try:
        yield
    finally:
        _SHARED.reset(token)


@dataclass
class KernelAnalysis:
    """What planning needs from one ``fuse.kernel``, read once (see the module doc)."""

    name: str
    loc: object
    """Where the kernel's lowering errors are reported: its last compute op."""
    variants: list[Blocking]
    """The split expression, once per layout of results over split (blocked) dimensions."""
    best: Blocking
    """The variant whose best order ranks best (the default's)."""
    input_types: list
    result_types: list
    _attempts: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, kernel) -> KernelAnalysis:
        """Reads ``kernel`` (a ``fuse.kernel`` op); a LoweringError if it cannot be lowered.
        Inside :func:`shared_analyses` the analysis of an op is read once."""
        kernel = op_of(kernel)
        cache = _SHARED.get()
        if cache is None:
            return cls._read(kernel)
        key = op_key(kernel)
        if key not in cache:
            cache[key] = cls._read(kernel)
        return cache[key]

    @classmethod
    def _read(cls, kernel) -> KernelAnalysis:
        body = kernel.regions[0].blocks[0]
        terminator = op_of(list(body.operations)[-1])
        arg_index = {arg: i for i, arg in enumerate(body.arguments)}
        expr = unify_copies(extract_kernel(list(terminator.operands), arg_index,
                                           kernel.location))
        loc = _first_compute_location(kernel)
        input_types = [v.type for v in kernel.operands]
        variants = blocked_variants(expr, input_types, loc)
        name = mlir.StringAttr(kernel.attributes["name"]).value \
            if "name" in kernel.attributes else "graph"
        return cls(name, loc, variants, choose_layout(variants), input_types,
                   [r.type for r in kernel.results])

    @property
    def relaxed(self) -> KernelExpr:
        """The default layout's expression with its row-major dense results and its
        convertible sparse uses free of their level order (the orders of kernels that lower
        in no order respecting every level order; see :meth:`candidates`)."""
        expr = self.best.expr
        native = set(self.best.offsets)  # blocked operands, read at their own levels
        relaxed = expr.with_uses({u.uid: replace(u, dense=True) for u in expr.uses
                                  if not u.dense and not u.blocks and len(u.vars) > 1
                                  and not native & set(u.vars)})
        relaxed.roots = [replace(r, dense=r.index not in self.best.results
                                 and is_row_major(r.result_type)) for r in relaxed.roots]
        return relaxed

    @property
    def expr(self) -> KernelExpr:
        """The fused expression (blocked dimensions split) of the default layout."""
        return self.best.expr

    @property
    def variables(self) -> tuple[str, ...]:
        """The kernel's index variables (after blocked dimensions are split)."""
        return self.best.expr.all_vars()

    def blocking_for(self, order: tuple[str, ...]) -> Blocking:
        """The layout variant ``order`` is legal for (the default one if none)."""
        legal = [v for v in self.variants if violation(v.expr, order) is None]
        return legal[0] if legal else self.best

    def candidates(self) -> Iterator[tuple[str, ...]]:
        """Orders that respect every level order, best first: the default layout's, then the
        other layouts'; then, when none of those lowers, the orders that read some sparse
        operands out of storage order (each converted on the host, see
        :func:`_bind_sparse_conversions`)."""
        seen: set[tuple[str, ...]] = set()
        others = (ranked_orders(v.expr) for v in self.variants if v is not self.best)
        for order in itertools.chain(ranked_orders(self.best.expr), *others):
            if order not in seen:
                seen.add(order)
                yield order
        if any(isinstance(self._attempts.get(o), KernelPlan) for o in seen):
            return
        # Fewest sparse conversions first: a dense result written transposed costs less.
        relaxed = itertools.islice(ranked_orders(self.relaxed), RELAXED_ORDERS)
        for order in sorted(relaxed, key=self.conversions):
            if order not in seen:
                seen.add(order)
                yield order

    def conversions(self, order: tuple[str, ...]) -> int:
        """How many sparse uses ``order`` reads out of storage order (each converted)."""
        pos = {v: i for i, v in enumerate(order)}
        return sum(1 for u in self.best.expr.uses if not u.dense and
                   any(pos[a] > pos[b] for a, b in zip(u.vars, u.vars[1:])))

    def converts(self, order: tuple[str, ...]) -> bool:
        """Whether ``order``, which breaks some sparse operand's level order, is allowed to
        read it converted: no order that respects every level order lowers (among the
        :data:`ORDER_ATTEMPTS` best) and ``order`` only breaks convertible ones."""
        if violation(self.relaxed, tuple(order)) is not None:
            return False
        strict = (o for o in self.candidates() if violation(self.blocking_for(o).expr, o) is None)
        return not any(isinstance(self.attempt(o), KernelPlan)
                       for o in itertools.islice(strict, ORDER_ATTEMPTS))

    def attempt(self, order: tuple[str, ...], block: tuple[int, ...] = ()
                ) -> KernelPlan | LoweringError:
        """The plan of ``order`` (values as tiles with a non-empty ``block``), or the
        LoweringError saying why it has none (cached)."""
        key = tuple(order) if not block else (tuple(order), tuple(block))
        if key not in self._attempts:
            try:
                self._attempts[key] = _plan(self, tuple(order)) if not block else \
                    _plan_tiles(self, tuple(order), tuple(block))
            except LoweringError as err:
                self._attempts[key] = err
        return self._attempts[key]


def legal_orders(analysis: KernelAnalysis, limit: int | None = None,
                 attempts: int | None = None) -> Iterator[tuple[str, ...]]:
    """The orders the kernel can be lowered in, best first (the ranking of
    :mod:`fuseflow.passes.lowering.order`): at most ``limit`` of them, looking at most at the
    ``attempts`` best orders that respect every tensor's level order (None: no bound)."""
    found = 0
    for order in itertools.islice(analysis.candidates(), attempts):
        if limit is not None and found >= limit:
            return
        if isinstance(analysis.attempt(order), KernelPlan):
            found += 1
            yield order


def legal_orders_text(analysis: KernelAnalysis) -> str:
    """``'legal orders: d0,d2,d1; d2,d0,d1'`` (at most :data:`LISTED_ORDERS`), or '' if none
    is found among the :data:`ORDER_ATTEMPTS` best."""
    orders = list(legal_orders(analysis, LISTED_ORDERS, ORDER_ATTEMPTS))
    return "legal orders: " + "; ".join(",".join(o) for o in orders) if orders else ""


def plan_kernel(analysis: KernelAnalysis, order, block: tuple[int, ...] = ()) -> KernelPlan:
    """The plan of the kernel under ``order``; a LoweringError located at the kernel, listing
    the legal orders, if the kernel cannot be lowered in that order. A non-empty ``block``
    (the schedule's) lowers it with tiles as values (:func:`_plan_tiles`)."""
    order = tuple(order)
    if block:
        plan = analysis.attempt(order, tuple(block))
        if isinstance(plan, LoweringError):
            raise plan
        return plan
    why = violation(analysis.blocking_for(order).expr, order)
    if why is not None and not analysis.converts(order):
        legal = legal_orders_text(analysis) or "no legal order found"
        raise LoweringError(analysis.loc, f"{why}; {legal}")
    plan = analysis.attempt(order)
    if isinstance(plan, LoweringError):
        legal = legal_orders_text(analysis)
        if not legal:
            raise plan
        raise LoweringError(plan.loc, f"{plan.message}; order ({', '.join(order)}) is not "
                                      f"lowerable; {legal}")
    return plan


def default_order(analysis: KernelAnalysis, block: tuple[int, ...] = ()) -> tuple[str, ...]:
    """The best of the kernel's legal orders (looking at :data:`ORDER_ATTEMPTS` candidates);
    else the LoweringError of the best candidate. With a ``block`` (values as tiles), the
    best candidate whose tile plan lowers (candidates that differ only in where they place
    in-block offsets are one tile order)."""
    if block and analysis.best.splits:
        offsets = set(analysis.best.offsets)
        tried: set = set()
        first = None
        for order in itertools.islice(analysis.candidates(), ORDER_ATTEMPTS * 8):
            prefix = tuple(v for v in order if v not in offsets)
            if prefix in tried:
                continue
            tried.add(prefix)
            plan = analysis.attempt(order, tuple(block))
            if isinstance(plan, KernelPlan):
                return order
            first = first or plan
            if len(tried) >= ORDER_ATTEMPTS:
                break
        if first is not None:
            raise first
    for order in legal_orders(analysis, 1, ORDER_ATTEMPTS):
        return order
    for order in itertools.islice(analysis.candidates(), 1):
        raise analysis.attempt(order)
    raise LoweringError(analysis.loc, "no dataflow order visits every tensor's levels in "
                                      f"storage order for {analysis.expr}")


def _first_compute_location(kernel):
    """Where a kernel's errors are reported: its last compute op (the one yielding a result)."""
    ops = [op_of(o) for o in kernel.regions[0].blocks[0].operations]
    compute = [o for o in ops[:-1] if not is_trivial_producer(o) and o.name != "tensor.cast"]
    return compute[-1].location if compute else kernel.location


def _plan(analysis: KernelAnalysis, order: tuple[str, ...]) -> KernelPlan:
    blocking = analysis.blocking_for(order)
    inputs = list(range(len(analysis.input_types)))
    expr, inputs, views = _bind_blocked_views(blocking, inputs)
    expr, inputs, conversions = _bind_sparse_conversions(expr, order, inputs, analysis)
    expr, inputs, transposes = _bind_dense_permutations(expr, order, inputs, analysis)
    result_views = dict(blocking.results)
    expr = _bind_result_permutations(expr, order, result_views, analysis)
    builder = PlanBuilder([_type_of(i, analysis) for i in inputs], analysis.loc)
    KernelLowering(expr, order, builder).run()
    result_types = tuple(result_views[i].graph_type if i in result_views else t
                         for i, t in enumerate(analysis.result_types))
    return KernelPlan(analysis.name, order, str(expr), tuple(inputs),
                      tuple(views + conversions + transposes), result_types, result_views,
                      tuple(builder.ops))


def _plan_tiles(analysis: KernelAnalysis, order: tuple[str, ...], block: tuple[int, ...]
                ) -> KernelPlan:
    """The plan with values as tiles: the blocked (BSR) dimensions' in-block offsets are not
    iterated but carried inside the values (``docs/lowering.md``, values as tiles). ``order``
    gives the order of the other variables; the offsets follow them. A kernel without blocked
    levels keeps scalar values (tiling CSR or dense operands is not implemented)."""
    splits = analysis.best.splits
    if not splits:  # no blocked levels to take tiles from: the block is recorded, values scalar
        return replace(_plan(analysis, order), block=block)
    sizes = sorted({sp.block for sp in splits.values()})
    if not set(sizes) <= set(block):
        raise LoweringError(analysis.loc, f"block ({', '.join(map(str, block))}) does not match "
                                          "the blocks of the kernel's blocked levels "
                                          f"({', '.join(map(str, sizes))})")
    full = tile_order(analysis.blocking_for(order), order)
    why = violation(analysis.blocking_for(full).expr, full)
    if why is not None:
        raise LoweringError(analysis.loc, f"{why} (values as tiles: order {', '.join(full)})")
    blocking = analysis.blocking_for(full)
    inputs = list(range(len(analysis.input_types)))
    expr, inputs, views = _bind_blocked_views(blocking, inputs)
    expr, inputs, transposes = _bind_dense_permutations(expr, full, inputs, analysis)
    result_views = dict(blocking.results)
    expr = _bind_result_permutations(expr, full, result_views, analysis)
    types = [_type_of(i, analysis) for i in inputs]
    stripped, tiles = to_tiles(expr, tuple(v for v in full if v in blocking.offsets), types,
                               analysis.loc)
    builder = PlanBuilder(types, analysis.loc)
    KernelLowering(stripped, tuple(v for v in full if v not in blocking.offsets), builder,
                   tiles).run()
    result_types = tuple(result_views[i].graph_type if i in result_views else t
                         for i, t in enumerate(analysis.result_types))
    return KernelPlan(analysis.name, order, str(expr), tuple(inputs), tuple(views + transposes),
                      result_types, result_views, tuple(builder.ops), tuple(block))


def _type_of(graph_input, analysis: KernelAnalysis):
    if isinstance(graph_input, HostView):
        return graph_input.result_type
    return analysis.input_types[graph_input]


def _bind_host_views(expr: KernelExpr, inputs: list, plans: dict):
    """Re-binds uses to host views computed before the graph.

    ``plans`` maps a use's uid to ``(key, make, use)``: ``make(source)`` is the view that
    reads the use's input (uses with equal keys share one view), ``use`` is the re-bound use
    (its ``operand`` still names the source). Returns the expression over the graph's
    operands, the operands (the inputs that are still read, then the new views) and the
    views, in creation order."""
    inputs = list(inputs)
    made: dict = {}
    views, replacement = [], {}
    for uid, (key, make, use) in plans.items():
        if key not in made:
            views.append(make(inputs[use.operand]))
            inputs.append(views[-1])
            made[key] = len(inputs) - 1
        replacement[uid] = replace(use, operand=made[key])
    if not replacement:
        return expr, inputs, views
    sources = {expr.uses[uid].operand for uid in replacement}
    expr = expr.with_uses(replacement)
    # An input now read only through host views is no graph operand.
    dropped = sources - {u.operand for u in expr.uses}
    index = {old: new for new, old in enumerate(i for i in range(len(inputs)) if i not in dropped)}
    expr = expr.with_uses({u.uid: replace(u, operand=index[u.operand]) for u in expr.uses})
    return expr, [v for i, v in enumerate(inputs) if i not in dropped], views


def _bind_blocked_views(blocking: Blocking, inputs: list):
    """Uses that read a dense level over a split (blocked) dimension read a host-side
    ``tensor.expand_shape`` of their input (see :mod:`fuseflow.passes.lowering.blocking`)."""
    expr = blocking.expr
    plans = {uid: (view.key, lambda source, view=view: HostView(
                "expand", source, view.result_type, reassociation=view.reassociation),
                   expr.uses[uid])
             for uid, view in blocking.views.items()}
    return _bind_host_views(expr, inputs, plans)


def _bind_dense_permutations(expr: KernelExpr, order, inputs: list, analysis: KernelAnalysis):
    """Dense uses visited out of storage order read a host-side ``linalg.transpose`` of their
    input instead (see :func:`_bind_host_views` for the results)."""
    types = [_type_of(i, analysis) for i in inputs]
    ranks = [mlir.RankedTensorType(t).rank for t in types]
    pos = {v: i for i, v in enumerate(order)}
    plans = {}
    for uid, perm in dense_permutations(expr, order, ranks).items():
        use = expr.uses[uid]
        source_type = mlir.RankedTensorType(types[use.operand])
        plans[uid] = ((use.operand, perm),
                      lambda source, perm=perm, t=source_type: HostView(
                          "transpose", source, _transposed_type(t, perm), permutation=perm),
                      replace(use, vars=tuple(sorted(use.vars, key=pos.__getitem__))))
    return _bind_host_views(expr, inputs, plans)


def _bind_result_permutations(expr: KernelExpr, order, result_views: dict,
                              analysis: KernelAnalysis) -> KernelExpr:
    """Dense results ``order`` visits out of storage order are written transposed (the graph
    result's dimensions in visiting order) and transposed back after the graph on the host;
    adds their :class:`ResultView` to ``result_views`` (by result index)."""
    pos = {v: i for i, v in enumerate(order)}
    roots = []
    for root in expr.roots:
        out = root.out_vars
        if root.index in result_views or not is_row_major(root.result_type) or \
                all(pos[a] < pos[b] for a, b in zip(out, out[1:])):
            roots.append(root)
            continue
        visited = tuple(sorted(out, key=pos.__getitem__))
        kernel_type = mlir.RankedTensorType(analysis.result_types[root.index])
        graph_type = _transposed_type(kernel_type, [out.index(v) for v in visited])
        result_views[root.index] = ResultView(graph_type, kernel_type,
                                              tuple(visited.index(v) for v in out), None)
        roots.append(replace(root, out_vars=visited, result_type=graph_type))
    return KernelExpr(roots, expr.uses, expr.sizes, expr.loc)


def _bind_sparse_conversions(expr: KernelExpr, order, inputs: list, analysis: KernelAnalysis):
    """Sparse uses ``order`` visits out of storage order read a host-side conversion of their
    input (``tensor.cast``) to the same level formats over the dimensions in visiting order:
    CSC read row by row becomes CSR. Only orders no other order can replace get here (see
    :meth:`KernelAnalysis.candidates`). Results as :func:`_bind_host_views`."""
    pos = {v: i for i, v in enumerate(order)}
    types = [_type_of(i, analysis) for i in inputs]
    plans = {}
    native = set(analysis.best.offsets)  # blocked operands cannot be converted
    for u in expr.uses:
        if u.dense or u.blocks or native & set(u.vars) or \
                all(pos[a] < pos[b] for a, b in zip(u.vars, u.vars[1:])):
            continue
        source_type = mlir.RankedTensorType(types[u.operand])
        _, levels = storage_levels(source_type)
        dim_of = {var: levels[level].dim for var, level in zip(u.vars, u.levels)}
        visited = tuple(sorted(u.vars, key=pos.__getitem__))
        # The scanned levels keep their formats, in their order, over the visited dimensions.
        dims = [lv.dim for lv in levels]
        for level, var in zip(u.levels, visited):
            dims[level] = dim_of[var]
        converted = _permuted_format(source_type, dims)
        plans[u.uid] = ((u.operand, tuple(dims)),
                        lambda source, t=converted: HostView("convert", source, t),
                        replace(u, vars=visited))
    return _bind_host_views(expr, inputs, plans)


def _permuted_format(source_type, dims: list[int]):
    """``source_type`` with storage level ``i`` over dimension ``dims[i]``."""
    enc = mlir.sparse_tensor.EncodingAttr(source_type.encoding)
    with source_type.context, mlir.Location.unknown():
        dim_to_lvl = mlir.ir.AffineMap.get(source_type.rank, 0,
                                           [mlir.ir.AffineDimExpr.get(d) for d in dims])
        encoding = mlir.sparse_tensor.EncodingAttr.get(list(enc.lvl_types), dim_to_lvl, None,
                                                       enc.pos_width, enc.crd_width)
        return mlir.RankedTensorType.get(list(source_type.shape), source_type.element_type,
                                         encoding)


def _transposed_type(source_type, perm):
    with mlir.Location.unknown(source_type.context):
        return mlir.RankedTensorType.get([source_type.shape[d] for d in perm],
                                         source_type.element_type)

"""Per-kernel schedule axes of the fusion search: candidate generators and their predictions.

A candidate kernel is a fusion group under one :class:`Choice`: its dataflow order, the
levels it forks into lanes (``parallel``) and its tile shape (``block``). The choices of a
group are made by a list of *axes* (:class:`Axis`), each a candidate generator: it takes the
choices so far and returns them expanded along its own field. :class:`Orders` is the first
(the ``orders`` best legal orders of the kernel), :class:`Lanes` forks a level into each lane
count of a set, :class:`Blocks` tiles the values of kernels with blocked (BSR) operands. A new
axis is a new generator, appended to the list; the evaluator
(:class:`~fuseflow.explore.evaluate.KernelEvaluator`) and the search do not change.

Every choice is predicted by the cost model from its plan, without emitting IR:

* **lanes**: :func:`forked_plan` applies ``sam-parallelize``'s own transformation
  (:func:`~fuseflow.passes.sam_parallelize.parallelize`) to the plan's ops, so the block graph
  the cost model reads has the forks, the ``P`` lane copies of the region and the joins the
  compiled kernel will have (``test_axes.py`` checks the block kinds against the emitted
  graph). The cost model's fork rule deals a level's coordinates to the lanes, each lane's
  copy then does ``1/P`` of the work below it, and the join takes a step per token of every
  lane: the per-lane critical path plus the join's drain. Forks wider than the machine
  (``Arch.lanes``) are predicted folded to its physical lanes, as the simulator runs them.
* **tiles**: the tile plan (:meth:`~fuseflow.passes.lowering.plan.KernelAnalysis.attempt`
  with a block) is predicted with the scalar rules (tokens are tiles), and each block kind's
  latency and interval replaced by the largest :class:`~fuseflow.sim.arch.TileCosts` of that
  kind's tile blocks in the kernel (the cost model's clocks are per kind; a kernel mixing
  element-wise and product ALUs is charged the product's interval on every ALU).

**Area.** Lanes are hardware: a kernel of ``P`` lanes has ``P`` copies of its region and of
their sparse accumulators. So the lanes used are a fourth objective of the front (the largest
of any kernel of a partition, kernels running one after the other on the same lanes), and the
buffer objective counts every lane's accumulators. Without it, more lanes would dominate
(fewer cycles, same bytes) and the front would only show the widest fork.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace

from fuseflow.errors import ArgumentError


@dataclass(frozen=True)
class Choice:
    """A kernel's schedule choice: order, forked levels (variable, lanes), tile shape."""

    order: tuple[str, ...]
    parallel: tuple[tuple[str, int], ...] = ()
    block: tuple[int, ...] = ()

    @property
    def lanes(self) -> int:
        """Lanes the kernel occupies (the product of its forks' factors)."""
        n = 1
        for _, factor in self.parallel:
            n *= factor
        return n

    def settings(self) -> dict:
        """The ``Schedule.kernels`` entry of this choice."""
        out: dict = {"order": self.order}
        if self.parallel:
            out["parallel"] = dict(self.parallel)
        if self.block:
            out["block"] = self.block
        return out


@dataclass
class KernelContext:
    """What an axis may ask of one candidate kernel: its analysis (legal orders, tile plans)
    and its plans under the orders planned so far."""

    analysis: object
    plans: dict
    """Order -> :class:`~fuseflow.passes.lowering.plan.KernelPlan` (scalar values)."""
    forks: dict = field(default_factory=dict)
    """Order -> its forkable variables (asked once)."""

    def plan(self, choice: Choice):
        """The plan of ``choice``'s order and block (forks are applied by the prediction);
        the LoweringError of a block the kernel cannot be tiled with is raised."""
        if choice.block:
            plan = self.analysis.attempt(choice.order, choice.block)
            if isinstance(plan, Exception):
                raise plan
            return plan
        return self.plans[choice.order]

    def forkable(self, order: tuple[str, ...]) -> tuple[str, ...]:
        """The variables ``sam-parallelize`` can fork under ``order``, outermost first."""
        from fuseflow.passes.sam_parallelize import parallel_variables

        if order not in self.forks:
            self.forks[order] = parallel_variables(self.plans[order])
        return self.forks[order]

    def blocked(self) -> tuple[int, ...]:
        """The block sizes of the kernel's blocked (BSR) operands (empty: none)."""
        splits = self.analysis.best.splits
        return tuple(sorted({sp.block for sp in splits.values()}))


class Axis:
    """A candidate generator: expands each choice along one field of the schedule."""

    name = "axis"

    def expand(self, kernel: KernelContext, choices: list[Choice]) -> list[Choice]:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"axis": self.name}


@dataclass
class Orders(Axis):
    """The kernel's ``limit`` best legal orders (the evaluator plans them once per kernel
    structure): the first axis, it ignores the choices it is given."""

    limit: int = 3
    name = "order"

    def expand(self, kernel: KernelContext, choices: list[Choice]) -> list[Choice]:
        return [Choice(tuple(order)) for order in kernel.plans]

    def describe(self) -> dict:
        return {"axis": self.name, "orders": self.limit}


@dataclass
class Lanes(Axis):
    """Forks one level into each lane count of ``factors`` (1: no fork). ``levels``:
    ``"outermost"`` (the outermost forkable level of each order) or ``"all"``."""

    factors: tuple[int, ...] = (1,)
    levels: str = "outermost"
    name = "parallel"

    def __post_init__(self):
        self.factors = lane_factors(self.factors)
        if self.levels not in ("outermost", "all"):
            raise ArgumentError(f"lane levels must be 'outermost' or 'all', got {self.levels!r}")

    def expand(self, kernel: KernelContext, choices: list[Choice]) -> list[Choice]:
        out = []
        for choice in choices:
            if 1 in self.factors:
                out.append(choice)
            wide = [f for f in self.factors if f > 1]
            if not wide:
                continue
            forkable = kernel.forkable(choice.order)
            levels = forkable[:1] if self.levels == "outermost" else forkable
            out += [replace(choice, parallel=((var, f),)) for var in levels for f in wide]
        return out

    def describe(self) -> dict:
        return {"axis": self.name, "lanes": list(self.factors), "levels": self.levels}


@dataclass
class Blocks(Axis):
    """Tiles of each shape of ``shapes`` (``()``: scalar values) for kernels whose blocked
    operands have that block; other kernels keep scalar values only."""

    shapes: tuple[tuple[int, ...], ...] = ((),)
    name = "block"

    def __post_init__(self):
        self.shapes = block_shapes(self.shapes)

    def expand(self, kernel: KernelContext, choices: list[Choice]) -> list[Choice]:
        sizes = kernel.blocked()
        tiles = [b for b in self.shapes if b and sizes and set(sizes) <= set(b)]
        out = []
        for choice in choices:
            if () in self.shapes or not tiles:
                out.append(choice)
            out += [replace(choice, block=b) for b in tiles]
        return out

    def describe(self) -> dict:
        return {"axis": self.name, "blocks": [list(b) for b in self.shapes]}


def default_axes(orders: int = 3, lanes=(1,), blocks=((),)) -> list[Axis]:
    """Orders, then lanes, then blocks."""
    axes: list[Axis] = [Orders(orders)]
    if tuple(lane_factors(lanes)) != (1,):
        axes.append(Lanes(tuple(lanes)))
    if tuple(block_shapes(blocks)) != ((),):
        axes.append(Blocks(tuple(blocks)))
    return axes


def choices(axes: list[Axis], kernel: KernelContext) -> list[Choice]:
    """Every choice the axes generate for ``kernel``, in generation order, each once."""
    found: list[Choice] = []
    for axis in axes:
        found = axis.expand(kernel, found)
    seen, out = set(), []
    for c in found:
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def lane_factors(values) -> tuple[int, ...]:
    """Lane counts from ``"1,2,4"`` or a sequence of ints >= 1."""
    if isinstance(values, str):
        parts = [p.strip() for p in values.split(",") if p.strip()]
        if not all(p.isdigit() for p in parts):
            raise ArgumentError(f"lanes must be counts like 1,2,4, got {values!r}")
        values = [int(p) for p in parts]
    values = tuple(values)
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                             for v in values):
        raise ArgumentError(f"lanes must be counts >= 1 like (1, 2, 4), got {values!r}")
    return tuple(dict.fromkeys(values))


def block_shapes(values) -> tuple[tuple[int, ...], ...]:
    """Tile shapes from ``"0,4,8x8"`` (``0``: scalar values; ``4``: 4x4) or a sequence of
    shapes (``()``: scalar values)."""
    if isinstance(values, str):
        out = []
        for p in (p.strip() for p in values.split(",") if p.strip()):
            dims = p.split("x")
            if not all(d.isdigit() for d in dims):
                raise ArgumentError(f"blocks must be shapes like 0,4,8x8, got {values!r}")
            n = tuple(int(d) for d in dims)
            out.append(() if n == (0,) else (n[0], n[0]) if len(n) == 1 else n)
        values = out
    values = tuple(tuple(b) for b in values)
    if not values or not all(all(isinstance(n, int) and n >= 1 for n in b) for b in values):
        raise ArgumentError(f"blocks must be tile shapes like (4, 4), or () for scalar values, "
                            f"got {values!r}")
    return tuple(dict.fromkeys(values))


# Predictions ------------------------------------------------------------------------------

def forked_plan(plan, parallel, physical: int | None = None):
    """``plan`` with its levels forked as ``parallel`` ((variable, lanes) pairs) by
    ``sam-parallelize``'s transformation, as a plan :func:`~fuseflow.explore.plangraph.
    plan_graph` reads (ops, inputs, result types, name). Forks wider than ``physical`` lanes
    are folded to them (the simulator's ``Arch.lanes``). Outermost variable first, as the
    pass applies them."""
    from fuseflow.passes.lowering.builder import INDEX_ATTR, PlannedOp, Stream, TensorArg
    from fuseflow.passes.sam_parallelize import TENSOR, Model, Node, parallelize

    nodes = []
    for op in plan.ops:
        operands = [(TENSOR, v.index) if isinstance(v, TensorArg) else (v.op, v.result)
                    for v in op.operands]
        attrs = dict(op.attrs)
        if op.index is not None:
            attrs[INDEX_ATTR] = op.index
        nodes.append(Node(op.name, operands, list(op.results), attrs, op.origin))
    model = Model(nodes)
    position = {v: i for i, v in enumerate(plan.order)}
    for var, factor in sorted(parallel, key=lambda p: position.get(p[0], 0)):
        factor = min(factor, physical) if physical else factor
        if factor > 1:
            model = parallelize(model, var, factor, None)
    ops = []
    for node in model.nodes:
        operands = tuple(TensorArg(o[1]) if o[0] == TENSOR else
                         Stream(o[0], o[1], model.nodes[o[0]].types[o[1]])
                         for o in node.operands)
        attrs = tuple(sorted((k, v) for k, v in node.attrs.items() if k != INDEX_ATTR))
        ops.append(PlannedOp(node.name, operands, tuple(node.types), attrs, node.loc))
    return SimpleNamespace(ops=tuple(ops), inputs=plan.inputs, result_types=plan.result_types,
                           name=plan.name, order=plan.order)


__all__ = ["Axis", "Blocks", "Choice", "KernelContext", "Lanes", "Orders", "block_shapes",
           "choices", "default_axes", "forked_plan", "lane_factors"]

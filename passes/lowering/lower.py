"""Lowers a kernel's fused index notation under a dataflow order to one SAM graph plan.

:class:`KernelLowering` coordinates four concerns, one module each:

* :mod:`.background`: each node's background value β (its value where its sparse operands are
  absent) and the scalar forms of ops with a constant operand;
* :mod:`.spaces`: the iteration space of an expression over one variable (intersections,
  unions, the dense universe, located dense levels);
* :mod:`.scopes`: the root and reduction scopes, which variables each visits, and when a
  reduction is activated and becomes a virtual tensor of its enclosing scope;
* :mod:`.streams`: the ops realizing spaces, values, reductions and writes.

It owns the state they share: each use's current reference and next level, the activated
reductions (virtual tensors), the variables visited transparently, and the coordinate
streams whose fibers are never empty. The ops are recorded with a
:class:`~fuseflow.passes.lowering.builder.PlanBuilder`: lowering builds no IR, and a
:class:`~fuseflow.passes.lowering.einsum.LoweringError` means the order is not lowerable.
"""

from __future__ import annotations

from fuseflow.passes.lowering.blocking import Tiles
from fuseflow.passes.lowering.builder import PlanBuilder
from fuseflow.passes.lowering.einsum import KernelExpr
from fuseflow.passes.lowering.scopes import Scope, Scopes, Virtual
from fuseflow.passes.lowering.spaces import IterationSpaces
from fuseflow.passes.lowering.streams import Streams


class KernelLowering:
    """Plans the streams of one kernel's fused index notation under ``order``."""

    def __init__(self, kernel: KernelExpr, order: tuple[str, ...], builder: PlanBuilder,
                 tiles: Tiles | None = None):
        self.k = kernel
        self.tiles = tiles
        """Values as tiles (:class:`~.blocking.Tiles`), or None for scalar values."""
        self.order = tuple(order)
        self.pos = {v: i for i, v in enumerate(self.order)}
        self.b = builder
        self.uses = {u.uid: u for u in kernel.uses}
        self.ref: dict[int, object] = {}
        self.next_level: dict[int, int] = {}
        self.virtual: dict[int, Virtual] = {}
        self.shared: dict[int, set[str]] = {}       # rid -> variables visited transparently
        self.never_empty: set = set()               # crd streams whose fibers are never empty
        self.spaces = IterationSpaces(self)
        self.scopes = Scopes(self)
        self.streams = Streams(self)

    def run(self) -> None:
        root_ref = self.b.root()
        for u in self.k.uses:
            self.ref[u.uid] = root_ref
            self.next_level[u.uid] = 0
        for root in self.k.roots:
            with self.b.at(root.loc):
                scope = Scope(root.expr, [v for v in self.order if v in root.out_vars], root_ref)
                self.scopes.visit_all(scope)
                vals = self.streams.evaluate(root.expr)
                self.streams.write(root, vals, scope.crd)

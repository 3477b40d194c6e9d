"""Plans the ``sam`` ops of one graph (:class:`PlanBuilder`), then emits them (:func:`emit_ops`).

Planning builds no IR: each method records a :class:`PlannedOp` (op name, operands, result
kinds, attributes as Python values, the location of the linalg op it came from) and returns
:class:`Stream` handles to its results. A stream with several consumers is a broadcast.
Planned ops are hash-consed: asking for an op identical to one planned before (same name,
operands and attributes) returns the existing one, so each stream is planned once and shared
by every consumer (a fused intermediate used twice, the two scans of one tensor level from
the same reference, ...). Emission creates the planned ops in order, one MLIR op each, named
by :mod:`fuseflow.dialects.naming`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from fuseflow import mlir
from fuseflow.dialects.naming import stable_names
from fuseflow.dialects.tiles import val_type_text

STREAM_TYPES = {"ref": "!sam.ref", "crd": "!sam.crd", "repsig": "!sam.repsig",
                "val": "!sam.val<f32, array<i64>>"}
"""Stream kind -> its ``sam`` type; a stream of tiles has kind ``val:4x4`` (:func:`tile_kind`)."""


def tile_kind(tile: tuple[int, ...]) -> str:
    """The stream kind of values that are tiles of shape ``tile`` (``val`` for scalars)."""
    return "val:" + "x".join(map(str, tile)) if tile else "val"


def kind_tile(kind: str) -> tuple[int, ...]:
    """The tile shape of a value stream kind (``()`` for scalars)."""
    return tuple(int(x) for x in kind[4:].split("x")) if kind.startswith("val:") else ()


def stream_type_text(kind: str) -> str:
    """The ``sam`` type of a stream kind."""
    return val_type_text(kind_tile(kind)) if kind.startswith("val") else STREAM_TYPES[kind]


@dataclass(frozen=True)
class Stream:
    """Result ``result`` (of kind ``kind``: 'ref', 'crd', 'repsig', 'val') of planned op
    ``op`` (its index in the plan)."""

    op: int
    result: int
    kind: str


@dataclass(frozen=True)
class TensorArg:
    """Graph operand ``index`` (a tensor read by scanners, locators and arrays)."""

    index: int


@dataclass(frozen=True)
class PlannedOp:
    """One ``sam`` op of a plan: operands are :class:`Stream` or :class:`TensorArg`, ``attrs``
    sorted ``(name, value)`` pairs of ints, floats, strings and int tuples."""

    name: str
    operands: tuple
    results: tuple[str, ...]
    attrs: tuple[tuple[str, object], ...] = ()
    origin: object = field(default=None, compare=False)
    """Location of the linalg op the op came from (None: the graph's)."""
    index: str | None = field(default=None, compare=False)
    """The index variable whose level a scanner enumerates (``fuseflow.index`` when emitted
    for ``sam-parallelize``)."""

    def key(self) -> tuple:
        return (self.name, self.operands, self.attrs)


class PlanBuilder:
    """Records the ops of one ``sam.graph`` body; ``tensor_types`` are the graph operands'."""

    def __init__(self, tensor_types: list, origin=None):
        self.tensor_types = list(tensor_types)
        self.ops: list[PlannedOp] = []
        self.origin = origin
        self._built: dict[tuple, int] = {}

    @contextlib.contextmanager
    def at(self, origin):
        """Ops planned inside come from the op at ``origin`` (None: keep the current one)."""
        saved = self.origin
        if origin is not None:
            self.origin = origin
        try:
            yield
        finally:
            self.origin = saved

    def _op(self, name: str, operands, results, attrs=None, pure=True,
            index: str | None = None) -> tuple[Stream, ...]:
        """Plans an op, or returns the results of the identical one planned before."""
        op = PlannedOp(name, tuple(operands), tuple(results),
                       tuple(sorted((attrs or {}).items())), self.origin, index)
        index = self._built.get(op.key()) if pure else None
        if index is None:
            index = len(self.ops)
            self.ops.append(op)
            if pure:
                self._built[op.key()] = index
        return tuple(Stream(index, i, kind) for i, kind in enumerate(results))

    def root(self):
        return self._op("sam.root", [], ["ref"])[0]

    def scan(self, parent, tensor: int, level: int, index: str | None = None):
        """Level scanner of input ``tensor`` at storage ``level`` (of index variable
        ``index``): returns (crd, ref)."""
        return self._op("sam.scan", [parent, TensorArg(tensor)], ["crd", "ref"],
                        {"level": level}, index=index)

    def locate(self, parent, crd, tensor: int, level: int):
        """Reference into dense ``level`` of input ``tensor`` for each coordinate of ``crd``
        (``parent`` holds one reference per fiber of ``crd``): random access, no scan. At the
        coordinates of a scan of that same level from ``parent`` it is the scan's reference."""
        scan = self._built.get(("sam.scan", (parent, TensorArg(tensor)), (("level", level),)))
        if scan is not None and Stream(scan, 0, "crd") == crd:
            return Stream(scan, 1, "ref")
        return self._op("sam.locate", [crd, parent, TensorArg(tensor)], ["ref", "crd"],
                        {"level": level})[0]

    def range_scan(self, parent, size: int, index: str | None = None):
        """Tensor-less dense scanner over ``size`` coordinates: returns (crd, ref)."""
        return self._op("sam.scan", [parent], ["crd", "ref"], {"level": 0, "size": size},
                        index=index)

    def repsig(self, crd):
        return self._op("sam.repsiggen", [crd], ["repsig"])[0]

    def repeat(self, stream, crd):
        """Repeats ``stream`` (refs or values) once per coordinate of ``crd``."""
        return self._op("sam.repeat", [stream, self.repsig(crd)], [stream.kind])[0]

    def joiner(self, kind: str, groups: list[tuple[object, list, list]]):
        """``sam.intersect``/``sam.union`` of (crd, refs, vals) groups: (crd, refs, vals)."""
        crds = [g[0] for g in groups]
        refs = [r for g in groups for r in g[1]]
        vals = [v for g in groups for v in g[2]]
        attrs = {
            "ref_groups": tuple(len(g[1]) for g in groups),
            "operandSegmentSizes": (len(crds), len(refs), len(vals)),
            "resultSegmentSizes": (1, len(refs), len(vals)),
        }
        if vals:
            attrs["val_groups"] = tuple(len(g[2]) for g in groups)
        results = self._op(f"sam.{kind}", crds + refs + vals,
                           ["crd"] + ["ref"] * len(refs) + [v.kind for v in vals], attrs)
        return results[0], list(results[1:1 + len(refs)]), list(results[1 + len(refs):])

    def array(self, ref, tensor: int, tile: tuple[int, ...] = ()):
        """Value loads; tiles of shape ``tile`` (the tensor's innermost dense levels) if given."""
        return self._op("sam.array", [ref, TensorArg(tensor)], [tile_kind(tile)])[0]

    def alu(self, kind: str, lhs, rhs=None, scalar: float | None = None,
            tile: tuple[str, tuple[int, ...]] | None = None):
        """An ALU; on tiles of other shapes than its operands' ``tile`` is (axes, result
        tile shape), e.g. ``("ik,kj->ij", (4, 4))``."""
        attrs: dict = {"op": kind}
        if scalar is not None:
            attrs["scalar"] = float(np.float32(scalar))     # the f32 attribute's value
        out = lhs.kind
        if tile is not None:
            attrs["tile"], out = tile[0], tile_kind(tile[1])
        operands = [lhs] if rhs is None else [lhs, rhs]
        return self._op("sam.alu", operands, [out], attrs)[0]

    def reduce(self, kind: str, val, outer=None, tile: tuple[str, tuple[int, ...]] | None = None):
        """Reducer of ``val``'s innermost fibers; ``outer``, the coordinates of the level
        above, when that level's fibers can be empty (see ``sim/blocks/reduce.py``); ``tile``
        (axes, result tile shape) when each tile is first reduced over some of its axes."""
        operands = [val] if outer is None else [val, outer]
        attrs: dict = {"kind": kind}
        out = val.kind
        if tile is not None:
            attrs["tile"], out = tile[0], tile_kind(tile[1])
        return self._op("sam.reduce", operands, [out], attrs)[0]

    def spacc(self, crds: list, val):
        """Sparse accumulator over the variable above ``crds`` (outer to inner)."""
        results = self._op("sam.spacc", list(crds) + [val], ["crd"] * len(crds) + [val.kind],
                           {"order": len(crds)})
        return list(results[:-1]), results[-1]

    def crddrop(self, inner, outer):
        return self._op("sam.crddrop", [inner, outer], ["crd", "crd"])

    def level_write(self, crd, result: int, level: int):
        self._op("sam.level_write", [crd], [], {"result": result, "level": level}, pure=False)

    def value_write(self, val, result: int):
        self._op("sam.value_write", [val], [], {"result": result}, pure=False)


def _attribute(name: str, value):
    if isinstance(value, tuple):
        if name.endswith("SegmentSizes"):
            return mlir.DenseI32ArrayAttr.get(list(value))
        return mlir.DenseI64ArrayAttr.get(list(value))
    if isinstance(value, str):
        return mlir.StringAttr.get(value)
    if isinstance(value, float):
        return mlir.FloatAttr.get(mlir.F32Type.get(), value)
    return mlir.IntegerAttr.get(mlir.IntegerType.get_signless(64), value)


INDEX_ATTR = "fuseflow.index"
"""The attribute naming the index variable of a scanner's level (see ``emit_ops``)."""


def emit_ops(ops: list[PlannedOp], tensors: list, loc, indices: bool = False) -> list:
    """Creates ``ops`` at the current insertion point, ``tensors`` standing for their
    :class:`TensorArg` operands; each op located ``NameLoc(stable name, origin or loc)``.
    ``indices``: scanners carry their index variable (:data:`INDEX_ATTR`), which
    ``sam-parallelize`` reads. Returns the created operations."""
    types = {kind: mlir.Type.parse(stream_type_text(kind))
             for kind in {k for op in ops for k in op.results}}
    values: list[list] = []
    created = []
    for op, name in zip(ops, stable_names(o.name for o in ops)):
        operands = [tensors[v.index] if isinstance(v, TensorArg) else values[v.op][v.result]
                    for v in op.operands]
        with loc:
            attrs = {k: _attribute(k, v) for k, v in op.attrs}
            if indices and op.index is not None:
                attrs[INDEX_ATTR] = mlir.StringAttr.get(op.index)
        made = mlir.Operation.create(
            op.name, results=[types[k] for k in op.results], operands=operands,
            attributes=attrs, loc=mlir.Location.name(name, childLoc=op.origin or loc))
        values.append(list(made.results))
        created.append(made)
    return created

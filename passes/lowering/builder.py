"""Emits ``sam`` ops into a ``sam.graph`` body, one method per primitive.

Every stream is an SSA value; a value with several uses is a broadcast. Ops are hash-consed:
asking for an op identical to one built before (same name, operands and attributes) returns
the existing one, so each stream is built once and shared by every consumer (a fused
intermediate used twice, the two scans of one tensor level from the same reference, ...).
"""

from __future__ import annotations

from fuseflow import mlir


class GraphBuilder:
    """Builds the body of one ``sam.graph`` at an insertion point, with one location."""

    def __init__(self, block, loc, tensors):
        self.block = block
        self.loc = loc
        self.tensors = tensors                        # block arguments (input tensors)
        self.ref_t = mlir.Type.parse("!sam.ref")
        self.crd_t = mlir.Type.parse("!sam.crd")
        self.sig_t = mlir.Type.parse("!sam.repsig")
        self.val_t = mlir.Type.parse("!sam.val<f32, array<i64>>")
        self._built: dict = {}

    @staticmethod
    def _key(name, operands, attrs) -> tuple:
        return (name, tuple(operands), tuple(sorted((k, str(v)) for k, v in attrs.items())))

    def _op(self, name, operands, results, attrs=None, pure=True):
        """Creates an op, or returns the identical one built before (streams are built once)."""
        attrs = attrs or {}
        key = None
        if pure:
            key = self._key(name, operands, attrs)
            if key in self._built:
                return self._built[key]
        op = mlir.Operation.create(name, results=results, operands=operands,
                                   attributes=attrs, loc=self.loc)
        if key is not None:
            self._built[key] = op
        return op

    @staticmethod
    def _i64(value: int):
        return mlir.IntegerAttr.get(mlir.IntegerType.get_signless(64), value)

    def root(self):
        return self._op("sam.root", [], [self.ref_t]).results[0]

    def scan(self, parent, tensor: int, level: int):
        """Level scanner of input ``tensor`` at storage ``level``: returns (crd, ref)."""
        op = self._op("sam.scan", [parent, self.tensors[tensor]], [self.crd_t, self.ref_t],
                      {"level": self._i64(level)})
        return op.results[0], op.results[1]

    def locate(self, parent, crd, tensor: int, level: int):
        """Reference into dense ``level`` of input ``tensor`` for each coordinate of ``crd``
        (``parent`` holds one reference per fiber of ``crd``): random access, no scan. At the
        coordinates of a scan of that same level from ``parent`` it is the scan's reference."""
        attrs = {"level": self._i64(level)}
        scan = self._built.get(self._key("sam.scan", [parent, self.tensors[tensor]], attrs))
        if scan is not None and scan.results[0] == crd:
            return scan.results[1]
        op = self._op("sam.locate", [crd, parent, self.tensors[tensor]], [self.ref_t, self.crd_t],
                      attrs)
        return op.results[0]

    def range_scan(self, parent, size: int):
        """Tensor-less dense scanner over ``size`` coordinates: returns (crd, ref)."""
        op = self._op("sam.scan", [parent], [self.crd_t, self.ref_t],
                      {"level": self._i64(0), "size": self._i64(size)})
        return op.results[0], op.results[1]

    def repsig(self, crd):
        return self._op("sam.repsiggen", [crd], [self.sig_t]).results[0]

    def repeat(self, stream, crd):
        """Repeats ``stream`` (refs or values) once per coordinate of ``crd``."""
        return self._op("sam.repeat", [stream, self.repsig(crd)], [stream.type]).results[0]

    def joiner(self, kind: str, groups: list[tuple[object, list, list]]):
        """``sam.intersect``/``sam.union`` of (crd, refs, vals) groups: (crd, refs, vals)."""
        crds = [g[0] for g in groups]
        refs = [r for g in groups for r in g[1]]
        vals = [v for g in groups for v in g[2]]
        attrs = {
            "ref_groups": mlir.DenseI64ArrayAttr.get([len(g[1]) for g in groups]),
            "operandSegmentSizes": mlir.DenseI32ArrayAttr.get([len(crds), len(refs), len(vals)]),
            "resultSegmentSizes": mlir.DenseI32ArrayAttr.get([1, len(refs), len(vals)]),
        }
        if vals:
            attrs["val_groups"] = mlir.DenseI64ArrayAttr.get([len(g[2]) for g in groups])
        op = self._op(f"sam.{kind}", crds + refs + vals,
                      [self.crd_t] + [self.ref_t] * len(refs) + [self.val_t] * len(vals), attrs)
        results = list(op.results)
        return results[0], results[1:1 + len(refs)], results[1 + len(refs):]

    def array(self, ref, tensor: int):
        return self._op("sam.array", [ref, self.tensors[tensor]], [self.val_t]).results[0]

    def alu(self, kind: str, lhs, rhs=None, scalar: float | None = None):
        attrs = {"op": mlir.StringAttr.get(kind)}
        if scalar is not None:
            attrs["scalar"] = mlir.FloatAttr.get(mlir.F32Type.get(), scalar, loc=self.loc)
        operands = [lhs] if rhs is None else [lhs, rhs]
        return self._op("sam.alu", operands, [self.val_t], attrs).results[0]

    def reduce(self, kind: str, val, outer=None):
        """Reducer of ``val``'s innermost fibers; ``outer``, the coordinates of the level
        above, when that level's fibers can be empty (see ``sim/blocks/reduce.py``)."""
        operands = [val] if outer is None else [val, outer]
        return self._op("sam.reduce", operands, [self.val_t],
                        {"kind": mlir.StringAttr.get(kind)}).results[0]

    def spacc(self, crds: list, val):
        """Sparse accumulator over the variable above ``crds`` (outer to inner)."""
        op = self._op("sam.spacc", list(crds) + [val], [self.crd_t] * len(crds) + [self.val_t],
                      {"order": self._i64(len(crds))})
        results = list(op.results)
        return results[:-1], results[-1]

    def crddrop(self, inner, outer):
        op = self._op("sam.crddrop", [inner, outer], [self.crd_t, self.crd_t])
        return op.results[0], op.results[1]

    def level_write(self, crd, result: int, level: int):
        self._op("sam.level_write", [crd], [],
                 {"result": self._i64(result), "level": self._i64(level)}, pure=False)

    def value_write(self, val, result: int):
        self._op("sam.value_write", [val], [], {"result": self._i64(result)}, pure=False)

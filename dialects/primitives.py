"""One definition per ``sam`` primitive: :data:`PRIMITIVES`, one row each.

Everything else that names a primitive is drawn from its row:

* the IRDL declaration (``dialects/sam.irdl.mlir``, generated section; the
  ``fuseflow.dialects.generate`` tool writes it and a test fails when it differs);
* the verifier (:mod:`fuseflow.dialects.verify`): declared attributes only, with their types,
  optional ones included (IRDL cannot declare optional attributes), and variadic counts;
* attribute building and reading (:mod:`fuseflow.dialects.attributes`), by declared type;
* the simulator's loader (``fuseflow.sim.loader``: op name -> block kind) and block kinds
  (``fuseflow.sim.graph.BLOCK_KINDS``), which the engines' dispatch tables must cover (a test
  checks it);
* the op reference in ``docs/dialects.md`` (generated section, tested to match).

Adding a primitive: add its row here, run ``python -m fuseflow.dialects.generate --write``,
then give it a reference block (``sim/blocks``) and, if IRDL cannot say everything, a check in
``dialects/verify.py``. Plain data: importing this module imports neither MLIR nor numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.dialects.alu import ALU_OP_NAMES

STREAM_KINDS = ("ref", "crd", "repsig", "val")
"""The stream types ``!sam.ref``, ``!sam.crd``, ``!sam.repsig`` and ``!sam.val<elem, tile>``."""
TENSOR = "tensor"
"""A port kind: a tensor (a ``sam.graph`` block argument), not a stream."""
ATTRIBUTE_TYPES = ("int", "float", "string", "i64_array")
"""Attribute types: ``IntegerAttr``, ``FloatAttr``, ``StringAttr``, ``DenseI64ArrayAttr``."""


@dataclass(frozen=True)
class Port:
    """An operand or result group of a primitive."""

    name: str
    kinds: tuple[str, ...]
    """Stream kinds it may carry (several: all ports with the same tuple share one type per op),
    or ``(TENSOR,)``."""
    arity: str = "single"
    """'single', 'optional' or 'variadic'."""
    min_count: int = 0
    """Fewest values of a variadic group (the verifier checks it)."""
    doc: str = ""
    own_type: bool = False
    """A value port whose type is its own (IRDL: its own constraint variables): its tile shape
    may differ from the op's other value ports' (``dialects/verify.py`` checks the shapes)."""


@dataclass(frozen=True)
class Attr:
    """An attribute of a primitive."""

    name: str
    type: str
    """One of :data:`ATTRIBUTE_TYPES`."""
    doc: str
    optional: bool = False
    values: tuple[str, ...] = ()
    """The allowed values of a string attribute (an enum); empty: any."""
    default: object = None
    """The value the simulator uses when an optional attribute is absent."""


@dataclass(frozen=True)
class Primitive:
    """One ``sam`` primitive: its ports, attributes and documentation."""

    name: str
    """The op name without the ``sam.`` prefix; also the simulator's block kind."""
    summary: str
    """One line: what the primitive computes."""
    operands: tuple[Port, ...] = ()
    results: tuple[Port, ...] = ()
    attributes: tuple[Attr, ...] = ()
    description: str = ""
    """More of the reference text (markdown), after the summary."""
    verifier: str = ""
    """What ``dialects/verify.py`` checks beyond IRDL and the table (empty: nothing)."""
    examples: tuple[str, ...] = ()
    """Generic-form examples for the reference (``%a``: CSR, ``%b``: dense, ``!val``)."""

    @property
    def op_name(self) -> str:
        """The full op name, e.g. ``sam.scan``."""
        return f"sam.{self.name}"

    @property
    def kind(self) -> str:
        """The simulator block kind."""
        return self.name

    def attribute(self, name: str) -> Attr | None:
        """The declared attribute ``name``, or None."""
        return next((a for a in self.attributes if a.name == name), None)


def _val(name: str, arity: str = "single", doc: str = "", own_type: bool = False) -> Port:
    return Port(name, ("val",), arity, doc=doc, own_type=own_type)





_LEVEL = Attr("level", "int", "storage level of the tensor operand (scanned level)")
_RESULT = Attr("result", "int", "index of the graph result written")
_JOINER_GROUPS = (
    Attr("ref_groups", "i64_array", "references travelling with each coordinate input"),
    Attr("val_groups", "i64_array", "value streams (fused intermediates) travelling with each "
         "coordinate input, after its references; absent: none", optional=True),
)
_JOINER_PORTS = dict(
    operands=(Port("crds", ("crd",), "variadic", 2, "coordinate inputs"),
              Port("refs", ("ref",), "variadic"),
              _val("vals", "variadic")),
    results=(Port("crd", ("crd",)), Port("out_refs", ("ref",), "variadic"),
             _val("out_vals", "variadic")),
)
_JOINER_VERIFIER = ("one `ref_groups` (and `val_groups`) entry per coordinate input, "
                    "non-negative, summing to the reference (value) operands; one result per "
                    "reference and value operand.")
_LANE_KINDS = ("ref", "crd", "val")

PRIMITIVES: tuple[Primitive, ...] = (
    Primitive(
        "root", "Emits reference 0, then done: the parent reference of every outermost scanner.",
        results=(Port("ref", ("ref",)),),
        examples=('%root = "sam.root"() : () -> !sam.ref',)),
    Primitive(
        "scan", "Level scanner: for each input reference, the fiber's coordinates and child "
        "references.",
        operands=(Port("parent", ("ref",)), Port("tensor", (TENSOR,), "optional")),
        results=(Port("crd", ("crd",)), Port("ref", ("ref",))),
        attributes=(_LEVEL, Attr("size", "int", "coordinates of the dense range scanned "
                                 "without a tensor operand", optional=True)),
        description="Scans level `level` of its tensor operand; the level format (dense, "
        "compressed, singleton) and size come from the tensor's type. Without a tensor operand "
        "it scans a dense range of `size` coordinates.",
        verifier="`level` is a storage level of the tensor; without a tensor, an integer `size`.",
        examples=(
            '%j:2 = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) '
            '-> (!sam.crd, !sam.ref)',
            '%k:2 = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) '
            '-> (!sam.crd, !sam.ref)')),
    Primitive(
        "locate", "Random access into a dense level by coordinate.",
        operands=(Port("crd", ("crd",)), Port("parent", ("ref",)), Port("tensor", (TENSOR,))),
        results=(Port("ref", ("ref",)), Port("out_crd", ("crd",))),
        attributes=(_LEVEL,),
        description="Instead of scanning and intersecting, returns the reference into dense "
        "level `level` of each coordinate (`parent` holds one reference per fiber of `crd`) "
        "and passes the coordinates through.",
        verifier="`level` is a storage level of the tensor.",
        examples=('%l:2 = "sam.locate"(%j#0, %rk, %b) {level = 1 : i64} : (!sam.crd, !sam.ref, '
                  'tensor<4x5xf32>) -> (!sam.ref, !sam.crd)',)),
    Primitive(
        "repsiggen", "Repeat-signal generator: a data or `N` coordinate gives `R`, a stop `S`, "
        "done `D`.",
        operands=(Port("crd", ("crd",)),), results=(Port("signal", ("repsig",)),),
        examples=('%sig = "sam.repsiggen"(%i#0) : (!sam.crd) -> !sam.repsig',)),
    Primitive(
        "repeat", "Repeater: re-emits the current reference or value once per `R`.",
        operands=(Port("input", ("ref", "val")), Port("signal", ("repsig",))),
        results=(Port("output", ("ref", "val")),),
        description="Broadcasts an operand across an index variable. Input and output have one "
        "type, `!sam.ref` or `!sam.val`.",
        examples=('%rep = "sam.repeat"(%root, %sig) : (!sam.ref, !sam.repsig) -> !sam.ref',)),
    Primitive(
        "intersect", "n-ary intersecter: the coordinates present in every input.",
        **_JOINER_PORTS, attributes=_JOINER_GROUPS,
        description="Operands are the coordinate streams, then the reference streams, then the "
        "value streams; `ref_groups[i]` references and `val_groups[i]` values travel with "
        "coordinate input `i`. Results: the joined coordinates, then one stream per reference "
        "and value operand. Three variadic groups need `operandSegmentSizes` and "
        "`resultSegmentSizes`.",
        verifier=_JOINER_VERIFIER,
        examples=('%c:3 = "sam.intersect"(%i#0, %j#0, %i#1, %j#1) {operandSegmentSizes = '
                  'array<i32: 2, 2, 0>, ref_groups = array<i64: 1, 1>, resultSegmentSizes = '
                  'array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> '
                  '(!sam.crd, !sam.ref, !sam.ref)',)),
    Primitive(
        "union", "n-ary unioner: the coordinates present in any input; `N` for the references "
        "and values of an input that lacks one.",
        **_JOINER_PORTS, attributes=_JOINER_GROUPS,
        description="Ports and attributes as `sam.intersect`.",
        verifier=_JOINER_VERIFIER,
        examples=('%u:3 = "sam.union"(%i#0, %j#0, %i#1, %j#1) {operandSegmentSizes = '
                  'array<i32: 2, 2, 0>, ref_groups = array<i64: 1, 1>, resultSegmentSizes = '
                  'array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> '
                  '(!sam.crd, !sam.ref, !sam.ref)',)),
    Primitive(
        "array", "Value load: `vals[ref]` of its tensor operand; an `N` reference gives an "
        "`N` value (a tile of zeros for tiles).",
        operands=(Port("ref", ("ref",)), Port("tensor", (TENSOR,))), results=(_val("val"),),
        examples=('%v = "sam.array"(%j#1, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> '
                  '!sam.val<f32, array<i64>>',)),
    Primitive(
        "alu", "Arithmetic on one or two value streams: scalars, or tiles.",
        operands=(_val("lhs", own_type=True), _val("rhs", "optional", own_type=True)),
        results=(_val("out", own_type=True),),
        attributes=(Attr("op", "string", "the operation (`fuseflow.dialects.alu`)",
                         values=ALU_OP_NAMES),
                    Attr("scalar", "float", "the constant operand of the scalar ops and the "
                         "fill of `mask_fill`", optional=True),
                    Attr("tile", "string", "axes of the operand and result tiles, "
                         "`ik,kj->ij`: operands broadcast over the result's axes; axes of both "
                         "operands missing from the result are summed (a tile product, `mul` "
                         "only)", optional=True)),
        description="Binary ops take two streams; scalar ops one stream and the `scalar` "
        "attribute; `mask_fill(m, x)` is `x` where `m != 0`, else `scalar`. A missing operand "
        "(`N`) counts as 0.0 (a tile of zeros), except that absent entries annihilate a "
        "product: a product with `N` is 0.0 whatever the other operand holds (NaN and "
        "infinities included; `ABSENT_ANNIHILATES` in `dialects/alu.py`); the "
        "result is a value, never `N`. Semantics are float32, as PyTorch eager "
        "computes them (`dialects/alu.py`). On tiles (`!sam.val<f32, array<i64: h, w>>`) the "
        "op applies element by element; without `tile` every operand and the result have one "
        "type.",
        verifier="two operands for binary ops and `mask_fill`, one otherwise; a float `scalar` "
        "for the scalar ops and `mask_fill`; without `tile` one type for every value, with it "
        "tile shapes that agree with its axes.",
        examples=('%p = "sam.alu"(%v, %w) {op = "mul"} : (!val, !val) -> !val',
                  '%e = "sam.alu"(%p) {op = "exp"} : (!val) -> !val',
                  '%s = "sam.alu"(%e) {op = "scalar_mul", scalar = 1.250000e-01 : f32} : (!val) '
                  '-> !val',
                  '%t = "sam.alu"(%a, %b) {op = "mul", tile = "ik,kj->ij"} : (!sam.val<f32, '
                  'array<i64: 4, 4>>, !sam.val<f32, array<i64: 4, 4>>) -> !sam.val<f32, '
                  'array<i64: 4, 4>>')),
    Primitive(
        "reduce", "Reducer: sums or maxes each innermost fiber, removing one stop level.",
        operands=(_val("input", own_type=True),
                  Port("outer", ("crd",), "optional",
                       doc="coordinates of the level above the reduced one")),
        results=(_val("output", own_type=True),),
        attributes=(Attr("kind", "string", "the reduction", values=("sum", "max")),
                    Attr("tile", "string", "axes of the input and output tiles, `ij->i`: each "
                         "input tile is first reduced over the axes the output lacks",
                         optional=True)),
        description="A bare stop `S_k` (k > 0) is ambiguous in the stream grammar (an empty "
        "last fiber, or an outer fiber with no fiber at all); with the `outer` coordinates the "
        "reducer emits a value per coordinate and none for an empty outer fiber. The lowering "
        "passes them when that level's fibers can be empty. On tiles the fiber's tiles are "
        "summed (maxed) element by element; an empty fiber gives a tile of zeros.",
        verifier="without `tile` input and output have one type; with it tile shapes that "
        "agree with its axes.",
        examples=('%sum = "sam.reduce"(%p) {kind = "sum"} : (!val) -> !val',
                  '%row = "sam.reduce"(%p, %i#0) {kind = "sum"} : (!val, !sam.crd) -> !val')),
    Primitive(
        "spacc", "Sparse accumulator of order n: reduces over the index variable n levels above "
        "the innermost.",
        operands=(Port("crds", ("crd",), "variadic"), _val("val")),
        results=(Port("out_crds", ("crd",), "variadic"), _val("out_val")),
        attributes=(Attr("order", "int", "n: the coordinate operands (and results)"),),
        description="Operands: the n coordinate streams below the reduced variable (outer to "
        "inner) and the values; results: those coordinate streams and the values, flushed in "
        "sorted coordinate order.",
        verifier="`order` is at least 1 and equals the number of coordinate operands and results.",
        examples=('%acc:2 = "sam.spacc"(%j#0, %p) {order = 1 : i64} : (!sam.crd, !val) -> '
                  '(!sam.crd, !val)',)),
    Primitive(
        "crddrop", "Coordinate dropper: drops the outer coordinates whose inner fiber came out "
        "empty.",
        operands=(Port("inner", ("crd",)), Port("outer", ("crd",))),
        results=(Port("out_inner", ("crd",)), Port("out_outer", ("crd",))),
        examples=('%d:2 = "sam.crddrop"(%j#0, %i#0) : (!sam.crd, !sam.crd) -> (!sam.crd, '
                  '!sam.crd)',)),
    Primitive(
        "crdhold", "Coordinate hold: repeats the outer coordinate once per inner coordinate.",
        operands=(Port("inner", ("crd",)), Port("outer", ("crd",))),
        results=(Port("out_inner", ("crd",)), Port("out_outer", ("crd",))),
        examples=('%h:2 = "sam.crdhold"(%j#0, %i#0) : (!sam.crd, !sam.crd) -> (!sam.crd, '
                  '!sam.crd)',)),
    Primitive(
        "level_write", "Level writer: builds storage level `level` of graph result `result` "
        "from a coordinate stream.",
        operands=(Port("crd", ("crd",)),),
        attributes=(_RESULT, Attr("level", "int", "storage level of the result written")),
        verifier="`result` names a graph result and `level` one of its storage levels; exactly "
        "one writer per (result, level).",
        examples=('"sam.level_write"(%i#0) {level = 0 : i64, result = 0 : i64} : (!sam.crd) -> '
                  '()',)),
    Primitive(
        "value_write", "Value writer: the values of graph result `result`.",
        operands=(_val("val"),), attributes=(_RESULT,),
        verifier="`result` names a graph result; exactly one value writer per result.",
        examples=('"sam.value_write"(%sum) {result = 0 : i64} : (!val) -> ()',)),
    Primitive(
        "fork", "Fork: deals data tokens round-robin to its lanes; control tokens go to every "
        "lane.",
        operands=(Port("input", _LANE_KINDS),),
        results=(Port("lanes", _LANE_KINDS, "variadic", 2, "lanes"),),
        description="Lanes are all of the input's stream type (`!sam.ref`, `!sam.crd` or "
        "`!sam.val`).",
        examples=('%lanes:2 = "sam.fork"(%i#0) : (!sam.crd) -> (!sam.crd, !sam.crd)',)),
    Primitive(
        "join", "Join: merges lanes back into the order the fork dealt them, led by the "
        "coordinates of the forked level.",
        operands=(Port("order", ("crd",), doc="coordinates of the forked level: the stream the "
                       "fork dealt, or one of its structure"),
                  Port("lanes", _LANE_KINDS, "variadic", 2, "lanes")),
        results=(Port("output", _LANE_KINDS),),
        attributes=(Attr("depth", "int", "stop levels each forked data token grew into before "
                         "the join: 0 for a value, 1 for a fiber, d for a d-level subtree",
                         optional=True, default=1),),
        description="Each data token of `order` is one *unit* (what one forked token became), "
        "forwarded from the lane the fork dealt it to; each stop of `order` closes the merged "
        "fiber. `docs/timing.md` gives the full semantics.",
        verifier="`depth` is non-negative.",
        examples=('%merged = "sam.join"(%i#0, %crds#0, %crds#1) : (!sam.crd, !sam.crd, !sam.crd) '
                  '-> !sam.crd',
                  '%vals = "sam.join"(%i#0, %v0, %v1) {depth = 0 : i64} : (!sam.crd, !val, !val) '
                  '-> !val')),
)

BY_OP_NAME: dict[str, Primitive] = {p.op_name: p for p in PRIMITIVES}
"""``sam.<name>`` -> its row."""
SEGMENT_ATTRIBUTES = ("operandSegmentSizes", "resultSegmentSizes")
"""Attributes IRDL itself requires on ops with several optional or variadic groups."""


def primitive(op_name: str) -> Primitive | None:
    """The row of ``op_name`` (e.g. ``sam.scan``), or None for an op that is no primitive."""
    return BY_OP_NAME.get(op_name)


def is_declared_attribute(prim: Primitive, name: str) -> bool:
    """Whether ``name`` may appear on ``prim``: declared, IRDL segment sizes, or discardable
    (a dialect-prefixed name such as ``fuseflow.name``)."""
    return prim.attribute(name) is not None or name in SEGMENT_ATTRIBUTES or "." in name

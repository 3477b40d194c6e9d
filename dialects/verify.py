"""Verifiers for what the IRDL definitions of ``fuse`` and ``sam`` cannot say.

IRDL checks operand, result and attribute kinds. These checks add the structural rules:
container segment sizes are the maximal runs of their operand and result types (one spelling
per container), container bodies match their operands and end in the shared terminator, every
``sam.graph`` result is written exactly once per storage level and once for its values,
attributes are in range of the tensors they index, and operand counts fit each primitive.
What the primitive table (:mod:`fuseflow.dialects.primitives`) declares is checked for every
primitive: only declared attributes, each of its declared type (optional ones too, which IRDL
cannot declare), and the fewest values of variadic groups; ``SAM_CHECKS`` adds per-op rules.

``check_module`` returns located :class:`Diagnostic` records; ``verify_module`` emits them as
MLIR error diagnostics (``Location.emit_error``) and says whether the module is valid.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fuseflow import mlir
from fuseflow.dialects import primitives
from fuseflow.dialects.alu import AluError, alu_op
from fuseflow.dialects.containers import TERMINATOR, type_runs
from fuseflow.dialects.ir import op_of, walk
from fuseflow.dialects.primitives import Attr, Port, Primitive
from fuseflow.dialects.tiles import TileError, TileSpec, val_tile


@dataclass(frozen=True)
class Diagnostic:
    """One verification error: where and what."""

    location: "mlir.Location"
    message: str


# One instance of each stream type: all `!sam.val<...>` share one TypeID.
STREAM_TYPES = ("!sam.ref", "!sam.crd", "!sam.repsig", "!sam.val<f32, array<i64>>")


def verify_module(module_op) -> bool:
    """Runs every check on ``module_op``, emits each error at its location; True if valid."""
    return emit(check_module(module_op))


def emit(diagnostics: list[Diagnostic]) -> bool:
    """Emits ``diagnostics`` as MLIR errors; True if there were none."""
    for diag in diagnostics:
        diag.location.emit_error(diag.message)
    return not diagnostics


def check_module(module_op, dialects: tuple[str, ...] = ("fuse", "sam")) -> list[Diagnostic]:
    """The errors of every op of the given dialects nested in ``module_op``."""
    checker = _Checker(op_of(module_op), dialects)
    for op in walk(module_op):
        checker.visit(op)
    for graph in checker.graphs.values():
        checker.check_graph(graph)
    return checker.diagnostics


def num_levels(t) -> int | None:
    """Storage levels of a ranked tensor type (its rank, or its encoding's level count)."""
    if not isinstance(t, mlir.RankedTensorType):
        return None
    if t.encoding is None:
        return t.rank
    return len(mlir.sparse_tensor.EncodingAttr(t.encoding).lvl_types)


def _int_attr(op, name: str) -> int | None:
    if name not in op.attributes:
        return None
    attr = op.attributes[name]
    return attr.value if isinstance(attr, mlir.IntegerAttr) else None


def _int_array(op, name: str) -> list[int] | None:
    if name not in op.attributes:
        return None
    attr = op.attributes[name]
    if isinstance(attr, (mlir.DenseI64ArrayAttr, mlir.DenseI32ArrayAttr)):
        return list(attr)
    return None


def _zero_padded(sizes: list[int]) -> str:
    """``[2, 1] then zeros`` for ``[2, 1, 0, ..., 0]``."""
    used = list(sizes)
    while used and used[-1] == 0:
        used.pop()
    return f"[{', '.join(map(str, used))}] then zeros"


class _Checker:
    """One walk over a module, collecting diagnostics."""

    def __init__(self, module_op, dialects: tuple[str, ...]):
        self.fuse = "fuse" in dialects
        self.sam = "sam" in dialects and module_op.context.is_registered_operation("sam.graph")
        self.diagnostics: list[Diagnostic] = []
        self.graphs: dict = {}       # sam.graph op -> its _Graph, in walk order
        self.stream_typeids = set()
        if self.sam:
            self.stream_typeids = {mlir.Type.parse(t, module_op.context).typeid
                                   for t in STREAM_TYPES}

    def error(self, op, message: str) -> None:
        self.diagnostics.append(Diagnostic(op.location, f"'{op.name}' op {message}"))

    def is_stream(self, value) -> bool:
        return value.type.typeid in self.stream_typeids

    def visit(self, op) -> None:
        name = op.name
        if self.fuse and name == "fuse.kernel":
            self.check_kernel(op)
        elif self.sam and name == "sam.graph":
            if _enclosing_graph(op) is not None:
                self.error(op, "must not be nested in another 'sam.graph'")
            self.graphs[op] = _Graph(op)
            self.check_container(op)
        elif self.sam and name.startswith("sam."):
            graph = self.graphs.get(op_of(op.parent)) if op.parent is not None else None
            if graph is None:
                self.error(op, "must be directly inside a 'sam.graph'")
                return
            self.check_streams(op, graph)
            prim = primitives.primitive(name)
            if prim is not None:
                self.check_declared(op, prim)
                check = SAM_CHECKS.get(name)
                if check is not None:
                    check(self, op, graph)
        elif self.sam:
            for index, value in enumerate(op.operands):
                if self.is_stream(value):
                    self.error(op, f"uses stream operand #{index}; only sam ops consume streams")

    # Containers.

    def check_container(self, op) -> None:
        for attr, values, noun in (("operandSegmentSizes", op.operands, "input"),
                                   ("resultSegmentSizes", op.results, "result")):
            sizes = _int_array(op, attr)
            runs = type_runs([v.type for v in values])
            if sizes is not None and sizes != runs + [0] * (len(sizes) - len(runs)):
                self.error(op, f"'{attr}' must hold the lengths of the runs of equal consecutive "
                               f"{noun} types, {_zero_padded(runs)}; got {_zero_padded(sizes)}")
        if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
            return  # IRDL reports the region shape
        block = op.regions[0].blocks[0]
        args, inputs = list(block.arguments), list(op.operands)
        if len(args) != len(inputs):
            self.error(op, f"body has {len(args)} arguments but the op has {len(inputs)} inputs")
            return
        for index, (arg, value) in enumerate(zip(args, inputs)):
            if arg.type != value.type:
                self.error(op, f"body argument #{index} has type {arg.type} but input #{index} "
                               f"has type {value.type}")

    def terminator(self, op):
        if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
            return None
        ops = list(op.regions[0].blocks[0].operations)
        if not ops:
            return None
        last = op_of(ops[-1])
        if last.name != TERMINATOR:
            self.error(op, f"body must end in '{TERMINATOR}', found '{last.name}'")
            return None
        return last

    def check_kernel(self, op) -> None:
        self.check_container(op)
        yield_op = self.terminator(op)
        if yield_op is None:
            return
        yielded = [v.type for v in yield_op.operands]
        results = [r.type for r in op.results]
        if len(yielded) != len(results):
            self.error(op, f"body yields {len(yielded)} values but the op has {len(results)} "
                           "results")
            return
        for index, (got, want) in enumerate(zip(yielded, results)):
            if got != want:
                self.error(op, f"yielded value #{index} has type {got} but result #{index} "
                               f"has type {want}")

    def check_graph(self, graph: "_Graph") -> None:
        op = graph.op
        yield_op = self.terminator(op)
        if yield_op is not None and len(yield_op.operands):
            self.error(op, f"'{TERMINATOR}' of a graph takes no operands; results are filled by "
                           "'sam.level_write' and 'sam.value_write'")
        for index, result in enumerate(op.results):
            levels = num_levels(result.type)
            if levels is None:
                self.error(op, f"result #{index} must be a ranked tensor, got {result.type}")
                continue
            values = graph.value_writes[index]
            if values != 1:
                self.error(op, f"result #{index} needs exactly one 'sam.value_write', has {values}")
            # a value writer of tiles writes the innermost levels too, one per tile axis
            tiled = levels - graph.value_tile_levels.get(index, 0)
            for level in range(levels):
                writes = graph.level_writes[(index, level)]
                if level >= tiled and writes == 0:
                    continue
                if writes != 1:
                    self.error(op, f"level {level} of result #{index} needs exactly one "
                                   f"'sam.level_write', has {writes}")

    # Primitives.

    def check_streams(self, op, graph: "_Graph") -> None:
        for index, value in enumerate(op.operands):
            if self.is_stream(value) and value not in graph.values:
                self.error(op, f"stream operand #{index} is not defined in this 'sam.graph'")

    def check_declared(self, op, prim: Primitive) -> None:
        """Attributes declared by the table, of their declared types; variadic counts."""
        for name in op.attributes:
            decl, attr = prim.attribute(name), op.attributes[name]
            if decl is None and not primitives.is_declared_attribute(prim, name):
                declared = ", ".join(a.name for a in prim.attributes) or "none"
                self.error(op, f"has undeclared attribute '{name}'; declared: {declared}")
            elif decl is not None and not _has_type(attr, decl):
                self.error(op, f"attribute '{name}' must be {_TYPE_NAMES[decl.type]}"
                               f"{_values_text(decl)}, got {attr}")
        for ports, values, segments in ((prim.operands, op.operands, "operandSegmentSizes"),
                                        (prim.results, op.results, "resultSegmentSizes")):
            counts = _group_counts(ports, len(values), _int_array(op, segments))
            for port, count in zip(ports, counts):
                if count < port.min_count:
                    self.error(op, f"needs at least {port.min_count} {port.doc}, got {count}")

    def check_level(self, op, tensor) -> None:
        level = _int_attr(op, "level")
        levels = num_levels(tensor.type)
        if levels is None:
            self.error(op, f"tensor operand must be a ranked tensor, got {tensor.type}")
        elif level is not None and not 0 <= level < levels:
            self.error(op, f"level {level} is out of range for a tensor with {levels} levels")


_TYPES = {"int": mlir.IntegerAttr, "float": mlir.FloatAttr, "string": mlir.StringAttr,
          "i64_array": mlir.DenseI64ArrayAttr}
_TYPE_NAMES = {"int": "an integer", "float": "a float", "string": "a string",
               "i64_array": "a dense i64 array"}


def _has_type(attr, decl: Attr) -> bool:
    if not isinstance(attr, _TYPES[decl.type]):
        return False
    return not decl.values or attr.value in decl.values


def _values_text(decl: Attr) -> str:
    return f" (one of {', '.join(decl.values)})" if decl.values else ""


def _group_counts(ports: tuple[Port, ...], total: int, segments: list[int] | None) -> list[int]:
    """How many values each port group holds: the segment sizes, or what the singles leave."""
    if segments is not None and len(segments) == len(ports):
        return segments
    rest = total - sum(p.arity == "single" for p in ports)
    return [1 if p.arity == "single" else rest for p in ports]


def _enclosing_graph(op):
    parent = op.parent
    while parent is not None:
        if parent.name == "sam.graph":
            return parent
        parent = parent.parent
    return None


class _Graph:
    """One ``sam.graph`` being checked: the values it defines and the writes seen so far."""

    def __init__(self, op):
        self.op = op
        self.values = set()
        for region in op.regions:
            for block in region.blocks:
                self.values.update(block.arguments)
                for child in block.operations:
                    self.values.update(child.results)
        self.value_writes: Counter = Counter()
        self.level_writes: Counter = Counter()
        self.value_tile_levels: dict[int, int] = {}   # result -> levels its value tiles fill


def _check_scan(checker: _Checker, op, graph: _Graph) -> None:
    operands = list(op.operands)
    if len(operands) == 2:
        checker.check_level(op, operands[1])
        if "size" in op.attributes:
            checker.error(op, "with a tensor operand takes its size from the tensor; remove "
                              "'size'")
    elif "size" not in op.attributes:
        checker.error(op, "without a tensor operand needs an integer 'size' attribute")


def _check_locate(checker: _Checker, op, graph: _Graph) -> None:
    checker.check_level(op, list(op.operands)[2])


def _check_alu(checker: _Checker, op, graph: _Graph) -> None:
    kind_attr = op.attributes["op"] if "op" in op.attributes else None
    if not isinstance(kind_attr, mlir.StringAttr):
        return  # IRDL reports a missing or malformed kind
    try:
        alu = alu_op(kind_attr.value)
    except AluError as err:
        checker.error(op, err.message)
        return
    if len(op.operands) != alu.arity:
        checker.error(op, f"'{alu.name}' takes {alu.arity} operand{'s' if alu.arity > 1 else ''}, "
                          f"got {len(op.operands)}")
    scalar = op.attributes["scalar"] if "scalar" in op.attributes else None
    if alu.needs_scalar and scalar is None:
        checker.error(op, f"'{alu.name}' needs a float 'scalar' attribute")
    elif not alu.needs_scalar and scalar is not None:
        checker.error(op, f"'{alu.name}' takes no 'scalar' attribute")
    if len(op.operands) == alu.arity:
        _check_tiles(checker, op, alu.arity)
        spec = op.attributes["tile"] if "tile" in op.attributes else None
        if spec is not None and alu.name != "mul" and isinstance(spec, mlir.StringAttr):
            try:
                contracted = TileSpec.parse(spec.value, alu.arity).contracted
            except TileError:
                return
            if contracted:
                checker.error(op, f"'{alu.name}' cannot sum tile axes '{contracted}' (only a "
                                  "'mul' is a tile product)")


def _check_reduce(checker: _Checker, op, graph: _Graph) -> None:
    _check_tiles(checker, op, 1)


def _check_tiles(checker: _Checker, op, arity: int) -> None:
    """The value operands' and result's tile shapes: one type without ``tile``, shapes that
    agree with its axes with it (``fuseflow.dialects.tiles``)."""
    types = [v.type for v in list(op.operands)[:arity]] + [op.results[0].type]
    shapes = [val_tile(t) for t in types]
    if any(s is None for s in shapes):
        return  # IRDL reports a non-value type
    spec = op.attributes["tile"] if "tile" in op.attributes else None
    if spec is None:
        if len(set(map(str, types))) > 1:
            checker.error(op, "operands and result must have one type without a 'tile' "
                              f"attribute naming their axes; got {', '.join(map(str, types))}")
        return
    if not isinstance(spec, mlir.StringAttr):
        return  # check_declared reports the attribute's type
    try:
        TileSpec.parse(spec.value, arity).check(shapes[:-1], shapes[-1])
    except TileError as err:
        checker.error(op, str(err))


def _check_joiner(checker: _Checker, op, graph: _Graph) -> None:
    segments, groups = _int_array(op, "operandSegmentSizes"), _int_array(op, "ref_groups")
    if segments is None or groups is None:
        return  # IRDL reports missing attributes
    crds, refs, vals = segments
    val_groups = _int_array(op, "val_groups") if "val_groups" in op.attributes else [0] * crds
    for name, grp, total, what in (("ref_groups", groups, refs, "reference"),
                                   ("val_groups", val_groups, vals, "value")):
        if grp is None:
            return  # check_declared reports a malformed attribute
        if len(grp) != crds:
            checker.error(op, f"'{name}' has {len(grp)} entries but there are {crds} "
                              "coordinate inputs")
        if any(g < 0 for g in grp) or sum(grp) != total:
            checker.error(op, f"'{name}' {grp} must be non-negative and sum to the {total} "
                              f"{what} inputs")
    if len(op.results) - 1 != refs + vals:
        checker.error(op, f"has {len(op.results) - 1} stream results but {refs + vals} "
                          "reference and value inputs")


def _check_spacc(checker: _Checker, op, graph: _Graph) -> None:
    order = _int_attr(op, "order")
    crds_in, crds_out = len(op.operands) - 1, len(op.results) - 1
    if order is None or order < 1:
        checker.error(op, f"'order' must be at least 1, got {order}")
    elif order != crds_in or order != crds_out:
        checker.error(op, f"'order' {order} must equal the number of coordinate inputs "
                          f"({crds_in}) and outputs ({crds_out})")


def _check_join(checker: _Checker, op, graph: _Graph) -> None:
    depth = _int_attr(op, "depth")
    if depth is not None and depth < 0:
        checker.error(op, f"'depth' must be non-negative, got {depth}")


def _check_writer(checker: _Checker, op, graph: _Graph) -> None:
    result = _int_attr(op, "result")
    results = list(graph.op.results)
    if result is None or not 0 <= result < len(results):
        checker.error(op, f"result {result} is out of range for a graph with {len(results)} "
                          "results")
        return
    if op.name == "sam.value_write":
        graph.value_writes[result] += 1
        tile = val_tile(op.operands[0].type) if len(op.operands) else None
        if tile:
            graph.value_tile_levels[result] = len(tile)
        return
    level = _int_attr(op, "level")
    levels = num_levels(results[result].type)
    if levels is not None and (level is None or not 0 <= level < levels):
        checker.error(op, f"level {level} is out of range for result #{result} with {levels} "
                          "levels")
        return
    graph.level_writes[(result, level)] += 1


SAM_CHECKS = {
    "sam.scan": _check_scan,
    "sam.locate": _check_locate,
    "sam.alu": _check_alu,
    "sam.reduce": _check_reduce,
    "sam.intersect": _check_joiner,
    "sam.union": _check_joiner,
    "sam.spacc": _check_spacc,
    "sam.join": _check_join,
    "sam.level_write": _check_writer,
    "sam.value_write": _check_writer,
}
"""Per-op rules beyond the table; a row's ``verifier`` text documents its entry."""

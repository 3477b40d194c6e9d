"""Index notation of a kernel: each ``linalg.generic`` as an Einsum over index variables.

``extract_einsum`` reads one generic whose inputs are kernel arguments and returns an
:class:`Einsum`: an expression tree whose leaves are *uses* of tensors (each occurrence of an
operand in the body is its own use, with its own streams), the output's storage-level
variables, the reduction variables and kind, and every variable's extent. Anything the
lowering cannot express is a :class:`LoweringError` located at the op that caused it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.dialects.types import Level, UnsupportedTypeError, storage_levels
from fuseflow.passes.ir_utils import defining_op, generic_inputs, generic_outputs, is_fill, op_of


class LoweringError(Exception):
    """An unsupported construct; carries the MLIR location to report it at."""

    def __init__(self, loc, message: str):
        super().__init__(message)
        self.loc = loc


@dataclass(frozen=True)
class Use:
    """One occurrence of a kernel input in the expression."""

    uid: int
    operand: int                    # index of the kernel input (graph block argument)
    levels: tuple[int, ...]         # storage levels that are scanned, outermost first
    vars: tuple[str, ...]           # index variable of each scanned level

    def __str__(self):
        return f"T{self.operand}[{','.join(self.vars)}]"


@dataclass(frozen=True)
class Const:
    """A scalar constant."""

    value: float

    def __str__(self):
        return repr(self.value)


@dataclass(frozen=True)
class Op:
    """An arithmetic node; ``kind`` is a sam.alu op name (binary or unary)."""

    kind: str
    args: tuple

    def __str__(self):
        return f"{self.kind}({', '.join(str(a) for a in self.args)})"


BINARY = ("add", "sub", "mul", "div", "max", "min")
UNARY = ("neg", "exp", "rsqrt", "sqrt", "sigmoid", "tanh", "relu")


@dataclass
class Einsum:
    """``out[out_vars] = init (+|max) reduce_{reduce_vars} body`` over named index variables."""

    body: object
    uses: list[Use]
    out_vars: tuple[str, ...]       # variable of each output storage level
    reduce_vars: tuple[str, ...]
    reduce_kind: str | None          # 'sum' | 'max' | None
    init: float | None               # accumulator initial value when reducing
    sizes: dict[str, int] = field(default_factory=dict)
    result_type: object = None
    loc: object = None

    def all_vars(self) -> tuple[str, ...]:
        return tuple(self.sizes)

    def __str__(self):
        red = f"{self.reduce_kind}_{{{','.join(self.reduce_vars)}}} " if self.reduce_vars else ""
        return f"out[{','.join(self.out_vars)}] = {red}{self.body}"


ARITH_BINARY = {
    "arith.addf": "add", "arith.subf": "sub", "arith.mulf": "mul", "arith.divf": "div",
    "arith.maximumf": "max", "arith.maxnumf": "max", "arith.minimumf": "min",
    "arith.minnumf": "min",
}
UNARY_OPS = {"arith.negf": "neg", "math.exp": "exp", "math.rsqrt": "rsqrt",
             "math.sqrt": "sqrt", "math.tanh": "tanh"}


def _float_const(value) -> float | None:
    producer = defining_op(value)
    if producer is None or producer.name != "arith.constant":
        return None
    attr = producer.attributes["value"]
    if isinstance(attr, mlir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, mlir.IntegerAttr):
        return float(attr.value)
    return None


def _init_value(out_value, loc) -> float | None:
    """The constant an ``outs`` operand is filled with, or None for ``tensor.empty``."""
    producer = defining_op(out_value)
    if producer is None:
        raise LoweringError(loc, "output of a kernel op must be initialized inside the kernel")
    if producer.name in ("tensor.empty", "bufferization.alloc_tensor"):
        return None
    if is_fill(producer):
        scalar = _float_const(list(producer.operands)[0])
        if scalar is not None:
            return scalar
    raise LoweringError(producer.location,
                        f"unsupported initialization of a kernel output by '{producer.name}'")


def _access_vars(map_attr, value_type, iter_names, loc, what):
    """The scanned storage levels of an operand and the index variable of each."""
    try:
        shape, levels = storage_levels(value_type)
    except UnsupportedTypeError as err:
        raise LoweringError(loc, f"{what}: {err}") from None
    amap = mlir.ir.AffineMapAttr(map_attr).value
    results = list(amap.results)
    scanned, names = [], []
    for index, level in enumerate(levels):
        if level.kind != "id":
            raise LoweringError(loc, f"{what}: blocked level '{level.kind} {level.block}' of "
                                f"'{value_type}' is not supported by the scalar lowering")
        text = str(results[level.dim]).strip()
        if text.startswith("d") and text[1:].isdigit():
            scanned.append(index)
            names.append(iter_names[int(text[1:])])
        elif text == "0" and shape[level.dim] == 1 and level.format == "dense":
            continue  # a broadcast size-1 dense level: its child reference equals its parent's
        else:
            raise LoweringError(loc, f"{what}: indexing expression '{text}' is not supported")
    return shape, levels, tuple(scanned), tuple(names)


def extract_einsum(generic, arg_index: dict, result_type, var_prefix: str = "") -> Einsum:
    """Index notation of ``generic``; ``arg_index`` maps kernel block arguments to input numbers."""
    generic = op_of(generic)
    loc = generic.location
    if generic.name != "linalg.generic":
        raise LoweringError(loc, f"unsupported op '{generic.name}': only linalg.generic can be "
                                 "lowered (run fuseflow-normalize first)")
    iter_types = [str(a) for a in mlir.ir.ArrayAttr(generic.attributes["iterator_types"])]
    iter_names = [f"{var_prefix}d{k}" for k in range(len(iter_types))]
    maps = list(mlir.ir.ArrayAttr(generic.attributes["indexing_maps"]))
    ins, outs = generic_inputs(generic), generic_outputs(generic)
    if len(outs) != 1:
        raise LoweringError(loc, f"linalg.generic with {len(outs)} outputs is not supported")
    sizes: dict[str, int] = {}
    body_block = generic.regions[0].blocks[0]
    args = list(body_block.arguments)
    uses: list[Use] = []

    def note_sizes(shape, levels, scanned, names):
        for lvl, var in zip(scanned, names):
            sizes.setdefault(var, shape[levels[lvl].dim])

    leaf_for_arg: dict[int, object] = {}
    for i, value in enumerate(ins):
        const = _float_const(value)
        if const is not None:
            leaf_for_arg[i] = Const(const)
            continue
        if not isinstance(value.type, mlir.RankedTensorType):
            raise LoweringError(loc, f"scalar input #{i} of linalg.generic is not a constant")
        if value not in arg_index:
            producer = defining_op(value)
            raise LoweringError(loc, f"input #{i} is produced inside the kernel by "
                                     f"'{producer.name if producer else '?'}'; fusing several "
                                     "linalg ops into one kernel is not supported yet")
        leaf_for_arg[i] = (arg_index[value], maps[i], value.type)

    def use_of(i):
        operand, amap, vtype = leaf_for_arg[i]
        shape, levels, scanned, names = _access_vars(amap, vtype, iter_names, loc, f"input #{i}")
        note_sizes(shape, levels, scanned, names)
        use = Use(len(uses), operand, scanned, names)
        uses.append(use)
        return use

    out_shape, out_levels, out_scanned, out_names = _access_vars(
        maps[len(ins)], result_type, iter_names, loc, "result")
    if len(out_scanned) != len(out_levels):
        raise LoweringError(loc, "results with broadcast levels are not supported")
    note_sizes(out_shape, out_levels, out_scanned, out_names)
    out_arg = args[len(ins)]
    values: dict = {}

    def expr_of(value):
        if value in values:
            return values[value]
        for i, arg in enumerate(args[: len(ins)]):
            if value == arg:
                leaf = leaf_for_arg[i]
                # One body value is one use: all its occurrences share its streams.
                values[value] = leaf if isinstance(leaf, Const) else use_of(i)
                return values[value]
        if value == out_arg:
            return OUT
        const = _float_const(value)
        if const is not None:
            return Const(const)
        raise LoweringError(loc, "linalg.generic body reads a value defined outside it that is "
                                 "not a constant")

    for body_op in body_block.operations:
        body_op = op_of(body_op)
        name = body_op.name
        operands = list(body_op.operands)
        if name == "linalg.yield":
            result = expr_of(operands[0])
            break
        if name == "arith.constant":
            values[body_op.results[0]] = Const(_float_const(body_op.results[0]))
        elif name in ARITH_BINARY:
            values[body_op.results[0]] = Op(ARITH_BINARY[name], (expr_of(operands[0]), expr_of(operands[1])))
        elif name in UNARY_OPS:
            values[body_op.results[0]] = Op(UNARY_OPS[name], (expr_of(operands[0]),))
        elif name == "arith.cmpf":
            values[body_op.results[0]] = _Cmp(_predicate(body_op.attributes["predicate"]),
                                              expr_of(operands[0]), expr_of(operands[1]))
        elif name == "arith.select":
            values[body_op.results[0]] = _select(body_op, *[expr_of(v) for v in operands])
        else:
            raise LoweringError(body_op.location, f"unsupported op '{name}' in linalg.generic body")

    reduce_vars = tuple(n for n, t in zip(iter_names, iter_types) if "reduction" in t)
    reduce_kind, init = None, None
    body = result
    if reduce_vars:
        body, reduce_kind = _split_reduction(result, loc)
        init = _init_value(outs[0], loc)
        if reduce_kind == "max" and init is not None and init == -math.inf:
            init = None
        if reduce_kind == "sum" and init == 0.0:
            init = None
    elif _mentions(result, OUT):
        raise LoweringError(loc, "a parallel linalg.generic that reads its output is not supported")
    for var in iter_names:
        if var not in sizes:
            raise LoweringError(loc, f"cannot infer the extent of loop {var}")
    ordered = {v: sizes[v] for v in iter_names}
    return Einsum(body, uses, tuple(out_names), reduce_vars, reduce_kind, init, ordered,
                  result_type, loc)


class _Out:
    def __str__(self):
        return "out"


OUT = _Out()


@dataclass(frozen=True)
class _Cmp:
    predicate: int
    lhs: object
    rhs: object


# arith.CmpFPredicate values of the ordered/unordered comparisons.
_GREATER = {2, 3, 9, 10}     # ogt, oge, ugt, uge
_LESS = {4, 5, 11, 12}       # olt, ole, ult, ule


def _predicate(attr) -> int:
    return int(mlir.IntegerAttr(attr).value)


def _select(op, cond, a, b):
    """``select(x > c, x, c)`` is max(x, c); other selects are not supported."""
    if isinstance(cond, _Cmp) and cond.lhs == a and cond.rhs == b:
        if cond.predicate in _GREATER:
            return Op("max", (a, b))
        if cond.predicate in _LESS:
            return Op("min", (a, b))
    raise LoweringError(op.location, "unsupported 'arith.select' in linalg.generic body "
                                     "(only max/min patterns are recognized)")


def _mentions(expr, target) -> bool:
    if expr is target:
        return True
    if isinstance(expr, Op):
        return any(_mentions(a, target) for a in expr.args)
    return False


def _split_reduction(result, loc):
    """``out + e`` -> (e, 'sum'); ``max(out, e)`` -> (e, 'max')."""
    if isinstance(result, Op) and result.kind in ("add", "max") and len(result.args) == 2:
        a, b = result.args
        kind = "sum" if result.kind == "add" else "max"
        if a is OUT and not _mentions(b, OUT):
            return b, kind
        if b is OUT and not _mentions(a, OUT):
            return a, kind
    raise LoweringError(loc, "unsupported reduction: the body must be out + expr or max(out, expr)")

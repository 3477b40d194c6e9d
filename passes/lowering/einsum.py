"""Fused index notation of a kernel: its linalg ops as one expression over global variables.

:func:`extract_kernel` reads the ops of one ``fuse.kernel`` and returns a :class:`KernelExpr`:
for each kernel result, an expression tree whose leaves are *uses* of kernel inputs (each
occurrence of an input is its own use, with its own streams) and whose inner nodes are
arithmetic (:class:`Op`) and reductions (:class:`Reduce`). A producer consumed inside the
kernel is inlined into its consumer: the producer's parallel loops are *unified* with the
consumer's index variables through the consumer's indexing map, and its reduction loops get
fresh variables bound by the :class:`Reduce` node. A producer used twice is inlined twice
(each instance with its own bound variables); the lowering shares the streams the two
instances have in common.

Variables are named ``d<k>``: the root op's loops keep their linalg names ``d0..dn``; bound
variables of inlined producers continue the numbering in the order they are met. A blocked
(BSR) level names its dimension's variable and records its block map (:attr:`Use.blocks`);
:mod:`.blocking` then splits such variables. Anything the lowering cannot express is a
:class:`LoweringError` located at the op that caused it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from fuseflow import mlir
from fuseflow.dialects.types import UnsupportedTypeError, storage_levels
from fuseflow.errors import SUPPORTED_OPS, FuseFlowError
from fuseflow.passes.ir_utils import defining_op, generic_inputs, generic_outputs, is_fill, op_of


class LoweringError(FuseFlowError):
    """An unsupported construct; carries the MLIR location to report it at."""

    def __init__(self, loc, message: str):
        super().__init__(message)
        self.loc = loc


def unsupported(loc, message: str) -> LoweringError:
    """The LoweringError of an unsupported operation: ``message`` and where the supported
    ones are listed."""
    return LoweringError(loc, f"{message}; supported operations: {SUPPORTED_OPS}")


@dataclass(frozen=True)
class Use:
    """One occurrence of a kernel input in the expression."""

    uid: int
    operand: int                    # index of the kernel input (graph block argument)
    levels: tuple[int, ...]         # storage levels that are scanned, outermost first
    vars: tuple[str, ...]           # index variable of each scanned level
    dense: bool = False             # a row-major dense tensor: readable in any level order
    blocks: tuple[tuple[str, int], ...] = ()
    """(kind, block) of each scanned level when some level is blocked: ``div`` scans the block
    index ``var // block``, ``mod`` the offset ``var % block``; :mod:`.blocking` splits the
    variables and leaves no blocked use behind."""
    loc: object = field(default=None, compare=False)
    """Location of the linalg op that reads the input here (the origin of its streams)."""

    def __str__(self):
        if self.blocks:
            signs = {"id": "", "div": "/", "mod": "%"}
            return "T{}[{}]".format(self.operand, ",".join(
                f"{v}{signs[k]}{b if k != 'id' else ''}"
                for v, (k, b) in zip(self.vars, self.blocks)))
        return f"T{self.operand}[{','.join(self.vars)}]"


@dataclass(frozen=True)
class Const:
    """A scalar constant."""

    value: float

    def __str__(self):
        return repr(self.value)


@dataclass(frozen=True)
class Op:
    """An arithmetic node; ``kind`` is a sam.alu op name (binary or unary), or ``mask_fill``
    (``args = (mask, x)``: x where mask is non-zero, else ``fill``)."""

    kind: str
    args: tuple
    fill: float | None = None
    loc: object = field(default=None, compare=False)
    """Location of the linalg op whose body computes this node."""

    def __str__(self):
        extra = f", fill={self.fill}" if self.fill is not None else ""
        return f"{self.kind}({', '.join(str(a) for a in self.args)}{extra})"


@dataclass(frozen=True, eq=False)
class Reduce:
    """``init (+|max) reduce_{vars} body``: a reduction binding ``vars`` (identity equality)."""

    rid: int
    kind: str                        # 'sum' | 'max'
    vars: tuple[str, ...]
    body: object
    init: float | None               # accumulator initial value (None: the kind's identity)
    free: tuple[str, ...]            # variables of the body not bound here, sorted by name
    loc: object = None               # location of the linalg op that reduces

    def __str__(self):
        init = f"{self.init} + " if self.init is not None else ""
        return f"{init}{self.kind}_{{{','.join(self.vars)}}}({self.body})"


BINARY = ("add", "sub", "mul", "div", "max", "min", "gt_select", "lt_select")
UNARY = ("neg", "exp", "log", "rsqrt", "sqrt", "sigmoid", "tanh", "relu")


@dataclass
class Root:
    """One kernel result: ``out[out_vars] = expr`` written in ``result_type``'s format."""

    expr: object
    out_vars: tuple[str, ...]        # variable of each output storage level
    result_type: object
    index: int
    loc: object = field(default=None, compare=False)
    """Location of the linalg op that computes the result."""
    dense: bool = False
    """Writable in any level order: a row-major dense result the lowering may write
    transposed and transpose back on the host (set by :mod:`.plan` for kernels no order
    lowers otherwise)."""

    def __str__(self):
        return f"out{self.index}[{','.join(self.out_vars)}] = {self.expr}"


@dataclass
class KernelExpr:
    """The fused index notation of one kernel: its results over shared variables."""

    roots: list[Root]
    uses: list[Use]
    sizes: dict[str, int] = field(default_factory=dict)
    loc: object = None

    def all_vars(self) -> tuple[str, ...]:
        return tuple(sorted(self.sizes, key=_var_rank))

    def reduces(self) -> list[Reduce]:
        """Every reduction node, outermost first."""
        found: list[Reduce] = []
        for root in self.roots:
            _collect(root.expr, Reduce, found)
        return found

    def __str__(self):
        return "; ".join(str(r) for r in self.roots)

    def with_uses(self, replacement: dict[int, Use]) -> "KernelExpr":
        """This kernel with the uses of the given ``uid`` replaced (e.g. re-bound operands)."""
        rebuild = tree_rebuilder(lambda use: replacement.get(use.uid, use))
        roots = [replace(r, expr=rebuild(r.expr)) for r in self.roots]
        uses = [replacement.get(u.uid, u) for u in self.uses]
        return KernelExpr(roots, uses, dict(self.sizes), self.loc)


def tree_rebuilder(on_use, on_reduce=None):
    """A function rebuilding an expression bottom-up: each use becomes ``on_use(use)``, each
    reduction ``on_reduce(reduction, rebuilt_body)`` (default: the reduction over the rebuilt
    body), each op the op of its rebuilt arguments; constants stay. A node shared by several
    parents (an expression is a DAG) is rebuilt once, so the result shares it too."""
    memo: dict[int, object] = {}

    def rebuild(node):
        if isinstance(node, Use):
            return on_use(node)
        if id(node) in memo:
            return memo[id(node)]
        if isinstance(node, Op):
            new = replace(node, args=tuple(rebuild(a) for a in node.args))
        elif isinstance(node, Reduce):
            body = rebuild(node.body)
            new = replace(node, body=body) if on_reduce is None else on_reduce(node, body)
        else:
            return node
        memo[id(node)] = new
        return new

    return rebuild


def _var_rank(name: str) -> int:
    return int(name[1:])


def _collect(expr, cls, found: list) -> None:
    if isinstance(expr, cls) and expr not in found:
        found.append(expr)
    if isinstance(expr, Op):
        for a in expr.args:
            _collect(a, cls, found)
    elif isinstance(expr, Reduce):
        _collect(expr.body, cls, found)


def expr_vars(expr) -> set[str]:
    """Free variables of ``expr``."""
    if isinstance(expr, Use):
        return set(expr.vars)
    if isinstance(expr, Op):
        return set().union(*(expr_vars(a) for a in expr.args))
    if isinstance(expr, Reduce):
        return set(expr.free)
    return set()


ARITH_BINARY = {
    "arith.addf": "add", "arith.subf": "sub", "arith.mulf": "mul", "arith.divf": "div",
    "arith.maximumf": "max", "arith.maxnumf": "max", "arith.minimumf": "min",
    "arith.minnumf": "min",
}
UNARY_OPS = {"arith.negf": "neg", "math.exp": "exp", "math.log": "log", "math.rsqrt": "rsqrt",
             "math.sqrt": "sqrt", "math.tanh": "tanh"}
IDENTITY_OPS = ("arith.extf", "arith.truncf")
"""Precision casts inside a body: values are simulated in float32 throughout."""
VIEW_OPS = ("tensor.expand_shape", "tensor.collapse_shape")
"""Reshapes the lowering sees through when they only add or drop size-1 dimensions."""


def _float_const(value) -> float | None:
    producer = defining_op(value)
    if producer is None or producer.name != "arith.constant":
        return None
    attr = producer.attributes["value"]
    if isinstance(attr, mlir.ir.DenseElementsAttr) and attr.is_splat:
        attr = attr.get_splat_value()       # a splat tensor constant (a 0-d -inf, ...)
    if isinstance(attr, mlir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, mlir.BoolAttr):
        return 1.0 if attr.value else 0.0
    if isinstance(attr, mlir.IntegerAttr):
        if _is_i1(attr.type):
            return 1.0 if attr.value else 0.0       # i1 true prints as -1
        return float(attr.value)
    return None


def _is_i1(t) -> bool:
    return isinstance(t, mlir.IntegerType) and mlir.IntegerType(t).width == 1


def _is_boolean(value) -> bool:
    """An ``i1`` value, or one zero- or sign-extended from ``i1``: a 0/1 mask value."""
    if _is_i1(value.type):
        return True
    producer = defining_op(value)
    return producer is not None and producer.name in ("arith.extui", "arith.extsi") and \
        _is_boolean(list(producer.operands)[0])


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
    raise unsupported(producer.location,
                      f"unsupported initialization of a kernel output by '{producer.name}'")


def _map_results(map_attr) -> list[str]:
    return [str(r).strip() for r in mlir.ir.AffineMapAttr(map_attr).value.results]


def _loop_extents(maps: list, operands: list) -> dict[int, int]:
    """Loop dimension -> extent, from the shapes of the operands (inputs and outputs) of a
    ``linalg.generic`` that index it directly (as MLIR's static loop ranges are inferred)."""
    extents: dict[int, int] = {}
    for map_attr, value in zip(maps, operands):
        if not isinstance(value.type, mlir.RankedTensorType):
            continue
        for text, extent in zip(_map_results(map_attr), value.type.shape):
            dim = _dim_of(text)
            if dim is not None:
                extents.setdefault(dim, extent)
    return extents


def _dim_of(text: str) -> int | None:
    return int(text[1:]) if text.startswith("d") and text[1:].isdigit() else None


def _unit_reassociation(op) -> list[list[int]] | None:
    """Reassociation groups of an expand/collapse_shape, or None if not just size-1 dims."""
    groups = [[int(mlir.IntegerAttr(i).value) for i in mlir.ir.ArrayAttr(g)]
              for g in mlir.ir.ArrayAttr(op.attributes["reassociation"])]
    big = (op.results[0].type if op.name == "tensor.expand_shape" else list(op.operands)[0].type)
    shape = mlir.RankedTensorType(big).shape
    for g in groups:
        if sum(1 for d in g if shape[d] != 1) > 1:
            return None
    return groups


class _Extractor:
    """Inlines the linalg ops of one kernel into expression trees over global variables."""

    def __init__(self, arg_index: dict, loc):
        self.arg_index = arg_index
        self.loc = loc
        self.uses: list[Use] = []
        self.sizes: dict[str, int] = {}
        self.next_var = 0
        self.next_rid = 0

    def fresh(self) -> str:
        name = f"d{self.next_var}"
        self.next_var += 1
        return name

    def note(self, var: str, extent: int) -> None:
        self.sizes.setdefault(var, extent)

    # Tensors ---------------------------------------------------------------------------
    def tensor(self, value, dim_vars: list, loc):
        """Expression of ``value[dim_vars]``; None entries are size-1 broadcast dimensions."""
        shape = mlir.RankedTensorType(value.type).shape
        for var, extent in zip(dim_vars, shape):
            if var is not None:
                self.note(var, extent)
        if value in self.arg_index:
            return self._use(value, dim_vars, loc)
        producer = defining_op(value)
        if producer is None:
            raise LoweringError(loc, "operand is a block argument that is not a kernel input")
        if producer.name == "tensor.cast":
            return self.tensor(list(producer.operands)[0], dim_vars, loc)
        if producer.name in VIEW_OPS:
            return self._view(producer, dim_vars, loc)
        if producer.name == "linalg.generic":
            index = list(producer.results).index(value)
            return self._generic(producer, index, dim_vars)
        if producer.name.startswith("linalg."):
            raise unsupported(producer.location, f"unsupported op '{producer.name}': only "
                                "linalg.generic can be lowered (run fuseflow-normalize first)")
        raise unsupported(producer.location, f"unsupported op '{producer.name}' inside a kernel")

    def _view(self, op, dim_vars, loc):
        groups = _unit_reassociation(op)
        if groups is None:
            raise unsupported(op.location, f"'{op.name}' that merges or splits dimensions larger "
                                             "than 1 is not supported")
        source = list(op.operands)[0]
        src_shape = mlir.RankedTensorType(source.type).shape
        res_shape = mlir.RankedTensorType(op.results[0].type).shape
        if op.name == "tensor.expand_shape":      # result dims grouped per source dim
            src_vars = []
            for g in groups:
                big = [d for d in g if res_shape[d] != 1]
                src_vars.append(dim_vars[big[0]] if big else None)
        else:                                      # source dims grouped per result dim
            src_vars = [None] * len(src_shape)
            for r, g in enumerate(groups):
                big = [d for d in g if src_shape[d] != 1]
                if big:
                    src_vars[big[0]] = dim_vars[r]
        return self.tensor(source, src_vars, loc)

    def _use(self, value, dim_vars, loc):
        try:
            shape, levels = storage_levels(value.type)
        except UnsupportedTypeError as err:
            raise LoweringError(loc, str(err)) from None
        scanned, names, blocks = [], [], []
        for index, level in enumerate(levels):
            var = dim_vars[level.dim]
            if var is None:
                if shape[level.dim] == 1 and level.format == "dense":
                    continue  # a broadcast size-1 dense level: its child reference is its
                    # parent's
                raise LoweringError(loc, f"a size-1 broadcast of the {level.format} level {index} "
                                         f"of '{value.type}' is not supported (its fibers would "
                                         "be read without a loop); pass this operand dense")
            scanned.append(index)
            names.append(var)
            blocks.append((level.kind, level.block))
        if len(set(zip(names, blocks))) != len(names):
            raise LoweringError(loc, f"diagonal access {names} of '{value.type}' is not supported")
        dense = all(lv.format == "dense" and lv.kind == "id" for lv in levels) and \
            [lv.dim for lv in levels] == list(range(len(levels)))
        blocked = tuple(blocks) if any(kind != "id" for kind, _ in blocks) else ()
        use = Use(len(self.uses), self.arg_index[value], tuple(scanned), tuple(names), dense,
                  blocked, loc)
        self.uses.append(use)
        return use

    # Generic ops -----------------------------------------------------------------------
    def loop_vars(self, generic, result: int, dim_vars: list) -> list[str | None]:
        """Variables of ``generic``'s loops: output dims unified with ``dim_vars`` (None where
        the consumer broadcasts a size-1 dim), the other loops fresh."""
        loc = generic.location
        n_loops = len(mlir.ir.ArrayAttr(generic.attributes["iterator_types"]))
        maps = list(mlir.ir.ArrayAttr(generic.attributes["indexing_maps"]))
        out_map = _map_results(maps[len(generic_inputs(generic)) + result])
        loops: list[str | None] = [None] * n_loops
        broadcast: set[int] = set()
        for pos, text in enumerate(out_map):
            dim = _dim_of(text)
            if dim is None:
                if text != "0":
                    raise LoweringError(loc, f"output indexing expression '{text}' is not "
                                             "supported")
                continue
            # A size-1 output dim the consumer broadcasts keeps no variable: its loop has one
            # iteration at coordinate 0, like a broadcast size-1 level of an input.
            loops[dim] = dim_vars[pos] if pos < len(dim_vars) else None
            broadcast.add(dim)
        return [v if v is not None or d in broadcast else self.fresh()
                for d, v in enumerate(loops)]

    def _generic(self, generic, result: int, dim_vars: list):
        iter_types = [str(a) for a in mlir.ir.ArrayAttr(generic.attributes["iterator_types"])]
        loops = self.loop_vars(generic, result, dim_vars)
        return self.body(generic, result, loops, iter_types)

    def body(self, generic, result: int, loops: list[str], iter_types: list[str]):
        """The expression of ``generic``'s result ``result`` with its loops named ``loops``."""
        loc = generic.location
        maps = list(mlir.ir.ArrayAttr(generic.attributes["indexing_maps"]))
        ins, outs = generic_inputs(generic), generic_outputs(generic)
        block = generic.regions[0].blocks[0]
        args = list(block.arguments)
        leaves: dict = {}
        ops_by_result = {}
        for body_op in block.operations:
            body_op = op_of(body_op)
            for r in body_op.results:
                ops_by_result[r] = body_op
        terminator = op_of(list(block.operations)[-1])

        def operand_dims(i):
            out = []
            for text in _map_results(maps[i]):
                dim = _dim_of(text)
                if dim is None and text != "0":
                    raise LoweringError(loc, f"indexing expression '{text}' of operand #{i} is "
                                             "not supported")
                out.append(None if dim is None else loops[dim])
            return out

        def leaf(i):
            if i not in leaves:
                value = ins[i]
                const = _float_const(value)
                if const is not None:
                    leaves[i] = Const(const)
                elif not isinstance(value.type, mlir.RankedTensorType):
                    raise LoweringError(loc, f"scalar input #{i} of linalg.generic is not a "
                                             "constant")
                else:
                    leaves[i] = self.tensor(value, operand_dims(i), loc)
            return leaves[i]

        memo: dict = {}
        out_arg = args[len(ins) + result]

        def expr_of(value):
            if value in memo:
                return memo[value]
            for i, arg in enumerate(args[: len(ins)]):
                if value == arg:
                    return leaf(i)
            if value == out_arg:
                return OUT
            if value in args:
                raise LoweringError(loc, "a body that reads another output of its op is not "
                                         "supported")
            const = _float_const(value)
            if const is not None:
                return Const(const)
            body_op = ops_by_result.get(value)
            if body_op is None:
                raise LoweringError(loc, "linalg.generic body reads a value defined outside it "
                                         "that is not a constant")
            memo[value] = _body_expr(body_op, expr_of, loc)
            return memo[value]

        expr = expr_of(list(terminator.operands)[result])
        bound = [v for v, t in zip(loops, iter_types) if "reduction" in t]
        if not bound:
            if _mentions(expr, OUT):
                raise LoweringError(loc, "a parallel linalg.generic that reads its output is not "
                                         "supported")
            return expr
        body, kind = _split_reduction(expr, loc)
        init = _init_value(outs[result], loc)
        if kind == "max" and init is not None and init == -math.inf:
            init = None
        if kind == "sum" and init == 0.0:
            init = None
        extents = _loop_extents(maps, [*ins, *outs])
        for d, var in enumerate(loops):
            if var is not None and var not in self.sizes:
                if d not in extents:
                    raise LoweringError(loc, f"cannot infer the extent of loop {var}")
                self.note(var, extents[d])   # read by no tensor: a splat constant's dimension
        # A reduction over a size-1 dimension no operand indexes (a keepdim result reduced
        # again) has one term: it binds no variable.
        used = expr_vars(body)
        bound = [v for v in bound if v in used or self.sizes[v] != 1]
        if not bound:
            if init is None:
                return body
            return Op("add" if kind == "sum" else "max", (Const(init), body), loc=loc)
        free = tuple(sorted(used - set(bound), key=_var_rank))
        self.next_rid += 1
        return Reduce(self.next_rid - 1, kind, tuple(bound), body, init, free, loc)


def _body_expr(body_op, expr_of, loc):
    """The expression of one op of a generic body (``loc``: the generic's location)."""
    name = body_op.name
    operands = list(body_op.operands)
    if name != "arith.select":
        inner = expr_of

        def expr_of(value):                 # a comparison is only usable as a select condition
            expr = inner(value)
            if isinstance(expr, _Cmp):
                raise unsupported(body_op.location, f"'{name}' of a comparison result is not "
                                                      "supported (only arith.select reads one)")
            return expr
    if name in ARITH_BINARY:
        return Op(ARITH_BINARY[name], (expr_of(operands[0]), expr_of(operands[1])), loc=loc)
    if name in UNARY_OPS:
        return Op(UNARY_OPS[name], (expr_of(operands[0]),), loc=loc)
    if name in IDENTITY_OPS:
        return expr_of(operands[0])
    if name in POWER_OPS:
        return _power(body_op, expr_of(operands[0]), _float_const(operands[1]), loc)
    if name in INTEGER_OPS or name.startswith("arith.") and name.endswith("i"):
        return _boolean_expr(body_op, [expr_of(v) for v in operands], loc)
    if name == "arith.cmpf":
        return _Cmp(_predicate(body_op.attributes["predicate"]), expr_of(operands[0]),
                    expr_of(operands[1]))
    if name == "arith.select":
        written = defining_op(operands[0]) is None      # a comparison another op computed
        return _select(body_op, loc, *[expr_of(v) for v in operands], written=written)
    raise unsupported(body_op.location, f"unsupported op '{name}' in linalg.generic body")


def extract_kernel(results: list, arg_index: dict, loc) -> KernelExpr:
    """The fused index notation of a kernel yielding ``results`` (values of its body)."""
    ex = _Extractor(arg_index, loc)
    roots = []
    for index, value in enumerate(results):
        result_type = value.type
        producer = defining_op(value)
        if producer is not None and producer.name == "tensor.cast":
            value = list(producer.operands)[0]
            producer = defining_op(value)
        if producer is None or producer.name != "linalg.generic":
            what = "a kernel input" if producer is None else f"'{producer.name}'"
            raise LoweringError(loc, f"kernel result #{index} is {what}, not computed by a "
                                     "linalg.generic")
        n_loops = len(mlir.ir.ArrayAttr(producer.attributes["iterator_types"]))
        if index == 0:
            ex.next_var = n_loops          # the root op's loops keep their names d0..dn
            loops = [f"d{k}" for k in range(n_loops)]
            iter_types = [str(a) for a in mlir.ir.ArrayAttr(producer.attributes["iterator_types"])]
            dims = [d if d is not None else ex.fresh()     # a size-1 dimension of the result
                    for d in _output_dims(producer, list(producer.results).index(value), loops)]
            expr = ex.body(producer, list(producer.results).index(value), loops, iter_types)
        else:
            rank = mlir.RankedTensorType(value.type).rank
            dims = [ex.fresh() for _ in range(rank)]
            expr = ex.tensor(value, dims, producer.location)
        shape = mlir.RankedTensorType(result_type).shape
        for var, extent in zip(dims, shape):
            if var is not None:
                ex.note(var, extent)
        if isinstance(expr, _Cmp):
            raise LoweringError(producer.location, "a kernel result that is a comparison (i1) is "
                                "not supported; fuse it into the select that reads it")
        out_vars = _output_vars(result_type, dims, producer.location)
        roots.append(Root(expr, out_vars, result_type, index, producer.location))
    sizes = dict(sorted(ex.sizes.items(), key=lambda kv: _var_rank(kv[0])))
    kernel = KernelExpr(roots, ex.uses, sizes, loc)
    return _without_dead_uses(kernel)


def _without_dead_uses(kernel: KernelExpr) -> KernelExpr:
    """``kernel`` without the uses no result reads, the others renumbered in order (a uid is a
    use's index in ``kernel.uses``), and without the variables only dead uses had. Dead uses
    are left by folds that drop operands after extracting them (a comparison's own copies of
    fused producers when its select becomes a max): no order visits their variables."""
    live: list[Use] = []
    for root in kernel.roots:
        _collect(root.expr, Use, live)
    alive = {u.uid for u in live}
    if len(alive) == len(kernel.uses):
        return kernel
    kept = [u for u in kernel.uses if u.uid in alive]
    replacement = {u.uid: replace(u, uid=index) for index, u in enumerate(kept)}
    pruned = kernel.with_uses(replacement)
    pruned.uses = [replacement[u.uid] for u in kept]
    used = set().union(*(r.out_vars for r in pruned.roots),
                       *(expr_vars(r.expr) for r in pruned.roots),
                       *(u.vars for u in pruned.uses), *(red.vars for red in pruned.reduces()))
    pruned.sizes = {v: n for v, n in pruned.sizes.items() if v in used}
    return pruned


def _output_dims(generic, result: int, loops: list[str]) -> list:
    maps = list(mlir.ir.ArrayAttr(generic.attributes["indexing_maps"]))
    texts = _map_results(maps[len(generic_inputs(generic)) + result])
    return [loops[_dim_of(t)] if _dim_of(t) is not None else None for t in texts]


def is_row_major(tensor_type) -> bool:
    """A dense tensor stored in row-major order (every level dense, in dimension order)."""
    try:
        _, levels = storage_levels(tensor_type)
    except UnsupportedTypeError:
        return False
    return all(lv.format == "dense" and lv.kind == "id" for lv in levels) and \
        [lv.dim for lv in levels] == list(range(len(levels)))


def _output_vars(result_type, dims, loc) -> tuple[str, ...]:
    try:
        shape, levels = storage_levels(result_type)
    except UnsupportedTypeError as err:
        raise LoweringError(loc, f"result: {err}") from None
    names = []
    for level in levels:            # a blocked level names its dimension's variable (see Use)
        var = dims[level.dim]
        if var is None:
            raise LoweringError(loc, "results with broadcast levels are not supported")
        names.append(var)
    return tuple(names)


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
_EQUAL = {1, 8}              # oeq, ueq
_NOT_EQUAL = {6, 13}         # one, une
_GREATER = {2, 3, 9, 10}     # ogt, oge, ugt, uge
_LESS = {4, 5, 11, 12}       # olt, ole, ult, ule
_ORDERED = {1, 2, 3, 4, 5, 6}   # oeq, ogt, oge, olt, ole, one: false where either is NaN


def _predicate(attr) -> int:
    return int(mlir.IntegerAttr(attr).value)


POWER_OPS = ("math.fpowi", "math.powf")
"""``x ** e``: lowered for the constant exponents of :data:`POWER_EXPONENTS_DOC`."""
POWER_EXPONENTS_DOC = (("`math.fpowi`, `math.powf` by 2, 1, 0.5, -0.5, -1",
                        "`x * x`, `x`, ALU `sqrt`, ALU `rsqrt`, `1 / x`"),)


def _power(op, x, exponent, loc):
    """``x ** exponent`` for the exponents a body may raise to (:data:`POWER_EXPONENTS_DOC`)."""
    if exponent == 2.0:
        return Op("mul", (x, x), loc=loc)
    if exponent == 1.0:
        return x
    if exponent in (0.5, -0.5):
        return Op("sqrt" if exponent > 0 else "rsqrt", (x,), loc=loc)
    if exponent == -1.0:
        return Op("div", (Const(1.0), x), loc=loc)
    raise unsupported(op.location, f"'{op.name}' with exponent {exponent} is not supported "
                                   "(exponents 2, 1, 0.5, -0.5 and -1 are)")


BOOLEAN_OPS = ("arith.xori", "arith.andi", "arith.ori", "arith.extui", "arith.extsi",
               "arith.cmpi", "arith.uitofp", "arith.sitofp")
"""Integer ops a body may apply to boolean (``i1``) masks, whose values are 0.0 and 1.0 in
the dataflow graph: not (``xori`` with true, ``cmpi eq`` with false), and (min), or (max),
xor (max - min), extensions and conversions to float (the value itself)."""
INTEGER_OPS = BOOLEAN_OPS + ("arith.fptosi", "arith.fptoui", "arith.index_cast")
"""Ops on integers (with every ``arith.*i`` op): only :data:`BOOLEAN_OPS` on masks lower."""

# arith.CmpIPredicate values.
_CMPI_EQ, _CMPI_NE = 0, 1


def _not(x, loc):
    """``1 - x``, the negation of a 0/1 mask (a double negation is the mask itself)."""
    if isinstance(x, Op) and x.kind == "sub" and x.args[0] == Const(1.0):
        return x.args[1]
    return Op("sub", (Const(1.0), x), loc=loc)


def _boolean_expr(op, args: list, loc):
    """The 0/1 expression of a boolean op (:data:`BOOLEAN_OPS`) of a body; any other integer
    op, or one of these on integers that are not masks, is a LoweringError."""
    name = op.name
    operands = list(op.operands)
    if name == "arith.fptoui" and _is_i1(op.results[0].type):
        return args[0]          # a sparse boolean input read back as a mask (the frontend's)
    if name not in BOOLEAN_OPS or not all(_is_boolean(v) or _float_const(v) in (0.0, 1.0)
                                          for v in operands):
        raise unsupported(op.location, f"integer arithmetic ('{name}') is not supported: "
                                         "FuseFlow computes in float32, and boolean masks are "
                                         "the only non-float values it reads; convert integer "
                                         "tensors with .float()")
    if name in ("arith.extui", "arith.extsi", "arith.uitofp", "arith.sitofp"):
        return args[0]
    consts = [a.value if isinstance(a, Const) else None for a in args]
    if name == "arith.cmpi":
        predicate = _predicate(op.attributes["predicate"])
        if predicate not in (_CMPI_EQ, _CMPI_NE) or consts.count(None) != 1:
            raise unsupported(op.location, "only comparisons of a boolean mask with true or "
                                             "false ('==', '!=') are supported")
        mask = args[consts.index(None)]
        keep = (predicate == _CMPI_EQ) == (max(c for c in consts if c is not None) == 1.0)
        return mask if keep else _not(mask, loc)
    if None not in consts:
        raise LoweringError(op.location, f"'{name}' of two constants is not supported")
    if name == "arith.xori":
        if 1.0 in consts:
            return _not(args[1 - consts.index(1.0)], loc)
        if 0.0 in consts:
            return args[1 - consts.index(0.0)]
        return Op("sub", (Op("max", tuple(args), loc=loc), Op("min", tuple(args), loc=loc)),
                  loc=loc)
    return Op("min" if name == "arith.andi" else "max", tuple(args), loc=loc)


def _select(op, loc, cond, a, b, written: bool = False):
    """``select(x > y, x, y)`` is max(x, y), NaN where either is NaN as PyTorch's maximum,
    relu and clamp compute (torch-mlir lowers them to a select of a comparison in the same
    body, ordered or not); a select ``written`` by the user, reading a comparison another op
    computed (``torch.where(x > y, x, y)``), selects as written: with an ordered comparison
    it is gt_select(x, y), y where either is NaN. ``<`` and swapped operands likewise (min,
    lt_select). ``select(m == 0, c, x)`` is mask_fill(m, x, c); a boolean mask ``m`` selects by
    ``mask_fill``: ``select(m, x, c)`` is mask_fill(m, x, c), ``select(m, c, x)``
    mask_fill(1 - m, x, c)."""
    if not isinstance(cond, _Cmp):
        if isinstance(b, Const):
            return Op("mask_fill", (cond, a), fill=b.value, loc=loc)
        if isinstance(a, Const):
            return Op("mask_fill", (_not(cond, loc), b), fill=a.value, loc=loc)
        raise unsupported(op.location, "a select between two tensors by a mask "
                                         "(torch.where(m, x, y)) is not supported; one side "
                                         "must be a scalar, as in torch.where(m, x, 0.0)")
    ordered = written and cond.predicate in _ORDERED
    if _same_value(cond.lhs, a) and _same_value(cond.rhs, b):
        if cond.predicate in _GREATER:
            return Op("gt_select" if ordered else "max", (a, b), loc=loc)
        if cond.predicate in _LESS:
            return Op("lt_select" if ordered else "min", (a, b), loc=loc)
    if _same_value(cond.lhs, b) and _same_value(cond.rhs, a):   # select(x < c, c, x): clamp
        if cond.predicate in _GREATER:
            return Op("lt_select" if ordered else "min", (a, b), loc=loc)
        if cond.predicate in _LESS:
            return Op("gt_select" if ordered else "max", (a, b), loc=loc)
    zero_rhs = isinstance(cond.rhs, Const) and cond.rhs.value == 0.0
    if zero_rhs and cond.predicate in _EQUAL and isinstance(a, Const):
        return Op("mask_fill", (cond.lhs, b), fill=a.value, loc=loc)
    if zero_rhs and cond.predicate in _NOT_EQUAL and isinstance(b, Const):
        return Op("mask_fill", (cond.lhs, a), fill=b.value, loc=loc)
    raise unsupported(op.location, "unsupported 'arith.select' in linalg.generic body "
                                     "(recognized: max/min and masked fill patterns)")


def _same_value(x, y) -> bool:
    """Equal expressions; two uses of one input at the same variables (each inlined
    producer reads its inputs through uses of its own), and ops of equal operands, count as
    equal, as do two copies of one reduction (each inlined consumer of a reduction has its own,
    binding variables of its own: equal up to renaming them)."""
    return _equal_up_to(x, y, {})


def _equal_up_to(x, y, renamed: dict) -> bool:
    """:func:`_same_value` with ``y``'s bound variables ``renamed`` to ``x``'s."""
    if isinstance(x, Use) and isinstance(y, Use):
        return (x.operand, x.levels, x.vars, x.blocks) == \
            (y.operand, y.levels, tuple(renamed.get(v, v) for v in y.vars), y.blocks)
    if isinstance(x, Op) and isinstance(y, Op):
        return (x.kind, x.fill, len(x.args)) == (y.kind, y.fill, len(y.args)) and \
            all(_equal_up_to(a, b, renamed) for a, b in zip(x.args, y.args))
    if isinstance(x, Reduce) and isinstance(y, Reduce):
        if x is y:
            return True
        if (x.kind, x.init, len(x.vars)) != (y.kind, y.init, len(y.vars)) or \
                set(x.free) != {renamed.get(v, v) for v in y.free}:
            return False
        return _equal_up_to(x.body, y.body, {**renamed, **dict(zip(y.vars, x.vars))})
    return x == y


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
    raise unsupported(loc, "unsupported reduction: the body must be out + expr or max(out, "
                           "expr)")

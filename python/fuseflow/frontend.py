"""The PyTorch frontend: imports a module with torch-mlir, once, and declares input formats.

:func:`import_model` exports the model with ``torch.export`` and imports it into the caller's
MLIR context (:func:`fuseflow.mlir.import_program`); every linalg op of the result names the
FX node it came from and that node's module in :data:`NODE_ATTR` and :data:`MODULE_ATTR`,
read from its location (:func:`location_node`). Fusion groups become :data:`GROUP_ATTR`
attributes from a node -> kernel map (:func:`tag_groups`). See ``docs/frontend.md``.

Parameters and buffers become function inputs (after the forward arguments), so weights are
bound at simulation time like any tensor and can be declared sparse without changing the
model. Formats are declared per input name: a forward argument's name or a parameter's
qualified name (``encoder.weight``).

A ``torch.sparse_bsr`` example input is traced as its dense equivalent and declared
``bsr:<bh>x<bw>`` with its block shape (:attr:`ImportedModel.formats`): PyTorch's exporter
implements few ops on BSR tensors (add, mul and sum fail) and its graph printer, which runs
whenever a log handler listens to ``torch.__trace`` (pytest attaches one), fails on them.
CSR, CSC and COO inputs are traced sparse first; when torch.export or torch-mlir cannot trace
them (``torch.mv``, ``A * 2.0``, ``torch.sparse.mm``, ``A.t() @ B``, ``x - x`` fail on sparse
operands), they are traced dense too and declared with their layout (``csr``, ``csc``,
``coo``, ``sparse_vector``), the model unchanged and the user's tensors still the simulated
inputs; a debug log line names each such input. The errors PyTorch's fake tensors log while
the sparse trace fails are not shown (the dense retry's are).
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass, field

import torch

from fuseflow import mlir, tracing
from fuseflow.errors import SUPPORTED_OPS, FuseFlowError

log = logging.getLogger(__name__)

FORMAT_ENCODINGS = {
    "dense": None,
    "csr": "map = (d0, d1) -> (d0 : dense, d1 : compressed)",
    "csc": "map = (d0, d1) -> (d1 : dense, d0 : compressed)",
    "dcsr": "map = (d0, d1) -> (d0 : compressed, d1 : compressed)",
    "coo": "map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)",
    "sparse_vector": "map = (d0) -> (d0 : compressed)",
}


class FrontendError(FuseFlowError, ValueError):
    """A model or declaration the frontend cannot import; the message names the problem."""


@dataclass
class ImportedModel:
    """A model imported to linalg once: the module, the input names in function-argument
    order, the parameter values bound after the forward arguments, the formats the example
    inputs imply, and the exported program the module came from."""

    module: "mlir.Module"
    """linalg-on-tensors in the importing context; linalg ops carry :data:`NODE_ATTR` and
    :data:`MODULE_ATTR`."""
    input_names: list[str]
    param_values: list[torch.Tensor]
    formats: dict[str, str] = field(default_factory=dict)
    """Formats implied by the example inputs (BSR inputs are traced dense; see the module)."""
    program: "torch.export.ExportedProgram | None" = None
    """The exported (wrapped, pre-decomposition) program: what fusion groups name."""


class _Functional(torch.nn.Module):
    """Calls ``model`` with its parameters and buffers passed as explicit inputs; the model
    is its submodule :data:`fuseflow.tracing.MODEL_ATTR` (``model``)."""

    def __init__(self, model: torch.nn.Module, names: list[str]):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *args):
        n = len(args) - len(self.names)
        state = dict(zip(self.names, args[n:]))
        return torch.func.functional_call(self.model, state, tuple(args[:n]))


def forward_arg_names(model: torch.nn.Module, count: int) -> list[str]:
    """The names of the first ``count`` parameters of ``model.forward``."""
    params = [p for p in inspect.signature(model.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in params[:count]]
    return names + [f"arg{i}" for i in range(len(names), count)]


NODE_ATTR = "fuseflow.node"
"""String attribute of an imported linalg op: the FX node of the exported program it came
from (its node name, before torch-mlir's decompositions)."""
MODULE_ATTR = "fuseflow.module"
"""String attribute of an imported linalg op: the qualified name of the submodule whose
forward ran its node (``""`` for the model's own forward)."""
GROUP_ATTR = "fuseflow.group"
"""String attribute naming the kernel of a linalg op (``fuseflow-partition{mode=groups}``)."""


def import_model(model: torch.nn.Module, example_inputs, context: "mlir.Context") -> ImportedModel:
    """Exports ``model(*example_inputs)`` with parameters lifted to inputs and imports it into
    ``context`` once, each linalg op annotated with its FX node and module (see
    :func:`annotate_nodes`)."""
    state = dict(model.named_parameters())
    state.update(dict(model.named_buffers()))
    names = list(state)
    values = [state[n].detach() for n in names]
    wrapped = _Functional(model, names).eval()
    args = tuple(example_inputs) + tuple(values)
    arg_names = forward_arg_names(model, len(example_inputs)) + names
    for name, t in zip(arg_names, args):
        check_dtype(t, name)
    traced_dense = {i: bsr_format(t) for i, t in enumerate(args)
                    if isinstance(t, torch.Tensor) and t.layout == torch.sparse_bsr}
    try:
        with _FakeTensorMetaErrorsQuiet(any(i not in traced_dense and _is_sparse(t)
                                            for i, t in enumerate(args))):
            module, program = _import(wrapped, _densified(args, traced_dense), context)
    except Exception as err:  # noqa: BLE001 - PyTorch's and torch-mlir's sparse support
        sparse = {i: sparse_format(t, arg_names[i]) for i, t in enumerate(args)
                  if i not in traced_dense and _is_sparse(t)}
        if not sparse:
            raise
        for i, fmt in sparse.items():
            log.debug("input '%s' (%s) cannot be traced sparse (%s): traced dense and declared "
                      "'%s'", arg_names[i], args[i].layout, _first_line(err), fmt)
        traced_dense.update(sparse)
        module, program = _import(wrapped, _densified(args, traced_dense), context)
    return ImportedModel(module, arg_names, values,
                         {arg_names[i]: f for i, f in traced_dense.items()}, program)


class _FakeTensorMetaErrorsQuiet(logging.Filter):
    """While active, drops the ERROR records (with a traceback) PyTorch's fake tensors log
    when an op's meta kernel fails on a sparse layout (``failed while attempting to run meta
    for aten.mv.default``): the first, sparse trace of torch.sparse inputs expects them, and
    the dense retry traces without this filter, so its failures are logged as usual."""

    LOGGER = "torch._subclasses.fake_tensor"

    def __init__(self, active: bool):
        super().__init__()
        self.active = active

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("failed while attempting to run meta")

    def __enter__(self):
        if self.active:
            logging.getLogger(self.LOGGER).addFilter(self)
        return self

    def __exit__(self, *exc):
        logging.getLogger(self.LOGGER).removeFilter(self)


def check_dtype(t, name: str) -> None:
    """A FrontendError for an input (or parameter) FuseFlow cannot compute with: integer
    tensors (it computes in float32; bool tensors are masks)."""
    if isinstance(t, torch.Tensor) and not (t.dtype.is_floating_point or t.dtype == torch.bool):
        raise FrontendError(f"input '{name}' has dtype {t.dtype}: FuseFlow computes in float32 "
                            "and reads bool tensors as masks; pass it as a float tensor "
                            f"(.float()); supported operations: {SUPPORTED_OPS}")


def _import(wrapped, args, context):
    """Exports ``wrapped(*args)`` and imports it into ``context`` (see :func:`import_model`);
    ops torch-mlir cannot lower, or lowers outside linalg, are a FrontendError naming the
    PyTorch op and its source line (:func:`check_imported_ops`)."""
    program = torch.export.export(wrapped, args)
    try:
        module = mlir.import_program(program, context, node_name=tracing.origin_namer(program))
    except mlir.MLIRError as err:
        raise _import_error(err, program) from None
    annotate_nodes(module, tracing.node_modules(program, tracing.model_relative))
    check_imported_ops(module, program)
    return module, program


IMPORTED_DIALECTS = ("func", "arith", "math", "linalg", "tensor", "sparse_tensor",
                     "bufferization")
"""Dialects of the ops an imported model may hold; torch-mlir lowers some PyTorch ops
(``cumsum``, ``sort``, ``topk``, ...) to others (``tm_tensor``), which have no dataflow
lowering."""


def check_imported_ops(module: "mlir.Module", program) -> None:
    """A FrontendError at the first op of ``module``'s functions outside
    :data:`IMPORTED_DIALECTS`, naming the PyTorch op of its FX node and its source line."""
    for fn in _functions(module):
        for op in fn.regions[0].blocks[0].operations:
            op = op.operation
            if op.name.split(".")[0] in IMPORTED_DIALECTS:
                continue
            raise FrontendError(f"{_torch_op(op.location, program)} is not supported: "
                                f"torch-mlir lowers it to '{op.name}', which FuseFlow has no "
                                f"dataflow lowering for; supported operations: {SUPPORTED_OPS}",
                                location_source(op.location))


def _import_error(err: "mlir.MLIRError", program) -> FrontendError:
    """The FrontendError of a model torch-mlir cannot lower to linalg: its first diagnostic,
    at the PyTorch op and source line it names."""
    diagnostics = list(getattr(err, "error_diagnostics", []) or [])
    if not diagnostics:
        return FrontendError(f"torch-mlir cannot lower the model to linalg: {err}")
    first = diagnostics[0]
    return FrontendError(f"torch-mlir cannot lower {_torch_op(first.location, program)}: "
                         f"{first.message}; supported operations: {SUPPORTED_OPS}",
                         location_source(first.location))


def _torch_op(location, program) -> str:
    """``PyTorch op 'aten.cumsum' (FX node 'cumsum')``: the op a location's FX node calls."""
    node = location_node(location)
    if node is None:
        return "a PyTorch op"
    targets = {n.name: n.target for n in program.graph.nodes}
    target = str(targets.get(node, node)).removesuffix(".default")
    return f"PyTorch op '{target}' (FX node '{node}')"


def location_source(location) -> str | None:
    """``file:line`` of a location's first file frame: the PyTorch source line of an imported
    op (callee first), or None."""
    if isinstance(location, mlir.FileLineColLoc):
        return f"{location.filename}:{location.start_line}"
    if isinstance(location, mlir.NameLoc):
        return location_source(location.child_loc)
    if isinstance(location, mlir.CallSiteLoc):
        return location_source(location.callee) or location_source(location.caller)
    if isinstance(location, mlir.FusedLoc):
        return next(filter(None, map(location_source, location.locations)), None)
    return None


def location_node(location) -> str | None:
    """The FX node a location names: the first ``NameLoc`` in it (inside call sites and fused
    locations), as :func:`fuseflow.mlir.import_program` locates imported ops."""
    if isinstance(location, mlir.NameLoc):
        return location.name_str
    if isinstance(location, mlir.CallSiteLoc):
        return location_node(location.callee) or location_node(location.caller)
    if isinstance(location, mlir.FusedLoc):
        return next(filter(None, map(location_node, location.locations)), None)
    return None


def annotate_nodes(module: "mlir.Module", module_of: dict[str, str]) -> None:
    """Sets :data:`NODE_ATTR` and :data:`MODULE_ATTR` on every linalg op of the module's
    functions from its location (:func:`location_node`; ``module_of``: node -> module path).

    An op whose location names no node (none so far; the importer locates every op it creates
    at its node) takes the node of its first annotated user, else of its first annotated
    producer, as data movement follows its values in :mod:`fuseflow.grouping`."""
    for fn in _functions(module):
        ops = [op.operation for op in fn.regions[0].blocks[0].operations
               if op.operation.name.startswith("linalg.")]
        node_of = {op: location_node(op.location) for op in ops}
        for op in reversed(ops):
            if node_of[op] is None:
                node_of[op] = _neighbour_node(op, node_of)
        for op, node in node_of.items():
            if node is None:
                continue
            op.attributes[NODE_ATTR] = mlir.StringAttr.get(node, context=module.context)
            op.attributes[MODULE_ATTR] = mlir.StringAttr.get(module_of.get(node, ""),
                                                             context=module.context)


def _neighbour_node(op, node_of: dict) -> str | None:
    users = [use.owner.operation for r in op.results for use in r.uses]
    producers = [v.owner.operation for v in op.operands if not isinstance(v.owner, mlir.Block)]
    for other in users + producers:
        if node_of.get(other):
            return node_of[other]
    return None


def _functions(module: "mlir.Module") -> list:
    return [op for op in module.body.operations if op.operation.name == "func.func"]


SPARSE_LAYOUTS = {torch.sparse_csr: "csr", torch.sparse_csc: "csc", torch.sparse_coo: "coo"}
"""The format each torch.sparse layout is declared as when it is traced dense."""


def _is_sparse(t) -> bool:
    return isinstance(t, torch.Tensor) and t.layout in SPARSE_LAYOUTS


def _densified(args: tuple, dense: dict) -> tuple:
    return tuple(t.to_dense() if i in dense else t for i, t in enumerate(args))


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"


def sparse_format(t: torch.Tensor, name: str) -> str:
    """The format a torch.sparse CSR, CSC or COO tensor is declared as when traced dense."""
    vector = t.dim() == 1 and t.layout == torch.sparse_coo
    if t.dense_dim() != 0 or not (t.dim() == 2 or vector):
        raise FrontendError(f"input '{name}': a {t.layout} tensor of shape {tuple(t.shape)} with "
                            f"{t.dense_dim()} dense dimensions cannot be traced; supported sparse "
                            "inputs are matrices (CSR, CSC, COO, BSR) and COO vectors")
    return "sparse_vector" if t.dim() == 1 else SPARSE_LAYOUTS[t.layout]


def bsr_format(t: torch.Tensor) -> str:
    """The format name of a 2-d ``torch.sparse_bsr`` tensor: ``bsr:<bh>x<bw>``."""
    if t.dim() != 2 or t.dense_dim() != 0:
        raise FrontendError(f"only 2-d BSR tensors without dense dimensions are supported, got "
                            f"shape {tuple(t.shape)} with {t.dense_dim()} dense dimensions")
    bh, bw = t.values().shape[1:]
    return f"bsr:{bh}x{bw}"


def tag_groups(module: "mlir.Module", kernel_of: dict[str, str]) -> None:
    """Sets :data:`GROUP_ATTR` on every op carrying :data:`NODE_ATTR` from ``kernel_of`` (FX
    node -> kernel name, :func:`fuseflow.grouping.assign_kernels`); ops of nodes it does not
    name get no group (a kernel of their own)."""
    for fn in _functions(module):
        for op in fn.regions[0].blocks[0].operations:
            attributes = op.operation.attributes
            if NODE_ATTR not in attributes:
                continue
            kernel = kernel_of.get(mlir.StringAttr(attributes[NODE_ATTR]).value)
            if kernel is not None:
                attributes[GROUP_ATTR] = mlir.StringAttr.get(kernel, context=module.context)


def encoding_for(fmt: str, rank: int, what: str) -> str | None:
    """The ``#sparse_tensor.encoding`` body for a named format; errors list valid formats."""
    if fmt.startswith("bsr"):
        _, _, block = fmt.partition(":")
        sizes = block.split("x")
        if rank != 2 or len(sizes) > 2 or not all(b.isdigit() and int(b) > 0 for b in sizes):
            raise FrontendError(f"{what}: format 'bsr:<block>' or 'bsr:<rows>x<cols>' needs a "
                                "matrix and positive integer block sizes")
        bh, bw = int(sizes[0]), int(sizes[-1])
        # A block size of 1 has no offset level: MLIR cannot invert `d floordiv 1`, `d mod 1`.
        rows = f"d0 floordiv {bh}" if bh > 1 else "d0"
        cols = f"d1 floordiv {bw}" if bw > 1 else "d1"
        offsets = "".join(f", d{d} mod {b} : dense" for d, b in enumerate((bh, bw)) if b > 1)
        return f"map = (d0, d1) -> ({rows} : dense, {cols} : compressed{offsets})"
    if fmt not in FORMAT_ENCODINGS:
        valid = ", ".join(list(FORMAT_ENCODINGS) + ["bsr:<block>", "bsr:<rows>x<cols>"])
        raise FrontendError(f"{what}: unknown format '{fmt}'; valid formats: {valid}")
    enc = FORMAT_ENCODINGS[fmt]
    expected_rank = 1 if fmt == "sparse_vector" else 2
    if enc is not None and rank != expected_rank:
        raise FrontendError(f"{what}: format '{fmt}' needs a rank-{expected_rank} tensor, "
                            f"got rank {rank}")
    return enc


def declare_formats(module: "mlir.Module", input_names: list[str], formats: dict[str, str]) -> None:
    """Re-types the named function inputs of ``@main`` with the declared sparse formats."""
    fn = next(op for op in module.body.operations if op.operation.name == "func.func")
    entry = fn.regions[0].blocks[0]
    unknown = [n for n in formats if n not in input_names]
    if unknown:
        raise FrontendError(f"cannot declare formats of unknown inputs {unknown}; inputs are: "
                            f"{', '.join(input_names)}")
    for name, fmt in formats.items():
        arg = entry.arguments[input_names.index(name)]
        rt = mlir.RankedTensorType(arg.type)
        enc = encoding_for(fmt, rt.rank, f"input '{name}'")
        if enc is None:
            continue
        shape = "x".join(str(d) for d in rt.shape)
        boolean = str(rt.element_type) == "i1"
        element = "f32" if boolean else rt.element_type
        new_type = mlir.Type.parse(f"tensor<{shape}x{element}, "
                                   f"#sparse_tensor.encoding<{{ {enc} }}>>")
        if boolean:
            _read_as_boolean(arg, new_type, entry)
        else:
            arg.set_type(new_type)
    ftype = mlir.FunctionType(mlir.ir.TypeAttr(fn.attributes["function_type"]).value)
    fn.attributes["function_type"] = mlir.ir.TypeAttr.get(mlir.FunctionType.get(
        [a.type for a in entry.arguments], _result_types(entry, list(ftype.results))))


def _result_types(entry, results: list) -> list:
    """The function's result types once its inputs are declared: a result that *is* an input
    (a model whose ops torch-mlir folded away, such as ``torch.where(x > x, x, x)``) has the
    input's declared type, as a ``clone`` of a torch.sparse input has."""
    ret = entry.operations[len(entry.operations) - 1]
    return [operand.type if isinstance(operand, mlir.ir.BlockArgument) else result
            for operand, result in zip(ret.operands, results)]


def _read_as_boolean(arg, sparse_type, entry) -> None:
    """Declares the ``bool`` input ``arg`` sparse: MLIR's sparse tensors cannot hold ``i1``
    values, so the input becomes a sparse ``f32`` tensor of 0.0/1.0 values (the simulator
    binds the user's ``bool`` tensor in that format) that a ``linalg.generic`` at the top of
    the function reads back as the ``i1`` tensor the model uses (``arith.fptoui``, which the
    lowering reads as the mask value itself)."""
    bool_type = arg.type
    users = [use.owner for use in arg.uses]
    arg.set_type(sparse_type)
    rank = mlir.RankedTensorType(bool_type).rank
    first = list(entry.operations)[0]
    # located at the mask's first use: what the read-back's errors are about
    with mlir.InsertionPoint(first), (users[0] if users else first).location:
        init = mlir.tensor.EmptyOp(list(mlir.RankedTensorType(bool_type).shape),
                                   mlir.RankedTensorType(bool_type).element_type)
        identity = mlir.ir.AffineMapAttr.get(mlir.ir.AffineMap.get_identity(rank))
        parallel = mlir.Attribute.parse("#linalg.iterator_type<parallel>")
        generic = mlir.linalg.GenericOp([bool_type], [arg], [init.result],
                                        mlir.ir.ArrayAttr.get([identity, identity]),
                                        mlir.ir.ArrayAttr.get([parallel] * rank))
        body = generic.regions[0].blocks.append(mlir.F32Type.get(),
                                                mlir.RankedTensorType(bool_type).element_type)
        with mlir.InsertionPoint(body):
            value = mlir.arith.FPToUIOp(body.arguments[1].type, body.arguments[0]).result
            mlir.linalg.YieldOp([value])
    for user in users:
        for index, operand in enumerate(user.operands):
            if operand == arg:
                user.operands[index] = generic.result

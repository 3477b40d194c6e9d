"""The MLIR shim: the only module of FuseFlow that imports ``torch_mlir``.

Everything else reaches the MLIR Python bindings bundled in the torch-mlir wheel through the
names re-exported here, so a change of MLIR distribution touches one file.
"""

from torch_mlir import ir, passmanager
from torch_mlir.dialects import arith, func, irdl, linalg, math, sparse_tensor, tensor
from torch_mlir.ir import (
    Attribute,
    Block,
    BoolAttr,
    CallSiteLoc,
    Context,
    DenseI32ArrayAttr,
    DenseI64ArrayAttr,
    F32Type,
    F64Type,
    FileLineColLoc,
    FloatAttr,
    FunctionType,
    FusedLoc,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    Location,
    MLIRError,
    Module,
    NameLoc,
    Operation,
    OpView,
    RankedTensorType,
    StringAttr,
    Type,
    UnknownLoc,
    Value,
)
from torch_mlir.passmanager import PassManager

__all__ = [
    "Attribute", "Block", "BoolAttr", "CallSiteLoc", "Context", "DenseI32ArrayAttr",
    "DenseI64ArrayAttr", "F32Type", "F64Type", "FileLineColLoc", "FloatAttr", "FunctionType",
    "FusedLoc", "InsertionPoint", "IntegerAttr", "IntegerType", "Location", "MLIRError",
    "Module", "NameLoc", "OpView", "Operation", "PassManager", "RankedTensorType", "StringAttr",
    "Type", "UnknownLoc", "Value", "arith", "func", "import_program", "import_torch",
    "ir", "irdl", "linalg", "math", "new_context", "passmanager", "sparse_tensor", "tensor",
]


OPVIEW_MODULES = "fuseflow.dialects.opviews"
"""Where the bindings find the (empty) Python modules of our dialects."""


def _register_opview_modules() -> None:
    from torch_mlir._mlir_libs import _mlir

    if OPVIEW_MODULES not in _mlir.globals.dialect_search_modules:
        _mlir.globals.append_dialect_search_prefix(OPVIEW_MODULES)


def new_context() -> Context:
    """A fresh MLIR context with the ``fuse`` and ``sam`` dialects loaded."""
    from fuseflow.dialects import load_dialects

    _register_opview_modules()
    ctx = Context()
    load_dialects(ctx)
    return ctx


TORCH_TO_LINALG = (
    "builtin.module(func.func(torch-match-quantized-custom-ops),"
    "torchdynamo-export-to-torch-backend-pipeline{extra-library=},"
    "torch-backend-to-linalg-on-tensors-backend-pipeline{allow-non-finites=true})"
)
"""The passes ``torch_mlir.fx.export_and_import(..., output_type="linalg-on-tensors")`` runs
after the FX import: torch dialect -> torch backend contract -> linalg-on-tensors."""


def import_program(program, context: Context, node_name=None, func_name: str = "main") -> Module:
    """Imports a ``torch.export.ExportedProgram`` into ``context`` as linalg-on-tensors.

    Runs torch-mlir's decompositions on ``program``, its FX importer into ``context`` and the
    :data:`TORCH_TO_LINALG` passes with a PassManager in ``context``: the module never leaves
    the context (no print and re-parse). Sparse operands carry ``#sparse_tensor.encoding``.
    Every op is located at the PyTorch source of the FX node it came from (file:line, with its
    call stack); ``node_name(node) -> str``, when given, names that node: the location becomes
    ``NameLoc(node_name(node), source)``. Failures raise :class:`MLIRError` (import) with the
    diagnostics, or what torch-mlir raises for graphs it cannot import.
    """
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    from torch_mlir.extras.fx_importer import FxImporter

    torch_d.register_dialect(context)
    decomposed = program.run_decompositions({**get_decomposition_table(),
                                             **_sparse_product_decompositions()})
    importer = FxImporter(context=context, graph_node_importer_cls=_node_importer(node_name))
    importer.import_frozen_program(decomposed, func_name=func_name)
    module = importer.module
    with context:
        PassManager.parse(TORCH_TO_LINALG).run(module.operation)
    return module


def _sparse_product_decompositions() -> dict:
    """``torch.sparse.mm`` (``aten._sparse_mm``, ``aten._sparse_addmm``) as the dense products
    they compute: torch-mlir has no lowering of the sparse ones (a sparse operand is traced
    dense and declared sparse when PyTorch cannot trace it sparse)."""
    import torch

    aten = torch.ops.aten
    return {
        aten._sparse_mm.default: lambda a, b: aten.mm.default(a, b),
        aten._sparse_addmm.default: lambda c, a, b, *, beta=1, alpha=1: aten.addmm.default(
            c, a, b, beta=beta, alpha=alpha),
    }


def _node_importer(node_name):
    """A ``GraphNodeImporter`` class whose op locations name their FX node (see
    :func:`import_program`); the default importer without ``node_name``."""
    from torch_mlir.extras.fx_importer import ContextCache, GraphNodeImporter

    if node_name is None:
        return GraphNodeImporter

    class NamedLocations(ContextCache):
        """The importer's per-context cache, naming each call's location by its node."""

        __slots__ = ()

        @classmethod
        def sharing(cls, cache: ContextCache) -> "NamedLocations":
            named = cls.__new__(cls)
            for slot in ContextCache.__slots__:
                setattr(named, slot, getattr(cache, slot))
            return named

        def get_node_location(self, node):
            source = super().get_node_location(node)
            if node.op != "call_function":
                return source
            child = source if source is not None else Location.unknown(context=self._c)
            return Location.name(node_name(node), childLoc=child, context=self._c)

    class NamedNodeImporter(GraphNodeImporter):
        """Imports graph nodes with :class:`NamedLocations`."""

        __slots__ = ()

        def __init__(self, fx_importer, context, context_cache, block):
            super().__init__(fx_importer, context, NamedLocations.sharing(context_cache), block)

    return NamedNodeImporter


def import_torch(model, example_inputs) -> str:
    """``model(*example_inputs)`` exported and imported to linalg-on-tensors in a fresh
    context (see :func:`import_program`), printed with source locations: for inspection and
    tests; compiling imports into its own context (:class:`fuseflow.Program`)."""
    import torch

    # ``model`` may also be a ``torch.export.ExportedProgram`` (then example_inputs is empty).
    program = model if isinstance(model, torch.export.ExportedProgram) else \
        torch.export.export(model, tuple(example_inputs))
    module = import_program(program, new_context())
    return module.operation.get_asm(enable_debug_info=True)

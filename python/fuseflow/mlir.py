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
    Context,
    DenseI64ArrayAttr,
    DenseI32ArrayAttr,
    F32Type,
    F64Type,
    FloatAttr,
    FunctionType,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    Location,
    MLIRError,
    Module,
    Operation,
    OpView,
    RankedTensorType,
    StringAttr,
    Type,
    Value,
)
from torch_mlir.passmanager import PassManager

__all__ = [
    "Attribute", "Block", "BoolAttr", "Context", "DenseI32ArrayAttr", "DenseI64ArrayAttr",
    "F32Type", "F64Type", "FloatAttr", "FunctionType", "InsertionPoint", "IntegerAttr",
    "IntegerType", "Location", "MLIRError", "Module", "OpView", "Operation", "PassManager",
    "RankedTensorType", "StringAttr", "Type", "Value", "arith", "func", "import_torch",
    "ir", "irdl", "linalg", "math", "new_context", "passmanager", "sparse_tensor", "tensor",
]


def new_context() -> Context:
    """A fresh MLIR context with the ``fuse`` and ``sam`` dialects loaded."""
    from fuseflow.dialects import load_dialects

    ctx = Context()
    load_dialects(ctx)
    return ctx


def import_torch(model, example_inputs):
    """Imports ``model`` applied to ``example_inputs`` with torch-mlir's FX importer.

    Returns the module lowered to linalg-on-tensors with ``#sparse_tensor.encoding`` on sparse
    operands, as printed text with source locations (the importer owns its own context).
    """
    from torch_mlir import fx

    # ``model`` may also be a ``torch.export.ExportedProgram`` (then example_inputs is empty).
    module = fx.export_and_import(model, *example_inputs, output_type="linalg-on-tensors")
    # Keep the model's source locations through the text hop into our context.
    return module.operation.get_asm(enable_debug_info=True)

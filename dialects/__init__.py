"""The ``fuse`` and ``sam`` dialects, defined in IRDL and loaded into MLIR contexts.

``load_dialects(ctx)`` is the one loader: every context FuseFlow creates goes through it.
"""

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fuseflow import mlir

DIALECT_FILES = ("fuse.irdl.mlir", "sam.irdl.mlir")


def irdl_source(name: str) -> str:
    """The IRDL text of one of our dialect files."""
    return resources.files(__package__).joinpath(name).read_text()


def load_dialects(ctx: "mlir.Context") -> None:
    """Registers the ``fuse`` and ``sam`` dialects in ``ctx`` (idempotent per context)."""
    # Imported here: the dialects' plain-data modules (primitives, alu, levels, ir) import no
    # MLIR, so the simulator core can use them.
    from fuseflow import mlir

    if ctx.is_registered_operation("sam.graph"):
        return
    with ctx, mlir.Location.unknown():
        for name in DIALECT_FILES:
            mlir.irdl.load_dialects(mlir.Module.parse(irdl_source(name)))

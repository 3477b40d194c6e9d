"""What the compiler reads from a ``torch.export`` graph: compute nodes, module paths, origins.

A node of the exported (pre-decomposition) program is the unit fusion groups and application
plans name: its FX node name (``matmul_3``), the innermost module of its
``nn_module_stack`` (``layers.0.attn``) and its ATen op packet (``matmul``). Decomposition
(before torch-mlir imports the program) replaces nodes by finer ones; each records the node it
came from in ``node.meta["from_node"]``, which :func:`origin_namer` follows back, so every
imported op can name the node of the program the user sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

MODEL_ATTR = "model"
"""The attribute under which the frontend's functional wrapper holds the user's model: module
paths of an exported wrapped program start with it."""

VIEW_OPS = frozenset({
    "alias", "clone", "contiguous", "detach", "expand", "flatten", "getitem", "permute",
    "reshape", "select", "slice", "split", "split_with_sizes", "squeeze", "t", "transpose",
    "unbind", "unflatten", "unsqueeze", "_unsafe_view", "view",
})
"""Data-movement ops that belong to no stage."""


@dataclass(frozen=True)
class TracedOp:
    """One compute node of a model's pre-decomposition ``torch.export`` graph."""

    node: str
    """FX node name."""
    module: str
    """Innermost ``nn_module_stack`` entry (``""`` for the root module)."""
    op: str
    """ATen op packet name (``aten.add.Tensor`` -> ``add``)."""


def op_name(node) -> str:
    """The ATen op packet name of a ``call_function`` node (``aten.add.Tensor`` -> ``add``)."""
    return getattr(node.target, "__name__", str(node.target)).split(".")[0]


def module_path(node) -> str:
    """The innermost ``nn_module_stack`` path of ``node`` (``""`` when it has none)."""
    stack = node.meta.get("nn_module_stack") or {}
    return list(stack.values())[-1][0] if stack else ""


def model_relative(path: str) -> str:
    """A module path of the wrapped program relative to the user's model (``""``: its root)."""
    if path == MODEL_ATTR:
        return ""
    return path[len(MODEL_ATTR) + 1:] if path.startswith(MODEL_ATTR + ".") else path


def program_ops(program, module_name: Callable[[str], str] = lambda path: path) -> list[TracedOp]:
    """The compute nodes of an exported program; ``module_name`` maps each node's innermost
    ``nn_module_stack`` path (``""`` when it has none) to the module recorded."""
    return [TracedOp(node.name, module_name(module_path(node)), op_name(node))
            for node in program.graph.nodes
            if node.op == "call_function" and op_name(node) not in VIEW_OPS]


def node_modules(program, module_name: Callable[[str], str] = lambda path: path) -> dict[str, str]:
    """FX node name -> module (as :func:`program_ops` records it) for every ``call_function``
    node of ``program``, data movement included."""
    return {node.name: module_name(module_path(node)) for node in program.graph.nodes
            if node.op == "call_function"}


def origin_namer(program) -> Callable[[object], str]:
    """A function naming, for a node of ``program.run_decompositions(...)``, the node of
    ``program`` it came from (its own name when the provenance does not lead there)."""
    graph_id = id(program.graph)
    names = {node.name for node in program.graph.nodes}

    def origin(node) -> str:
        pending = list(node.meta.get("from_node") or ())
        while pending:
            source = pending.pop(0)
            if source.graph_id == graph_id and source.name in names:
                return source.name
            pending.extend(source.from_node)
        return node.name

    return origin

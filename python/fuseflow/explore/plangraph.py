"""The simulator's block graph of a kernel *plan*, without emitting IR.

:func:`plan_graph` builds from a :class:`~fuseflow.passes.lowering.plan.KernelPlan` the
:class:`~fuseflow.sim.graph.BlockGraph` that :func:`fuseflow.sim.loader.load_graph` would
build from the ``sam.graph`` the plan emits: the same block names (the stable names of
:mod:`fuseflow.dialects.naming`), kinds, attributes, channels and broadcasts, so the cost
model predicts a candidate kernel from its plan alone (a test holds the two equal).
"""

from __future__ import annotations

from fuseflow.dialects.naming import stable_names
from fuseflow.dialects.primitives import primitive
from fuseflow.dialects.types import storage_levels
from fuseflow.passes.lowering.builder import Stream, TensorArg, kind_tile
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.loader import joiner_ports, tensor_format


def graph_input_types(plan, input_types) -> list:
    """The MLIR type of each graph operand of ``plan`` (``input_types``: the kernel's
    operand types; host views give their own result types)."""
    return [input_types[i] if isinstance(i, int) else i.result_type for i in plan.inputs]


def plan_graph(plan, input_types) -> BlockGraph:
    """The block graph of ``plan`` whose graph operands have MLIR types ``input_types``
    (:func:`graph_input_types`)."""
    ops = plan.ops
    uses: dict[tuple[int, int], int] = {}
    for op in ops:
        for v in op.operands:
            if isinstance(v, Stream):
                uses[(v.op, v.result)] = uses.get((v.op, v.result), 0) + 1
    names: dict[tuple[int, int], str] = {}
    outs: dict[str, list[str]] = {}
    blocks: list[Block] = []
    for index, op in enumerate(ops):
        for r in range(len(op.results)):
            base = f"s{len(names)}"
            names[(index, r)] = base
            count = uses.get((index, r), 0)
            outs[base] = [base] if count <= 1 else [f"{base}.{k}" for k in range(count)]
            if count > 1:
                blocks.append(Block(f"broadcast_{base}", "broadcast", (base,),
                                    tuple(outs[base]), {}))
    taken_use: dict[str, int] = {}
    taken_names: set[str] = set()
    levels = [storage_levels(t) for t in input_types]
    for index, (op, name) in enumerate(zip(ops, stable_names(o.name for o in ops))):
        prim = primitive(op.name)
        given = dict(op.attrs)
        attrs = {a.name: given.get(a.name, a.default) for a in prim.attributes}
        inputs = []
        for v in op.operands:
            if isinstance(v, TensorArg):
                attrs["tensor"] = v.index
            else:
                base = names[(v.op, v.result)]
                k = taken_use.get(base, 0)
                taken_use[base] = k + 1
                inputs.append(outs[base][k])
        outputs = tuple(names[(index, r)] for r in range(len(op.results)))
        kind = prim.kind
        if kind in ("scan", "locate"):
            tensor = attrs.get("tensor")
            if tensor is None:
                attrs.update(tensor=None, format="dense")
            else:
                shape, lv = levels[tensor]
                level = lv[attrs["level"]]
                attrs.update(format=level.format, size=level.size(shape))
        elif kind in ("intersect", "union"):
            inputs, outputs = joiner_ports(attrs, inputs, outputs)
        elif kind in ("fork", "join"):
            attrs["lanes"] = max(len(inputs), len(outputs))
        # value streams of tiles, as the loader's _tile_view
        tiles_in = tuple(kind_tile(v.kind) for v in op.operands
                         if isinstance(v, Stream) and v.kind.startswith("val"))
        tiles_out = tuple(kind_tile(k) for k in op.results if k.startswith("val"))
        if any(tiles_in) or any(tiles_out):
            attrs["tiles"] = (tiles_in, tiles_out)
        if name in taken_names:
            name = f"{name}_{index}"
        taken_names.add(name)
        blocks.append(Block(name, kind, tuple(inputs), outputs, attrs))
    graph = BlockGraph(blocks, [tensor_format(t) for t in plan.result_types], plan.name)
    return graph



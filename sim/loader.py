"""The loader: builds a :class:`BlockGraph` from a ``sam.graph`` op.

The only module of the simulator that reads MLIR. Each SSA stream becomes a channel; a
stream with several uses gets a ``broadcast`` block with one output channel per use, and a
stream with no use is a channel nobody consumes.
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.dialects.types import Level, storage_levels
from fuseflow.errors import FuseFlowError
from fuseflow.sim.formats import LevelSpec, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph

# sam op name -> block kind (identical except for the dialect prefix)
OP_KINDS = {
    "sam.root": "root", "sam.scan": "scan", "sam.locate": "locate", "sam.repsiggen": "repsiggen",
    "sam.repeat": "repeat", "sam.intersect": "intersect", "sam.union": "union",
    "sam.array": "array", "sam.alu": "alu", "sam.reduce": "reduce", "sam.spacc": "spacc",
    "sam.crddrop": "crddrop", "sam.crdhold": "crdhold", "sam.level_write": "level_write",
    "sam.value_write": "value_write", "sam.fork": "fork", "sam.join": "join",
}


class LoaderError(FuseFlowError, ValueError):
    """A sam.graph the simulator cannot load; names the op."""


def tensor_format(t) -> TensorFormat:
    """The simulator format of an MLIR tensor type (its storage levels)."""
    shape, levels = storage_levels(t)
    return TensorFormat(tuple(shape), tuple(_spec(lv) for lv in levels))


def _spec(level: Level) -> LevelSpec:
    return LevelSpec(level.format, level.dim, level.kind, level.block)


def _level_size(t, level: int) -> int:
    shape, levels = storage_levels(t)
    lv = levels[level]
    if lv.kind == "id":
        return shape[lv.dim]
    if lv.kind == "div":
        return -(-shape[lv.dim] // lv.block)
    return lv.block


def _attr_int(op, name):
    return int(mlir.IntegerAttr(op.attributes[name]).value) if name in op.attributes else None


def load_graph(graph_op) -> BlockGraph:
    """The BlockGraph of one ``sam.graph`` op."""
    body = graph_op.regions[0].blocks[0]
    tensor_index = {arg: i for i, arg in enumerate(body.arguments)}
    channel_of: dict = {}      # (value, use position) -> channel name
    blocks: list[Block] = []
    names: dict = {}
    ops = [o.operation if hasattr(o, "operation") else o for o in body.operations][:-1]

    # Name every result channel and create broadcasts for multi-use streams.
    counter = 0
    consumers_seen: dict = {}
    for op in ops:
        for result in op.results:
            base = f"s{counter}"
            counter += 1
            uses = list(result.uses)
            names[result] = base
            consumers_seen[base] = 0
            if len(uses) > 1:
                outs = tuple(f"{base}.{k}" for k in range(len(uses)))
                blocks.append(Block(f"broadcast_{base}", "broadcast", (base,), outs,
                                    {}, _loc(op)))
                channel_of[base] = list(outs)
            else:
                channel_of[base] = [base]

    def take(value):
        base = names[value]
        index = consumers_seen[base]
        consumers_seen[base] += 1
        return channel_of[base][index]

    for index, op in enumerate(ops):
        kind = OP_KINDS.get(op.name)
        if kind is None:
            raise LoaderError(f"op '{op.name}' cannot be simulated", _loc(op))
        attrs: dict = {}
        stream_inputs = []
        for value in op.operands:
            if value in tensor_index:
                attrs["tensor"] = tensor_index[value]
            else:
                stream_inputs.append(take(value))
        outputs = tuple(names[r] for r in op.results)
        if kind in ("scan", "locate"):
            attrs["level"] = _attr_int(op, "level")
            if "tensor" in attrs:
                t = body.arguments[attrs["tensor"]].type
                lv = storage_levels(t)[1][attrs["level"]]
                attrs["format"] = lv.format
                attrs["size"] = _level_size(t, attrs["level"])
            else:
                attrs.update(tensor=None, format="dense", size=_attr_int(op, "size"))
        elif kind in ("intersect", "union"):
            stream_inputs, outputs, attrs["ref_groups"] = _joiner_ports(op, stream_inputs, outputs)
        elif kind == "alu":
            attrs["op"] = mlir.StringAttr(op.attributes["op"]).value
            attrs["scalar"] = (float(mlir.FloatAttr(op.attributes["scalar"]).value)
                               if "scalar" in op.attributes else None)
        elif kind == "reduce":
            attrs["kind"] = mlir.StringAttr(op.attributes["kind"]).value
        elif kind == "spacc":
            attrs["order"] = _attr_int(op, "order")
        elif kind == "level_write":
            attrs.update(result=_attr_int(op, "result"), level=_attr_int(op, "level"))
        elif kind == "value_write":
            attrs["result"] = _attr_int(op, "result")
        elif kind == "fork":
            attrs["lanes"] = len(op.results)
        elif kind == "join":
            attrs["lanes"] = len(stream_inputs)
        blocks.append(Block(f"{kind}{index}", kind, tuple(stream_inputs), outputs, attrs, _loc(op)))
    outputs = [tensor_format(r.type) for r in graph_op.results]
    name = (mlir.StringAttr(graph_op.attributes["name"]).value
            if "name" in graph_op.attributes else "graph")
    graph = BlockGraph(blocks, outputs, name)
    graph.validate()
    return graph


def _joiner_ports(op, inputs: list, outputs: tuple):
    """Reorders a joiner's ports so each coordinate input's references and values (fused
    intermediates travel through joiners like references) form one group of ``ref_groups``."""
    refs = [int(g) for g in mlir.DenseI64ArrayAttr(op.attributes["ref_groups"])]
    n = len(refs)
    vals = ([int(g) for g in mlir.DenseI64ArrayAttr(op.attributes["val_groups"])]
            if "val_groups" in op.attributes else [0] * n)
    crd_in, ref_in = inputs[:n], inputs[n:n + sum(refs)]
    val_in = inputs[n + sum(refs):]
    ref_out, val_out = outputs[1:1 + sum(refs)], outputs[1 + sum(refs):]
    new_in, new_out = list(crd_in), [outputs[0]]
    r = v = 0
    for g_ref, g_val in zip(refs, vals):
        new_in += ref_in[r:r + g_ref] + val_in[v:v + g_val]
        new_out += list(ref_out[r:r + g_ref]) + list(val_out[v:v + g_val])
        r, v = r + g_ref, v + g_val
    return new_in, tuple(new_out), tuple(a + b for a, b in zip(refs, vals))


def input_formats(graph_op) -> list[TensorFormat]:
    """The format each input tensor of the graph must be bound in."""
    return [tensor_format(v.type) for v in graph_op.operands]


def _loc(op) -> str:
    return str(op.location)

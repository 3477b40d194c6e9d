"""The loader: builds a :class:`BlockGraph` from a ``sam.graph`` op.

The only module of the simulator that reads MLIR. Each primitive op becomes the block of its
kind (:mod:`fuseflow.dialects.primitives`: the op name without ``sam.``) with its declared
attributes, named by the stable name in its location (``loc("scan3"(...))``, see
:mod:`fuseflow.dialects.naming`) so its statistics lead back to the op, else by its kind and
position (``scan5``); each SSA stream becomes a channel; a stream with several uses gets a
``broadcast`` block with one output channel per use, and a stream with no use is a channel
nobody consumes.
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.dialects import attributes
from fuseflow.dialects.primitives import PRIMITIVES, primitive
from fuseflow.dialects.tiles import val_tile
from fuseflow.dialects.types import storage_levels
from fuseflow.errors import FuseFlowError
from fuseflow.sim.formats import TensorFormat
from fuseflow.sim.graph import Block, BlockGraph

OP_KINDS = {p.op_name: p.kind for p in PRIMITIVES}
"""sam op name -> block kind (the op name without ``sam.``), from the primitive table."""


class LoaderError(FuseFlowError, ValueError):
    """A sam.graph the simulator cannot load; names the op."""


def tensor_format(t) -> TensorFormat:
    """The simulator format of an MLIR tensor type (its storage levels)."""
    shape, levels = storage_levels(t)
    return TensorFormat(shape, levels)


def load_graph(graph_op) -> BlockGraph:
    """The BlockGraph of one ``sam.graph`` op."""
    body = graph_op.regions[0].blocks[0]
    ops = [o.operation if hasattr(o, "operation") else o for o in body.operations][:-1]
    channels = _Channels(ops)
    blocks = list(channels.broadcasts)
    taken: set[str] = set()
    blocks += [_block(index, op, body, channels, taken) for index, op in enumerate(ops)]
    outputs = [tensor_format(r.type) for r in graph_op.results]
    name = (mlir.StringAttr(graph_op.attributes["name"]).value
            if "name" in graph_op.attributes else "graph")
    graph = BlockGraph(blocks, outputs, name)
    graph.validate()
    return graph


class _Channels:
    """Names every result stream ``s<k>``; a stream with several uses gets a broadcast block
    whose outputs ``s<k>.<u>`` go to its uses in order."""

    def __init__(self, ops):
        self.names: dict = {}                  # result value -> channel name
        self._outs: dict[str, list[str]] = {}  # channel -> the channel each use reads
        self._taken: dict[str, int] = {}
        self.broadcasts: list[Block] = []
        for op in ops:
            for result in op.results:
                base = f"s{len(self.names)}"
                self.names[result] = base
                self._taken[base] = 0
                uses = len(list(result.uses))
                self._outs[base] = [base] if uses <= 1 else [f"{base}.{k}" for k in range(uses)]
                if uses > 1:
                    self.broadcasts.append(Block(f"broadcast_{base}", "broadcast", (base,),
                                                 tuple(self._outs[base]), {}, _loc(op)))

    def take(self, value) -> str:
        """The channel the next use of stream ``value`` reads."""
        base = self.names[value]
        self._taken[base] += 1
        return self._outs[base][self._taken[base] - 1]


def block_name(op, index: int, kind: str, taken: set[str]) -> str:
    """The name of the block of ``op`` (the ``index``-th op of its graph): the name of its
    ``NameLoc``, else ``<kind><index>``; made unique among ``taken`` (which it joins)."""
    loc = op.location
    name = loc.name_str if isinstance(loc, mlir.ir.NameLoc) else f"{kind}{index}"
    if name in taken:
        name = f"{name}_{index}"
    taken.add(name)
    return name


def _block(index: int, op, body, channels: _Channels, taken: set[str]) -> Block:
    """The block of primitive ``op``: its name, declared attributes, tensor and stream ports,
    and what the simulator derives (``_SIMULATOR_VIEW``)."""
    prim = primitive(op.name)
    if prim is None:
        raise LoaderError(f"op '{op.name}' cannot be simulated", _loc(op))
    attrs = attributes.read(op, prim)
    tensors = {arg: i for i, arg in enumerate(body.arguments)}
    inputs = []
    for value in op.operands:
        if value in tensors:
            attrs["tensor"] = tensors[value]
        else:
            inputs.append(channels.take(value))
    outputs = tuple(channels.names[r] for r in op.results)
    _tile_view(attrs, op)
    adapt = _SIMULATOR_VIEW.get(prim.kind)
    if adapt is not None:
        inputs, outputs = adapt(attrs, inputs, outputs, body)
    return Block(block_name(op, index, prim.kind, taken), prim.kind, tuple(inputs), outputs,
                 attrs, _loc(op))


def _tile_view(attrs: dict, op) -> None:
    """Value streams of tiles: ``tiles`` holds the tile shape of each value operand and result
    (``()`` for scalars), set only when some is a tile."""
    ins = tuple(t for t in (val_tile(v.type) for v in op.operands) if t is not None)
    outs = tuple(t for t in (val_tile(r.type) for r in op.results) if t is not None)
    if any(ins) or any(outs):
        attrs["tiles"] = (ins, outs)


def _level_view(attrs: dict, inputs: list, outputs: tuple, body):
    """Scanners and locators: the format and size of the level read (a tensor-less scan reads
    a dense range of ``size``)."""
    tensor = attrs.get("tensor")
    if tensor is None:
        attrs.update(tensor=None, format="dense")
        return inputs, outputs
    shape, levels = storage_levels(body.arguments[tensor].type)
    level = levels[attrs["level"]]
    attrs.update(format=level.format, size=level.size(shape))
    return inputs, outputs


def _joiner_view(attrs: dict, inputs: list, outputs: tuple, body):
    """:func:`joiner_ports` (the view table's signature)."""
    return joiner_ports(attrs, inputs, outputs)


def joiner_ports(attrs: dict, inputs: list, outputs: tuple):
    """Reorders a joiner's ports so each coordinate input's references and values (fused
    intermediates travel through joiners like references) form one group of ``ref_groups``."""
    refs = list(attrs["ref_groups"])
    n = len(refs)
    vals = list(attrs.pop("val_groups") or [0] * n)
    crd_in, ref_in = inputs[:n], inputs[n:n + sum(refs)]
    val_in = inputs[n + sum(refs):]
    ref_out, val_out = outputs[1:1 + sum(refs)], outputs[1 + sum(refs):]
    new_in, new_out = list(crd_in), [outputs[0]]
    r = v = 0
    for g_ref, g_val in zip(refs, vals):
        new_in += ref_in[r:r + g_ref] + val_in[v:v + g_val]
        new_out += list(ref_out[r:r + g_ref]) + list(val_out[v:v + g_val])
        r, v = r + g_ref, v + g_val
    attrs["ref_groups"] = tuple(a + b for a, b in zip(refs, vals))
    return new_in, tuple(new_out)


def _lanes_view(attrs: dict, inputs: list, outputs: tuple, body):
    """Forks and joins: the number of lanes (a join's first input is its order)."""
    attrs["lanes"] = len(outputs) if len(inputs) == 1 else len(inputs) - 1
    return inputs, outputs


_SIMULATOR_VIEW = {
    "scan": _level_view, "locate": _level_view, "intersect": _joiner_view,
    "union": _joiner_view, "fork": _lanes_view, "join": _lanes_view,
}
"""Block kind -> what the simulator derives beyond the declared attributes (ports, level
formats); ``(attrs, inputs, outputs, graph body) -> (inputs, outputs)``, updating ``attrs``."""


def input_formats(graph_op) -> list[TensorFormat]:
    """The format each input tensor of the graph must be bound in."""
    return [tensor_format(v.type) for v in graph_op.operands]


def _loc(op) -> str:
    return str(op.location)

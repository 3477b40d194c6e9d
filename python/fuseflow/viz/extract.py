"""Builds the view model of a lowered module: inputs, kernels (one per ``sam.graph``) and
outputs, each kernel holding the blocks the simulator runs, with statistics when a
simulation of the module is given.

Block names and locations come from the simulator's loader (:func:`fuseflow.sim.loader.load_graph`),
so the view names blocks exactly as the statistics do; each block is linked to the ``sam`` op
it was loaded from (a ``broadcast``, which the loader adds for a stream with several uses, to
the op producing the stream).
"""

from __future__ import annotations

from fuseflow import mlir
from fuseflow.layout import LAYOUT_OPS
from fuseflow.passes.schedule import read_schedule
from fuseflow.sim.graph import BlockGraph
from fuseflow.sim.loader import OP_KINDS, load_graph, tensor_format
from fuseflow.viz.critical import critical_path
from fuseflow.viz.locations import SourceLocation, parse_location
from fuseflow.viz.model import Edge, Node, View


class ViewError(ValueError):
    """A module the view cannot show; names the problem."""


def build_view(module, run=None, input_names: list[str] | None = None,
               title: str = "model") -> View:
    """The view of ``module``'s ``@main`` after ``fuseflow-to-dataflow``.

    ``run`` (a :class:`fuseflow.runtime.ModuleRun` of this module) adds statistics;
    ``input_names`` names the function's arguments (default ``arg0``, ``arg1``, ...).
    """
    funcs = [op.operation for op in module.body.operations if op.operation.name == "func.func"]
    if not funcs:
        raise ViewError("the module has no func.func to show")
    entry = funcs[0].regions[0].blocks[0]
    args = list(entry.arguments)
    names = list(input_names) if input_names else [f"arg{i}" for i in range(len(args))]
    if len(names) != len(args):
        raise ViewError(f"{len(names)} input names for {len(args)} function arguments")
    graphs = [op.operation for op in entry.operations if op.operation.name == "sam.graph"]
    if not graphs:
        raise ViewError("the module has no sam.graph: lower it with fuseflow-to-dataflow first "
                        "(fuseflow.compile does)")
    kernel_runs = list(run.kernels) if run is not None else [None] * len(graphs)
    if len(kernel_runs) != len(graphs):
        raise ViewError(f"the simulation ran {len(kernel_runs)} kernels, the module has "
                        f"{len(graphs)}: it is not a simulation of this module")
    total = run.cycles if run is not None else None

    root = Node("model", title, "model", stats={"cycles": total} if run is not None else None)
    locations = _Locations()
    source: dict = {}                   # SSA value -> (index among the model's children, name)
    for arg, name in zip(args, names):
        source[arg] = (len(root.children), name)
        root.children.append(Node(f"in:{name}", name, "input", _format_label(arg.type)))
    for graph_op, kernel_run in zip(graphs, kernel_runs):
        index = len(root.children)
        kernel = _kernel_node(graph_op, kernel_run, total, source, locations)
        root.children.append(kernel)
        for operand in graph_op.operands:
            _link(root, source, operand, index, "")
        for r, value in enumerate(graph_op.results):
            source[value] = (index, f"{kernel.name}.out{r}")
    returned = next((op.operation for op in entry.operations
                     if op.operation.name == "func.return"), None)
    for r, value in enumerate(returned.operands if returned is not None else ()):
        index = len(root.children)
        root.children.append(Node(f"out:{r}", f"output {r}", "output", _format_label(value.type)))
        _link(root, source, value, index, "")
    return View(title, root)


def _link(root: Node, source: dict, value, dst: int, via: str) -> None:
    """Adds the edge from the node computing ``value`` to child ``dst``, through layout ops."""
    if value in source:
        root.edges.append(Edge(source[value][0], dst, via))
        return
    owner = value.owner
    op = owner.operation if hasattr(owner, "operation") else owner
    if getattr(op, "name", None) in LAYOUT_OPS:
        _link(root, source, op.operands[0], dst, op.name if not via else f"{op.name}, {via}")


def _kernel_node(graph_op, kernel_run, total_cycles, source: dict, locations) -> Node:
    graph: BlockGraph = kernel_run.graph if kernel_run is not None else load_graph(graph_op)
    body_ops = [o.operation for o in graph_op.regions[0].blocks[0].operations][:-1]
    attrs = {}
    if "fuseflow.einsum" in graph_op.attributes:
        attrs["einsum"] = mlir.StringAttr(graph_op.attributes["fuseflow.einsum"]).value
    schedule = read_schedule(graph_op)
    if schedule is not None:
        attrs["order"] = list(schedule.order)
    attrs["blocks"] = len(graph.blocks)
    kernel = Node(graph.name, graph.name, "kernel", attrs.get("einsum", ""),
                  locations[str(graph_op.location)], attrs=attrs)
    result = kernel_run.result if kernel_run is not None else None
    if result is not None:
        kernel.stats = {**result.summary(), "total_cycles": result.total_cycles,
                        "share": result.total_cycles / total_cycles if total_cycles else 0.0}

    ports = {}
    for t, value in enumerate(graph_op.operands):
        feeder = source.get(value)
        name = f"T{t}" if feeder is None else f"T{t} = {feeder[1]}"
        ports[t] = len(kernel.children)
        kernel.children.append(Node(f"{graph.name}/in:T{t}", name, "tensor",
                                    _format_label(value.type)))
    texts = _op_texts(graph, body_ops)
    first_block = len(kernel.children)
    position = {b.name: first_block + i for i, b in enumerate(graph.blocks)}
    path = critical_path(graph, {n: s.cycles for n, s in result.blocks.items()}) \
        if result is not None else None
    for block in graph.blocks:
        node = Node(f"{graph.name}/{block.name}", block.name, block.kind, _block_label(block),
                    locations[block.loc], texts[block.name], _json_attrs(block.attrs))
        if result is not None:
            node.stats = _block_stats(result.blocks[block.name], path)
        kernel.children.append(node)
    results = {}
    for r, value in enumerate(graph_op.results):
        results[r] = len(kernel.children)
        kernel.children.append(Node(f"{graph.name}/out:{r}", f"out{r}", "result",
                                    _format_label(value.type)))

    consumers = graph.consumers()
    steps = set(zip(path.blocks, path.blocks[1:])) if path is not None else set()
    for block in graph.blocks:
        src = position[block.name]
        tokens_out = result.blocks[block.name].tokens_out if result is not None else {}
        for channel in block.outputs:
            if channel in consumers:
                dst = consumers[channel].name
                kernel.edges.append(Edge(src, position[dst], channel,
                                         tokens_out.get(channel) if result is not None else None,
                                         (block.name, dst) in steps))
        if block.attrs.get("tensor") is not None:
            kernel.edges.append(Edge(ports[block.attrs["tensor"]], src))
        if block.kind in ("level_write", "value_write"):
            kernel.edges.append(Edge(src, results[block.attrs["result"]]))
    return kernel


def _op_texts(graph: BlockGraph, ops: list) -> dict[str, str]:
    """Each block's IR op, printed: the loader makes one block per op, in op order, plus the
    broadcasts, which show the op producing their stream."""
    loaded = [b for b in graph.blocks if b.kind != "broadcast"]
    if len(loaded) != len(ops) or any(OP_KINDS.get(op.name) != b.kind
                                      for b, op in zip(loaded, ops)):
        raise ViewError(f"kernel '{graph.name}': its blocks do not follow its sam ops in order "
                        "(the loader and the view disagree)")
    texts = {b.name: op.get_asm() for b, op in zip(loaded, ops)}
    producers = graph.producers()
    for block in graph.blocks:
        if block.kind == "broadcast":
            texts[block.name] = texts[producers[block.inputs[0]].name]
    return texts


def _block_stats(stats, path) -> dict:
    return {"cycles": stats.cycles, "steps": stats.steps,
            "tokens_in": sum(stats.tokens_in.values()),
            "tokens_out": sum(stats.tokens_out.values()),
            "ops": stats.ops, "bytes_read": stats.bytes_read,
            "bytes_written": stats.bytes_written,
            "channels_in": dict(stats.tokens_in), "channels_out": dict(stats.tokens_out),
            "critical": path.contribution.get(stats.name, 0), "share": path.share(stats.name)}


def _block_label(block) -> str:
    a = block.attrs
    if block.kind in ("scan", "locate"):
        return f"T{a['tensor']} level {a['level']}" if a.get("tensor") is not None \
            else f"dense {a.get('size')}"
    if block.kind == "array":
        return f"T{a['tensor']}"
    if block.kind == "alu":
        return a["op"] if a.get("scalar") is None else f"{a['op']} {a['scalar']:g}"
    if block.kind == "reduce":
        return a.get("kind", "sum")
    if block.kind == "level_write":
        return f"out{a['result']} level {a['level']}"
    if block.kind == "value_write":
        return f"out{a['result']} values"
    return ""


def _json_attrs(attrs: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}


def _format_label(t) -> str:
    """'16x8 dense,compressed' for a tensor type."""
    fmt = tensor_format(t)
    return "x".join(map(str, fmt.shape)) + " " + ",".join(lv.format for lv in fmt.levels)


class _Locations(dict):
    """Parsed locations by text: the blocks of a kernel mostly share a few locations."""

    def __missing__(self, text: str) -> SourceLocation:
        self[text] = parse_location(text)
        return self[text]

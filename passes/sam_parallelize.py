"""``sam-parallelize``: forks each ``sam.graph`` into the lanes its schedule asks for.

Driven by the ``parallel`` field of the graph's ``fuseflow.schedule`` (``[["d0", 4]]``: index
variable ``d0`` over 4 lanes; several entries nest, outermost first). For a variable ``v``
and factor ``P`` the pass

* keeps on the *spine* (unreplicated) what forms ``v``'s level: the scanners of ``v`` and the
  intersecters and unioners that join its coordinates, and everything above it;
* replicates per lane the *region* below: every op on a stream of ``v``'s level or deeper
  that can run on a share of ``v``'s coordinates (scanners below ``v``, repeaters,
  locators, joiners and accumulators of deeper levels, arrays, ALUs, reducers of deeper
  variables, inner forks and joins);
* forks (``sam.fork``, one per stream) each stream of ``v``'s level a lane op reads; streams
  above ``v`` are broadcast to every lane (read once per fiber: repeated inputs, locators'
  parents, reducers' outer coordinates);
* joins (``sam.join``, its order the coordinates of ``v``'s level, its depth the levels the
  stream lies below ``v``) each lane stream an op outside the region reads: the writers, a
  sparse accumulator that reduces a variable above ``v`` (its lanes would hold different
  coordinates of ``v`` per fiber of the reduced variable), a coordinate dropper whose outer
  level is ``v``'s or above (it would drop units of the join's order);
* gives a lane reducer the coordinates of the level above its input when a lane's fibers of
  ``v`` can be empty (``v``'s level is not dense with at least ``P`` coordinates), as
  ``sam-verify`` requires.

Before (SpMV ``y[i] = A[i,j] x[j]``, ``parallel = [["d0", 2]]``)::

    %i:2 = "sam.scan"(%root, %a) {fuseflow.index = "d0", level = 0 : i64} ...
    %j:2 = "sam.scan"(%i#1, %a) {fuseflow.index = "d1", level = 1 : i64} ...
    ... %p = "sam.alu"(...) {op = "mul"}; %y = "sam.reduce"(%p) {kind = "sum"}
    "sam.value_write"(%y) {result = 0 : i64}

After::

    %i:2 = "sam.scan"(%root, %a) {fuseflow.index = "d0", level = 0 : i64} ...
    %r:2 = "sam.fork"(%i#1) : (!sam.ref) -> (!sam.ref, !sam.ref)
    %j0:2 = "sam.scan"(%r#0, %a) ...     ... %y0 = "sam.reduce"(%p0) ...
    %j1:2 = "sam.scan"(%r#1, %a) ...     ... %y1 = "sam.reduce"(%p1) ...
    %y = "sam.join"(%i#0, %y0, %y1) {depth = 0 : i64} ...
    "sam.value_write"(%y) {result = 0 : i64}

The variable of each scanner's level is its ``fuseflow.index`` attribute, which
``fuseflow-lower-to-sam`` sets on graphs whose schedule asks for lanes; every other stream's
levels follow from its producer. Graphs that already hold a fork are left alone. Located
errors: a variable the graph does not iterate, a factor below 1, a variable that a reducer or
an accumulator reduces (lanes would hold partial results: the join restores order, it does
not add), a scanner without its ``fuseflow.index``, and a request that leaves nothing to
replicate. ``docs/parallel.md`` describes the lane policy and its load balance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR
from fuseflow.dialects.ir import find_ops, op_of
from fuseflow.dialects.naming import stable_names
from fuseflow.passes.base import Pass, PassFailure, emit_error
from fuseflow.passes.lowering.builder import INDEX_ATTR
from fuseflow.passes.schedule import ScheduleError, read_schedule
from fuseflow.passes.stream_control import structures

TENSOR = "t"
"""A model operand that is a graph block argument (a tensor), not a stream."""


class ParallelizeError(Exception):
    """A request the pass cannot apply; located at ``loc`` (an MLIR location)."""

    def __init__(self, loc, message: str):
        super().__init__(message)
        self.loc, self.message = loc, message


@dataclass
class Node:
    """One op of a graph body as plain data: operands are ``(TENSOR, arg)`` or a stream
    ``(node, result)``; ``types`` are MLIR types (or stream kinds, ``'crd'``, for a plan's
    ops); ``attrs`` MLIR attributes by name (a plan's scanners: ``{INDEX_ATTR: variable}``)."""

    name: str
    operands: list
    types: list
    attrs: dict
    loc: object

    @property
    def kind(self) -> str:
        return self.name.removeprefix("sam.")

    def results(self, index: int) -> list[tuple[int, int]]:
        return [(index, r) for r in range(len(self.types))]


@dataclass
class Model:
    """A graph body: its nodes in order and what the analyses know of each stream."""

    nodes: list[Node]
    structure: dict = field(default_factory=dict)
    """Stream -> its :class:`~fuseflow.passes.stream_control.Stream` (control structure)."""


# Reading and writing a graph body -------------------------------------------------------

def read_model(graph) -> Model:
    """The body of ``graph`` (a ``sam.graph`` op) as a :class:`Model`."""
    body = graph.regions[0].blocks[0]
    args = {arg: (TENSOR, i) for i, arg in enumerate(body.arguments)}
    values: dict = dict(args)
    nodes = []
    for op in [op_of(o) for o in body.operations]:
        if op.name == TERMINATOR:
            continue
        operands = [values[v] for v in op.operands]
        attrs = {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}
        nodes.append(Node(op.name, operands, [r.type for r in op.results], attrs, op.location))
        for r, value in enumerate(op.results):
            values[value] = (len(nodes) - 1, r)
    shapes = structures(graph)
    model = Model(nodes)
    model.structure = {values[v]: s for v, s in shapes.items() if v in values}
    return model


def write_model(graph, model: Model) -> None:
    """Replaces the body of ``graph`` by ``model``'s nodes, named by the stable naming rule
    around each op's origin."""
    body = graph.regions[0].blocks[0]
    ops = [op_of(o) for o in body.operations]
    terminator = ops[-1]
    for op in reversed(ops[:-1]):
        op.erase()
    args = list(body.arguments)
    made: list = []
    names = stable_names(n.name for n in model.nodes)
    with mlir.InsertionPoint(terminator):
        for node, name in zip(model.nodes, names):
            operands = [args[o[1]] if o[0] == TENSOR else made[o[0]].results[o[1]]
                        for o in node.operands]
            origin = node.loc.child_loc if isinstance(node.loc, mlir.ir.NameLoc) else node.loc
            attrs = {k: mlir.IntegerAttr.get(mlir.IntegerType.get_signless(64), v)
                     if isinstance(v, int) else v for k, v in node.attrs.items()}
            made.append(mlir.Operation.create(
                node.name, results=node.types, operands=operands, attributes=attrs,
                loc=mlir.Location.name(name, childLoc=origin)))


def plan_model(plan) -> Model:
    """The ops of a :class:`~fuseflow.passes.lowering.plan.KernelPlan` as a :class:`Model`
    (enough to ask which variables can be parallelized, no IR built)."""
    from fuseflow.passes.lowering.builder import TensorArg

    nodes = []
    for op in plan.ops:
        operands = [(TENSOR, v.index) if isinstance(v, TensorArg) else (v.op, v.result)
                    for v in op.operands]
        attrs = {INDEX_ATTR: op.index} if op.index is not None else {}
        nodes.append(Node(op.name, operands, list(op.results), attrs, op.origin))
    return Model(nodes)


def parallel_variables(plan) -> tuple[str, ...]:
    """The variables of ``plan``'s order whose level ``sam-parallelize`` can fork, outermost
    first (checked with 2 lanes; the factor does not change legality)."""
    model = plan_model(plan)
    found = []
    for var in plan.order:
        try:
            parallelize(model, var, 2, None)
        except ParallelizeError:
            continue
        found.append(var)
    return tuple(found)


# Analyses ---------------------------------------------------------------------------------

def index_variables(model: Model) -> dict:
    """Each stream's loop variables, outermost first (``()`` for the root's reference)."""
    vars_of: dict = {}
    for k, node in enumerate(model.nodes):
        streams = [o for o in node.operands if o[0] != TENSOR]
        ins = [vars_of[o] for o in streams]
        kind = node.kind
        if kind == "root":
            outs = [()]
        elif kind == "scan":
            if INDEX_ATTR not in node.attrs:
                raise ParallelizeError(node.loc, f"'sam.scan' op has no '{INDEX_ATTR}' "
                                       "attribute naming its index variable; lower the kernel "
                                       "with a 'parallel' schedule (fuseflow-lower-to-sam sets "
                                       "it)")
            var = node.attrs[INDEX_ATTR]
            var = var if isinstance(var, str) else mlir.StringAttr(var).value
            outs = [ins[0] + (var,)] * 2
        elif kind in ("locate", "repsiggen", "array", "alu", "fork"):
            outs = [ins[0]] * len(node.types)
        elif kind == "repeat":
            outs = [ins[1]]
        elif kind in ("intersect", "union"):
            outs = [ins[0]] * len(node.types)
        elif kind == "reduce":
            outs = [ins[0][:-1]]
        elif kind == "spacc":
            w, n = ins[-1], len(ins) - 1
            cut = len(w) - n - 1
            kept = w[:cut] + w[cut + 1:]
            outs = [kept[:cut + 1 + i] for i in range(n)] + [kept]
        elif kind == "crddrop":
            outs = [ins[0], ins[1]]
        elif kind == "crdhold":
            outs = [ins[0], ins[0]]
        elif kind == "join":
            outs = [ins[1]]
        else:                                   # writers
            outs = []
        for r, v in enumerate(outs):
            vars_of[(k, r)] = v
    return vars_of


def level_streams(model: Model) -> tuple[dict, dict]:
    """``(aligned, parent)``: for each stream, a coordinate stream of the structure of its
    innermost level, and one of the level above it (None where the producers do not tell)."""
    aligned: dict = {}
    parent: dict = {}
    for k, node in enumerate(model.nodes):
        ins = [o for o in node.operands if o[0] != TENSOR]
        kind = node.kind
        out = node.results(k)
        if kind == "scan":
            for o in out:
                aligned[o], parent[o] = out[0], aligned.get(ins[0])
        elif kind == "locate":
            for o in out:
                aligned[o], parent[o] = aligned.get(ins[0]), aligned.get(ins[1])
        elif kind in ("repsiggen", "array", "alu"):
            aligned[out[0]], parent[out[0]] = aligned.get(ins[0]), parent.get(ins[0])
        elif kind == "repeat":
            aligned[out[0]], parent[out[0]] = aligned.get(ins[1]), parent.get(ins[1])
        elif kind in ("intersect", "union"):
            for o in out:
                aligned[o], parent[o] = out[0], parent.get(ins[0])
        elif kind == "reduce":
            outer = ins[1] if len(ins) > 1 else parent.get(ins[0])
            aligned[out[0]], parent[out[0]] = outer, parent.get(outer) if outer else None
        elif kind == "spacc":
            crds = out[:-1]
            for i, o in enumerate(crds):
                aligned[o], parent[o] = o, crds[i - 1] if i else None
            aligned[out[-1]] = crds[-1]
            parent[out[-1]] = crds[-2] if len(crds) > 1 else None
        elif kind == "crddrop":
            aligned[out[0]], parent[out[0]] = out[0], out[1]
            aligned[out[1]], parent[out[1]] = out[1], parent.get(ins[1])
        elif kind == "crdhold":
            for o in out:
                aligned[o], parent[o] = out[0], parent.get(ins[0])
        elif kind == "join" and str(node.types[0]) in ("crd", "!sam.crd"):
            aligned[out[0]], parent[out[0]] = out[0], None
    return aligned, parent


# The transformation -----------------------------------------------------------------------

FORMATION = ("scan", "intersect", "union")
"""Ops that can form a variable's level (kept on the spine when they do)."""


def _reduced_variable(node: Node, vars_of: dict) -> str | None:
    """The variable a reducer or accumulator reduces (None for other ops)."""
    ins = [o for o in node.operands if o[0] != TENSOR]
    if node.kind == "reduce":
        return vars_of[ins[0]][-1]
    if node.kind == "spacc":
        w, n = vars_of[ins[-1]], len(ins) - 1
        return w[len(w) - n - 1]
    return None


def _deeper(vars_: tuple, var: str) -> bool:
    """A stream of a level below ``var``'s."""
    return var in vars_ and vars_[-1] != var


def _at(vars_: tuple, var: str) -> bool:
    """A stream of ``var``'s level."""
    return bool(vars_) and vars_[-1] == var


def parallelize(model: Model, var: str, lanes: int, loc) -> Model:
    """``model`` with ``var``'s level forked into ``lanes`` lanes (see the module doc)."""
    vars_of = index_variables(model)
    aligned, parent = level_streams(model)
    nodes = model.nodes
    if not any(n.kind == "scan" and _at(vars_of[(k, 0)], var) for k, n in enumerate(nodes)):
        raise ParallelizeError(loc, f"parallel variable {var}: no scanner enumerates its level")
    region = set()
    for k, node in enumerate(nodes):
        reduced = _reduced_variable(node, vars_of)
        if reduced == var:
            raise ParallelizeError(node.loc, f"parallel variable {var} is reduced here: lanes "
                                   "would hold partial results, which a join does not add; "
                                   "parallelize a variable that no reduction binds")
        outs = [vars_of[o] for o in node.results(k) if o in vars_of]
        ins = [vars_of[o] for o in node.operands if o[0] != TENSOR]
        if not any(var in v for v in outs):
            continue
        kind = node.kind
        if kind in FORMATION and _at(outs[0], var):
            continue                                    # forms var's level
        if kind == "crddrop" and not _deeper(ins[1], var):
            continue                                    # would drop units of the order
        if kind == "spacc" and reduced not in vars_of[node.operands[-1]][
                vars_of[node.operands[-1]].index(var) + 1:]:
            continue                                    # reduces a variable above var
        if kind == "join":
            continue                                    # the boundary of outer lanes
        region.add(k)
    consumers: dict[int, set[int]] = {}
    for k, node in enumerate(nodes):
        for o in node.operands:
            if o[0] != TENSOR:
                consumers.setdefault(o[0], set()).add(k)
    changed = True
    while changed:
        changed = False
        for k in sorted(region):
            node = nodes[k]
            streams = [o for o in node.operands if o[0] != TENSOR]
            spine = [o for o in streams if o[0] not in region]
            # a spine stream below var's level cannot be dealt to lanes
            stuck = any(_deeper(vars_of[o], var) for o in spine)
            # an op of var's level fed by the spine alone and read by the spine alone
            idle = (len(spine) == len(streams)
                    and not any(_deeper(vars_of[o], var) for o in node.results(k) if o in vars_of)
                    and not consumers.get(k, set()) & region)
            if stuck or idle:
                region.discard(k)
                changed = True
    if not region:
        raise ParallelizeError(loc, f"parallel variable {var}: nothing at or below its level "
                               "can run in lanes")
    return _replicate(model, var, lanes, region, vars_of, aligned, parent, loc)


def _lanes_may_be_empty(model: Model, crd, lanes: int) -> bool:
    """Whether a lane's fibers of the forked level (coordinates ``crd``) can be empty."""
    s = model.structure.get(crd)
    if s is None or not s.levels:
        return True
    key = s.levels[-1].key
    return not (key[0] == "dense" and key[1] >= lanes)


def _replicate(model: Model, var: str, lanes: int, region: set, vars_of: dict, aligned: dict,
               parent: dict, loc) -> Model:
    nodes = model.nodes
    out: list[Node] = []
    copies: dict = {}          # (original stream, lane) -> new stream
    spine: dict = {}           # original spine stream -> new stream
    forks: dict = {}           # original spine stream -> new fork node index
    joins: dict = {}           # original region stream -> new stream
    origin: dict = {}          # original region stream -> the spine crd of its forked level

    def emit(node: Node) -> int:
        out.append(node)
        return len(out) - 1

    def forked(o, lane):
        if o not in forks:
            new = spine[o]
            t = nodes[o[0]].types[o[1]]
            forks[o] = emit(Node("sam.fork", [new], [t] * lanes, {}, nodes[o[0]].loc))
        return (forks[o], lane)

    def in_lane(o, lane):
        if o[0] == TENSOR:
            return o
        if o[0] in region:
            return copies[(o, lane)]
        if _at(vars_of[o], var):
            return forked(o, lane)
        return spine[o]

    def order_of(o):
        crd = origin.get(o)
        if crd is None or crd[0] in region:
            raise ParallelizeError(nodes[o[0]].loc, f"parallel variable {var}: no coordinate "
                                   "stream of the forked level to join this op's lanes by")
        return spine[crd]

    def joined(o):
        if o not in joins:
            depth = len(vars_of[o]) - 1 - vars_of[o].index(var)
            attrs = {"depth": depth}
            lanes_in = [copies[(o, p)] for p in range(lanes)]
            joins[o] = (emit(Node("sam.join", [order_of(o)] + lanes_in,
                                  [nodes[o[0]].types[o[1]]], attrs, nodes[o[0]].loc)), 0)
        return joins[o]

    empty = {}
    for k, node in enumerate(nodes):
        if k not in region:
            operands = [o if o[0] == TENSOR else joined(o) if o[0] in region else spine[o]
                        for o in node.operands]
            index = emit(Node(node.name, operands, node.types, node.attrs, node.loc))
            for o, new in zip(node.results(k), (index,) * len(node.types)):
                spine[o] = (new, o[1])
            continue
        streams = [o for o in node.operands if o[0] != TENSOR]
        src = next((origin[o] for o in streams if o in origin), None)
        if src is None:
            src = next((aligned.get(o) for o in streams if _at(vars_of[o], var)), None)
        for o in node.results(k):
            origin[o] = src
        extra = []
        if node.kind == "reduce" and len(streams) == 1:
            if src not in empty:
                empty[src] = src is None or _lanes_may_be_empty(model, src, lanes)
            if empty[src]:
                outer = parent.get(streams[0])
                if outer is None:
                    raise ParallelizeError(node.loc, f"parallel variable {var}: no coordinates "
                                           "of the level above this reducer's input, which "
                                           "a lane's empty fibers need")
                extra = [outer]
        for lane in range(lanes):
            operands = [in_lane(o, lane) for o in node.operands + extra]
            index = emit(Node(node.name, operands, node.types, node.attrs, node.loc))
            for o in node.results(k):
                copies[(o, lane)] = (index, o[1])
    return Model(out)


# The pass ---------------------------------------------------------------------------------

def parallelize_graph(graph) -> None:
    """Applies the ``parallel`` field of ``graph``'s schedule, outermost variable first."""
    schedule = read_schedule(graph)
    if schedule is None or not schedule.parallel:
        return
    if any(True for _ in find_ops(graph, lambda op: op.name == "sam.fork")):
        return
    position = {v: i for i, v in enumerate(schedule.order)}
    for var, factor in schedule.parallel:
        if var not in position:
            raise ParallelizeError(graph.location, f"parallel variable {var} is not an index "
                                   f"variable of the graph ({', '.join(schedule.order)})")
        if factor < 1:
            raise ParallelizeError(graph.location, f"parallel factor {factor} of {var} must be "
                                   ">= 1")
    for var, factor in sorted(schedule.parallel, key=lambda p: position[p[0]]):
        if factor == 1:
            continue
        write_model(graph, parallelize(read_model(graph), var, factor, graph.location))


@dataclass(frozen=True)
class SamParallelizePass(Pass):
    """Forks each sam.graph's schedule's parallel levels into lanes, joined back in order."""

    ARGUMENT = "sam-parallelize"

    def run(self, module) -> None:
        failed = False
        for graph in find_ops(module, lambda op: op.name == "sam.graph"):
            try:
                parallelize_graph(graph)
            except (ParallelizeError, ScheduleError) as err:
                emit_error(err.loc or graph.location, err.message)
                failed = True
        if failed:
            raise PassFailure(f"{self.ARGUMENT}: see the located errors")

"""``fuseflow-partition``: groups the linalg ops of each function into ``fuse.kernel`` regions.

Before (``mode=unfused``)::

    %1 = linalg.generic {...} ins(%A, %B : ...) outs(%init : ...) -> tensor<4x3xf32>
    %2 = linalg.generic {...} ins(%1 : ...) outs(%e : ...) -> tensor<4x3xf32>

After::

    %k1 = "fuse.kernel"(%A, %B) ({
    ^bb0(%a: ..., %b: ...):
      %init = linalg.generic {...} ins(%cst : f32) ...   // fills and constants are cloned in
      %1 = linalg.generic {...} ins(%a, %b : ...) outs(%init : ...)
      gpu.yield %1 : tensor<4x3xf32>
    }) : (...) -> tensor<4x3xf32>
    %k2 = "fuse.kernel"(%k1) ({ ... })

``mode=full`` puts every compute op of a function into one kernel; ``mode=groups`` makes one
kernel per value of the ops' ``fuseflow.group`` attribute. A ``tensor.cast`` that gives a
kernel result its declared (sparse) type moves into the kernel with its producer.

A kernel's inputs and results are ordered by type (types in order of first use, values of one
type in order of first use): a container holds a run of equal consecutive types per slot
(:mod:`fuseflow.dialects.containers`), so this order needs one slot per distinct type and a
kernel of any size fits (a whole 12-decoder GPT-3 has about ten).
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, CapacityError, create_container
from fuseflow.dialects.containers import by_type
from fuseflow.passes.base import ChoiceEnum, Pass, emit_error
from fuseflow.passes.ir_utils import defining_op, funcs, is_trivial_producer, op_of, walk_nested


class PartitionMode(ChoiceEnum):
    """How linalg ops are grouped into kernels."""

    UNFUSED = "unfused"
    FULL = "full"
    GROUPS = "groups"


COMPUTE_DIALECTS = ("linalg.",)
GROUP_ATTR = "fuseflow.group"
"""String attribute naming the kernel a compute op belongs to (``mode=groups``)."""


def is_compute(op) -> bool:
    """A linalg op that becomes part of a kernel (fills are initializations, not compute)."""
    op = op_of(op)
    return op.name.startswith(COMPUTE_DIALECTS) and not is_trivial_producer(op)


def is_predicate(op) -> bool:
    """A compute op whose results are boolean (``i1``) tensors, e.g. ``mask == 0``.

    Booleans are not materialized between kernels: a predicate joins its first user's kernel,
    where the lowering fuses it into the ``select`` that reads it."""
    results = list(op_of(op).results)
    return bool(results) and all(
        isinstance(r.type, mlir.RankedTensorType)
        and str(mlir.RankedTensorType(r.type).element_type) == "i1" for r in results)


def _is_member(op) -> bool:
    """An op that belongs to some kernel: compute ops and the reshapes between them."""
    op = op_of(op)
    if is_trivial_producer(op) or op.name in ("func.return", "tensor.cast"):
        return False
    return any(isinstance(r.type, mlir.RankedTensorType) for r in op.results)


@dataclass(frozen=True)
class PartitionPass(Pass):
    """Groups linalg ops into fuse.kernel regions: one per op (``unfused``), one per function
    (``full``), or one per value of the ops' ``fuseflow.group`` attribute (``groups``; ops
    without it get a kernel each). Reshapes, and boolean predicates (``i1`` results, copied
    per use), join the kernel of their first user. A grouping
    whose kernels would depend on each other cyclically is rejected, naming the cycle."""

    ARGUMENT = "fuseflow-partition"
    mode: PartitionMode = PartitionMode.UNFUSED

    def run(self, module) -> None:
        for fn in funcs(module):
            body = fn.regions[0].blocks[0]
            _predicate_per_user(body)
            members = [op_of(o) for o in body.operations if _is_member(o)]
            if not any(is_compute(o) for o in members):
                continue
            groups = _form_groups(members, self.mode)
            order = _topological(groups)
            terminator = op_of(list(body.operations)[-1])
            for name in order:
                outline(groups[name], name, before=terminator)
            _erase_dead_trivial(body)


def _predicate_per_user(body) -> None:
    """Gives every use of a predicate its own copy, so that each joins its user's kernel."""
    for op in [op_of(o) for o in body.operations]:
        if not is_compute(op) or not is_predicate(op):
            continue
        uses = [(op_of(u.owner), u.operand_number, r) for r in op.results for u in r.uses]
        for user, number, result in uses[1:]:
            with mlir.InsertionPoint(op):
                copy = op.clone()                # placed just before the original
            user.operands[number] = copy.results[list(op.results).index(result)]


def _group_key(op, mode: PartitionMode, index: int) -> str:
    if mode is PartitionMode.FULL:
        return "k0"
    if mode is PartitionMode.GROUPS and GROUP_ATTR in op.attributes:
        attr = op.attributes[GROUP_ATTR]
        if not isinstance(attr, mlir.StringAttr):
            raise emit_error(op, f"'{GROUP_ATTR}' must be a string attribute, got {attr}")
        return attr.value
    return f"k{index}"


def _form_groups(members: list, mode: PartitionMode) -> dict[str, list]:
    """Kernel name -> its ops in block order."""
    key_of: dict = {}
    count = 0
    for op in members:
        if is_compute(op) and (mode is PartitionMode.FULL or not is_predicate(op)):
            key_of[op] = _group_key(op, mode, count)
            count += 1
    for op in reversed(members):     # reshapes and predicates join their first user's kernel
        if op in key_of:
            continue
        users = [op_of(u.owner) for r in op.results for u in r.uses]
        keyed = [key_of[u] for u in users if u in key_of]
        if not keyed:
            producers = [defining_op(v) for v in op.operands]
            keyed = [key_of[p] for p in producers if p in key_of]
        if not keyed:
            raise emit_error(op, f"'{op.name}' belongs to no kernel: it neither feeds nor reads "
                                 "a compute op")
        key_of[op] = keyed[0]
    groups: dict[str, list] = {}
    for op in members:
        groups.setdefault(key_of[op], []).append(op)
    return groups


def _topological(groups: dict[str, list]) -> list[str]:
    """Kernel names in dependence order; a cycle is an error naming it."""
    owner = {op: name for name, ops in groups.items() for op in ops}
    deps: dict[str, dict[str, object]] = {name: {} for name in groups}
    for name, ops in groups.items():
        for op in ops:
            for inner in [op] + walk_nested(op):
                for value in inner.operands:
                    producer = _through_casts(defining_op(value))
                    src = owner.get(producer)
                    if src is not None and src != name:
                        deps[name].setdefault(src, inner)
    order: list[str] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = stack[stack.index(name):] + [name]
            raise emit_error(groups[name][-1], "partition makes the kernel graph cyclic: "
                                               + " -> ".join(f"'{n}'" for n in cycle))
        state[name] = 1
        stack.append(name)
        for src in deps[name]:
            visit(src)
        stack.pop()
        state[name] = 2
        order.append(name)

    for name in groups:
        visit(name)
    return order


def _through_casts(op):
    """The op computing what ``op`` re-types: the producer behind a chain of ``tensor.cast``
    ops (which join their producer's kernel only when it is outlined, :func:`_absorb_casts`),
    or ``op`` itself."""
    while op is not None and op.name == "tensor.cast":
        op = defining_op(op.operands[0])
    return op


def _absorb_casts(group: list) -> list:
    """Adds the tensor.cast ops that re-type a group result to the group (in block order)."""
    extra = []
    for op in group:
        for result in op.results:
            for use in list(result.uses):
                user = op_of(use.owner)
                if user.name == "tensor.cast" and user not in extra and user not in group:
                    extra.append(user)
    if not extra:
        return group
    position = {op_of(o): i for i, o in enumerate(group[0].block.operations)}
    return sorted(group + extra, key=lambda op: position[op])


def outline(group: list, name: str, before):
    """Moves ``group`` (ops of one block, in block order) into a new ``fuse.kernel`` placed
    just before the op ``before`` (kernels are outlined in dependence order)."""
    group = _absorb_casts(group)
    members = set()
    for op in group:
        members.add(op)
        members.update(walk_nested(op))

    def inside(op) -> bool:
        return op in members

    # Values flowing in: operands defined outside the group (trivial producers are cloned).
    inputs, clones = [], []
    for op in [o for g in group for o in [g] + walk_nested(g)]:
        for value in op.operands:
            producer = defining_op(value)
            if producer is not None and inside(producer):
                continue
            if isinstance(value.owner, mlir.Block) and any(
                    value.owner == b for o in members for r in o.regions for b in r.blocks):
                continue
            if producer is not None and is_trivial_producer(producer):
                if producer not in clones:
                    clones.append(producer)
            elif value not in inputs:
                inputs.append(value)
    # Trivial producers may themselves read constants defined outside (fill of a constant).
    for producer in list(clones):
        for value in producer.operands:
            dep = defining_op(value)
            if dep is not None and is_trivial_producer(dep) and dep not in clones:
                clones.append(dep)
    clones = _dependencies_first(clones)

    outputs = []
    for op in group:
        for result in op.results:
            if any(not inside(op_of(u.owner)) for u in result.uses) and result not in outputs:
                outputs.append(result)
    if not outputs:
        raise emit_error(group[-1], "kernel computes nothing that is used outside it")
    inputs, outputs = (by_type(values, lambda v: str(v.type)) for values in (inputs, outputs))
    last = group[-1]
    with mlir.InsertionPoint(before), last.location:
        try:
            kernel, block = create_container("fuse.kernel", inputs, [v.type for v in outputs],
                                             {"name": mlir.StringAttr.get(name)})
        except CapacityError as err:
            raise emit_error(last, str(err)) from None
    for index, result in enumerate(outputs):
        for use in list(result.uses):
            user = op_of(use.owner)
            if not inside(user):
                user.operands[use.operand_number] = kernel.results[index]
    with mlir.InsertionPoint(block), kernel.location:
        terminator = mlir.Operation.create(TERMINATOR, operands=outputs)
    mapping = {v: block.arguments[i] for i, v in enumerate(inputs)}
    with mlir.InsertionPoint(op_of(terminator)):
        for producer in clones:
            copy = producer.clone()
            for i, res in enumerate(producer.results):
                mapping[res] = copy.results[i]
    for op in group:
        op.move_before(op_of(terminator))
    for op in [op_of(c) for c in block.operations] + [n for g in group for n in walk_nested(g)]:
        for i, value in enumerate(op.operands):
            if value in mapping:
                op.operands[i] = mapping[value]
    return kernel


def _dependencies_first(ops: list) -> list:
    """``ops`` reordered so that each op comes after the ops of the list it reads."""
    ordered: list = []

    def place(op):
        if op in ordered:
            return
        for value in op.operands:
            dep = defining_op(value)
            if dep is not None and dep in ops:
                place(dep)
        ordered.append(op)

    for op in ops:
        place(op)
    return ordered


def _erase_dead_trivial(block) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.operations)):
            op = op_of(op)
            if is_trivial_producer(op) and all(len(list(r.uses)) == 0 for r in op.results):
                op.erase()
                changed = True

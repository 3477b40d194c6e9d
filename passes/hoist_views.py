"""``fuseflow-hoist-views``: moves views of dense kernel inputs out of ``fuse.kernel`` regions.

Slicing, reshaping or transposing a dense tensor is address arithmetic, not dataflow: the
kernel can read the viewed tensor directly. This pass moves every *view* whose source is a
dense kernel input in front of its kernel, where the runtime executes it on the host
(:mod:`fuseflow.layout`), and passes the viewed tensor to the kernel instead. Views of views
are hoisted in turn. Views:

* ``tensor.extract_slice`` (static), ``tensor.expand_shape``, ``tensor.collapse_shape``;
* a *permutation copy*: a ``linalg.generic`` with one input, parallel loops, permutation
  indexing maps and a body that yields its input, which becomes a ``linalg.transpose``.

Before::

    %k = "fuse.kernel"(%qkv, %w) ({
    ^bb0(%a: tensor<8x6xf32>, %b: tensor<2x3x5xf32>):
      %s = tensor.extract_slice %a[0, 0] [8, 6] ...
      %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [8, 2, 3] ...
      %r = linalg.generic {...} ins(%e, %b : ...) ...
      gpu.yield %r
    })

After::

    %s = tensor.extract_slice %qkv[0, 0] [8, 6] ...
    %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [8, 2, 3] ...
    %k = "fuse.kernel"(%w, %e) ({
    ^bb0(%b: tensor<2x3x5xf32>, %v: tensor<8x2x3xf32>):
      %r = linalg.generic {...} ins(%v, %b : ...) ...
      gpu.yield %r
    })

A kernel left with nothing to compute (a kernel that only transposed) disappears; its
results are the hoisted views. Symmetrically, a kernel *result* that is a view of a dense
value the kernel computes (a head merge: transpose, then collapse_shape) is *sunk*: the
kernel yields the value and the view runs on the host after it. Views of sparse tensors and views between two fused ops stay
in the kernel (the lowering handles reshapes that only add or drop size-1 dimensions and
reports the others at their location).
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow import mlir
from fuseflow.dialects.builders import TERMINATOR, create_container
from fuseflow.passes.base import Pass
from fuseflow.passes.ir_utils import (
    build_transpose,
    funcs,
    generic_inputs,
    generic_outputs,
    is_trivial_producer,
    op_of,
)
from fuseflow.passes.lowering.einsum import is_row_major

RESHAPES = ("tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape")


def is_dense(tensor_type) -> bool:
    """A ranked tensor stored densely in row-major order (no encoding, or all-dense identity)."""
    return isinstance(tensor_type, mlir.RankedTensorType) and is_row_major(tensor_type)


def permutation_of(op) -> list[int] | None:
    """The ``linalg.transpose`` permutation equivalent to a permutation-copy generic, or None."""
    op = op_of(op)
    if op.name != "linalg.generic" or len(generic_inputs(op)) != 1 or len(op.results) != 1:
        return None
    if any("parallel" not in str(t) for t in mlir.ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    body = list(op.regions[0].blocks[0].operations)
    block_args = list(op.regions[0].blocks[0].arguments)
    if len(body) != 1 or list(body[0].operands) != [block_args[0]]:
        return None
    maps = [mlir.ir.AffineMapAttr(m).value for m in mlir.ir.ArrayAttr(op.attributes["indexing_maps"])]
    if not all(m.is_permutation for m in maps):
        return None
    in_dims = [mlir.ir.AffineDimExpr(r).position for r in maps[0].results]
    out_dims = [mlir.ir.AffineDimExpr(r).position for r in maps[1].results]
    return [in_dims.index(loop) for loop in out_dims]


@dataclass(frozen=True)
class HoistViewsPass(Pass):
    """Moves slices, reshapes and transposes of dense kernel inputs in front of their kernel."""

    ARGUMENT = "fuseflow-hoist-views"

    def run(self, module) -> None:
        for fn in funcs(module):
            body = fn.regions[0].blocks[0]
            for op in list(body.operations):
                if op_of(op).name == "fuse.kernel":
                    hoist_views(op_of(op))


def _hoistable(op, args: set) -> bool:
    source = list(op.operands)[0] if op.operands else None
    if source is None or source not in args or not is_dense(source.type):
        return False
    if op.name in RESHAPES:
        return op.name != "tensor.extract_slice" or len(list(op.operands)) == 1  # static only
    return permutation_of(op) is not None


def hoist_views(kernel) -> None:
    """Hoists the views of dense inputs of one ``fuse.kernel`` and sinks the views of its
    dense results (see the module docstring)."""
    while True:
        block = kernel.regions[0].blocks[0]
        args = set(block.arguments)
        view = next((op_of(o) for o in block.operations if _hoistable(op_of(o), args)), None)
        if view is None:
            break
        kernel = _hoist_one(kernel, view)
        if kernel is None:
            return
    while True:
        sink = _sinkable(kernel)
        if sink is None:
            return
        kernel = _sink_one(kernel, *sink)


def _sinkable(kernel):
    """(result index, view) of a kernel result that is a view of a dense value computed in
    the kernel and used by nothing else inside it, or None."""
    block = kernel.regions[0].blocks[0]
    terminator = op_of(list(block.operations)[-1])
    for index, value in enumerate(terminator.operands):
        view = value.owner
        if isinstance(view, mlir.Block):
            continue
        view = op_of(view)
        if view.name not in RESHAPES and permutation_of(view) is None:
            continue
        source = list(view.operands)[0]
        if source in set(block.arguments) or not is_dense(source.type) or \
                not is_dense(value.type) or len(list(value.uses)) != 1:
            continue
        if view.name == "tensor.extract_slice" and len(list(view.operands)) != 1:
            continue
        return index, view
    return None


def _sink_one(kernel, index: int, view):
    """``kernel`` yielding the source of ``view`` as result ``index``; the view runs after it."""
    block = kernel.regions[0].blocks[0]
    terminator = op_of(list(block.operations)[-1])
    yielded = list(terminator.operands)
    source = list(view.operands)[0]
    yielded[index] = source
    types = [r.type for r in kernel.results]
    types[index] = source.type
    attrs = {"name": kernel.attributes["name"]} if "name" in kernel.attributes else {}
    inputs = list(kernel.operands)
    with mlir.InsertionPoint(kernel):
        new, new_block = create_container("fuse.kernel", inputs, types, attrs, loc=kernel.location)
    with mlir.InsertionPoint(new_block), kernel.location:
        new_terminator = mlir.Operation.create(TERMINATOR, operands=yielded)
    for op in list(block.operations)[:-1]:
        op_of(op).move_before(new_terminator)
    for old_arg, new_arg in zip(block.arguments, new_block.arguments):
        old_arg.replace_all_uses_with(new_arg)
    outer = _host_copy(view, new.results[index], before=kernel)
    for i, result in enumerate(kernel.results):
        result.replace_all_uses_with(outer.results[0] if i == index else new.results[i])
    kernel.erase()
    _erase_view(view)
    return new


def _hoist_one(kernel, view):
    """Moves ``view`` in front of ``kernel``; returns the rebuilt kernel (None if it vanished)."""
    block = kernel.regions[0].blocks[0]
    arg_pos = list(block.arguments).index(list(view.operands)[0])
    source = list(kernel.operands)[arg_pos]
    outer = _host_copy(view, source, before=kernel)
    view.results[0].replace_all_uses_with(outer.results[0])
    _erase_view(view)
    return _rebuild(kernel, outer.results[0])


def _host_copy(view, source, before):
    """``view`` applied to ``source`` outside kernels, just before ``before`` (a permutation
    copy becomes a ``linalg.transpose``)."""
    with mlir.InsertionPoint(before), view.location:
        permutation = permutation_of(view)
        if permutation is None:
            outer = view.clone()
            outer.operands[0] = source
            return outer
        return build_transpose(source, view.results[0].type, permutation)


def _erase_view(view) -> None:
    """Erases ``view`` and the ``tensor.empty`` init of a permutation copy left unused."""
    outs = generic_outputs(view) if permutation_of(view) is not None else []
    view.erase()
    for init in outs:
        producer = init.owner
        if not isinstance(producer, mlir.Block) and is_trivial_producer(producer) and \
                not list(init.uses):
            op_of(producer).erase()


def _rebuild(kernel, hoisted):
    """``kernel`` with ``hoisted`` (now used inside it) as an extra input; results that just
    pass an input through are replaced by that input outside the kernel."""
    old_block = kernel.regions[0].blocks[0]
    terminator = op_of(list(old_block.operations)[-1])
    inputs = list(kernel.operands)
    outer_of = dict(zip(old_block.arguments, inputs))
    outer_of[hoisted] = hoisted
    yielded = list(terminator.operands)
    computed = [i for i, v in enumerate(yielded) if v not in outer_of]
    for i, value in enumerate(yielded):
        if i not in computed:
            kernel.results[i].replace_all_uses_with(outer_of[value])
    if not computed:
        kernel.erase()
        return None
    used_args = [a for a in old_block.arguments if list(a.uses)]
    new_inputs = [outer_of[a] for a in used_args]
    if list(hoisted.uses) and hoisted not in new_inputs:
        new_inputs.append(hoisted)
    attrs = {"name": kernel.attributes["name"]} if "name" in kernel.attributes else {}
    with mlir.InsertionPoint(kernel):
        new, block = create_container("fuse.kernel", new_inputs,
                                      [kernel.results[i].type for i in computed], attrs,
                                      loc=kernel.location)
    with mlir.InsertionPoint(block), kernel.location:
        new_terminator = mlir.Operation.create(TERMINATOR, operands=[yielded[i] for i in computed])
    for op in list(old_block.operations)[:-1]:
        op_of(op).move_before(new_terminator)
    inner_of = dict(zip(new_inputs, block.arguments))
    for arg in used_args:
        arg.replace_all_uses_with(inner_of[outer_of[arg]])
    for use in list(hoisted.uses):
        if _inside(op_of(use.owner), new):
            op_of(use.owner).operands[use.operand_number] = inner_of[hoisted]
    for new_index, old_index in enumerate(computed):
        kernel.results[old_index].replace_all_uses_with(new.results[new_index])
    kernel.erase()
    return new


def _inside(op, container) -> bool:
    parent = op.parent
    while parent is not None:
        if parent == container:
            return True
        parent = parent.parent
    return False

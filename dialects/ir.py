"""The one walker over MLIR operations, for the verifiers and the passes.

``walk`` visits the ops nested in an op's regions in pre-order; ``find_ops`` filters it. Both
take an OpView or an Operation and yield generic Operations.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator


def op_of(op):
    """The generic Operation behind an OpView or Operation."""
    return op.operation if hasattr(op, "operation") else op


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def op_key(op) -> int:
    """The address of the C++ operation behind ``op``: equal for every Python object of one
    op while it lives (the bindings' own hash is not), so a key for caches of live ops."""
    capsule = op_of(op)._CAPIPtr
    name = repr(capsule).split('"')[1].encode()
    return _capsule_pointer(capsule, name)


def walk(root, prune: Callable | None = None) -> Iterator:
    """The ops nested in ``root`` (not ``root`` itself), pre-order.

    An op for which ``prune`` holds is yielded but not entered.
    """
    for region in op_of(root).regions:
        for block in region.blocks:
            for child in block.operations:
                child = op_of(child)
                yield child
                if prune is None or not prune(child):
                    yield from walk(child, prune)


def find_ops(root, match: Callable, prune: Callable | None = None) -> Iterator:
    """The ops nested in ``root`` for which ``match`` holds, outermost first.

    Does not look inside a matched op, nor inside an op for which ``prune`` holds.
    """
    def stop(op) -> bool:
        return match(op) or (prune is not None and prune(op))

    return (op for op in walk(root, stop) if match(op))

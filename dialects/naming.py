"""Stable names of the ops in a ``sam.graph``: the one naming rule.

Each primitive op of a graph is named by its kind (the op name without ``sam.``) and its
index among the graph's ops of that kind, in emission order: ``root0``, ``scan0``, ``scan1``,
``alu0``, ... The lowering puts the name in the op's location (``loc("scan1"(<origin>))``,
an MLIR ``NameLoc`` around the location of the linalg op the op came from) and the simulator's
loader names each block after it, so a per-block statistic leads to its op and source line.
Plain data: no MLIR.
"""

from __future__ import annotations

from collections.abc import Iterable


def op_kind(op_name: str) -> str:
    """The kind of a dialect op: ``sam.scan`` -> ``scan``."""
    return op_name.partition(".")[2] or op_name


def stable_name(kind: str, index: int) -> str:
    """The name of the ``index``-th op of ``kind`` in a graph: ``scan3``."""
    return f"{kind}{index}"


def stable_names(op_names: Iterable[str]) -> list[str]:
    """The stable name of each op of a graph body, given the op names in emission order."""
    counts: dict[str, int] = {}
    names = []
    for op_name in op_names:
        kind = op_kind(op_name)
        names.append(stable_name(kind, counts.get(kind, 0)))
        counts[kind] = counts.get(kind, 0) + 1
    return names

"""The view model: a tree of nodes (model → kernels → primitives) with edges between siblings.

It is plain data, independent of MLIR and of the renderer: :mod:`fuseflow.viz.extract` builds
it from a compiled module, :mod:`fuseflow.viz.html` and :mod:`fuseflow.viz.dot` render it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

from fuseflow.viz.locations import SourceLocation

FORMAT_VERSION = 1
"""Version of the JSON the HTML view reads (:meth:`View.to_json`)."""


@dataclass
class Edge:
    """A stream or tensor between two sibling nodes (indices into the parent's children)."""

    src: int
    dst: int
    label: str = ""
    tokens: int | None = None
    """Tokens the stream carried in the simulation (None without one)."""
    critical: bool = False
    """Whether the edge is a step of the critical path (:mod:`fuseflow.viz.critical`)."""


@dataclass
class Node:
    """One box of the view: the model, a kernel, a primitive, or a tensor port.

    ``id`` is unique in the view and stable across runs (a path of names), ``kind`` is
    'model', 'kernel', 'input', 'output', 'tensor', 'result' or a block kind of
    :data:`fuseflow.sim.graph.BLOCK_KINDS`.
    """

    id: str
    name: str
    kind: str
    label: str = ""
    """A second line of text (an einsum, a tensor type)."""
    loc: SourceLocation | None = None
    op: str = ""
    """The IR op, printed."""
    attrs: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] | None = None
    """Simulation statistics (cycles, tokens, ops, bytes, critical-path share)."""
    children: list["Node"] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def walk(self) -> Iterator["Node"]:
        """This node and its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class View:
    """A whole view: its title and the model node."""

    title: str
    root: Node
    open: tuple[str, ...] = ()
    """Ids of the groups the page opens when it loads."""

    def to_json(self) -> dict[str, Any]:
        """The JSON the HTML view reads; locations are shared through a table."""
        locs: list[dict[str, Any]] = []
        index: dict[str, int] = {}

        def loc_ref(loc: SourceLocation | None) -> int:
            if loc is None:
                return -1
            if loc.text not in index:
                frame = loc.source_frame()
                index[loc.text] = len(locs)
                locs.append({"text": loc.text, "names": list(loc.names),
                             "frames": [[f.file, f.line, f.col] for f in loc.frames],
                             "source": [frame.file, frame.line] if frame else None,
                             "code": loc.source_line()})
            return index[loc.text]

        def node(n: Node) -> dict[str, Any]:
            out: dict[str, Any] = {"id": n.id, "name": n.name, "kind": n.kind}
            if n.label:
                out["label"] = n.label
            ref = loc_ref(n.loc)
            if ref >= 0:
                out["loc"] = ref
            if n.op:
                out["op"] = n.op
            if n.attrs:
                out["attrs"] = {k: _finite(v) for k, v in n.attrs.items()}
            if n.stats is not None:
                out["stats"] = n.stats
            if n.children:
                out["children"] = [node(c) for c in n.children]
                out["edges"] = [[e.src, e.dst, e.label, e.tokens, int(e.critical)] for e in n.edges]
            return out

        root = node(self.root)
        return {"version": FORMAT_VERSION, "title": self.title, "locs": locs, "root": root,
                "open": list(self.open)}


def _finite(value):
    """JSON has no infinities or NaN: such a float (an ALU's ``-inf`` scalar) becomes text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value

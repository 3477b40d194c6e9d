"""Graphviz DOT export of a :class:`~fuseflow.viz.model.View`: every kernel a cluster of its
blocks (all expanded), edges labelled with the tokens they carried when simulated."""

from __future__ import annotations

from fuseflow.viz.model import Node, View


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _label(node: Node) -> str:
    parts = [node.name]
    if node.label:
        parts.append(node.label)
    if node.stats and node.stats.get("cycles") is not None and node.kind not in ("model",):
        s = node.stats
        if node.kind == "kernel":
            parts.append(f"{s['total_cycles']} cycles")
        else:
            parts.append(f"{s['cycles']} cycles, {s['tokens_in']} -> {s['tokens_out']} tokens")
    return "\n".join(parts)


def render_dot(view: View) -> str:
    """The DOT text of ``view``."""
    out = [f"digraph {_quote(view.title)} {{", "  rankdir=TB;", "  compound=true;",
           '  node [shape=box, style="rounded,filled", fillcolor="#f4f6f8", fontname="Helvetica",'
           ' fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9, color="#7b8794"];']
    anchor: dict[str, str] = {}      # a kernel's id -> a node inside it, for model-level edges
    for child in view.root.children:
        _emit(child, out, anchor, "  ")
    _edges(view.root, out, anchor, "  ")
    out.append("}")
    return "\n".join(out) + "\n"


def _emit(node: Node, out: list[str], anchor: dict[str, str], indent: str) -> None:
    if not node.children:
        critical = node.stats and node.stats.get("critical")
        extra = ', color="#e65100", penwidth=2' if critical else ""
        out.append(f"{indent}{_quote(node.id)} [label={_quote(_label(node))}{extra}];")
        return
    out.append(f"{indent}subgraph {_quote('cluster_' + node.id)} {{")
    out.append(f'{indent}  label={_quote(_label(node))}; style="rounded,dashed"; color="#8a9bb3";')
    for child in node.children:
        _emit(child, out, anchor, indent + "  ")
    _edges(node, out, anchor, indent + "  ")
    out.append(f"{indent}}}")
    anchor[node.id] = anchor.get(node.children[0].id, node.children[0].id)


def _edges(node: Node, out: list[str], anchor: dict[str, str], indent: str) -> None:
    for e in node.edges:
        src, dst = node.children[e.src], node.children[e.dst]
        attrs = []
        if src.children:
            attrs.append(f"ltail={_quote('cluster_' + src.id)}")
        if dst.children:
            attrs.append(f"lhead={_quote('cluster_' + dst.id)}")
        label = e.label if e.tokens is None else f"{e.label} {e.tokens}".strip()
        if label:
            attrs.append(f"label={_quote(label)}")
        if e.critical:
            attrs.append('color="#e65100", penwidth=2')
        text = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"{indent}{_quote(anchor.get(src.id, src.id))} -> "
                   f"{_quote(anchor.get(dst.id, dst.id))}{text};")

"""Writes the sections drawn from :data:`fuseflow.dialects.primitives.PRIMITIVES` and
:data:`fuseflow.dialects.containers.CONTAINERS`.

Sections lie between ``BEGIN generated`` and ``END generated`` marker lines: the primitives'
IRDL declarations in ``dialects/sam.irdl.mlir``, the container ops' in both IRDL files, and the
op reference in ``docs/dialects.md``. All are checked in, so the IRDL files stay complete
dialect definitions that any MLIR tool loads without Python (``mlir-opt --irdl-file``) and
readers see the exact declarations; ``test/dialects/test_primitives.py`` fails when one
differs from the tables. After editing a table::

    python -m fuseflow.dialects.generate --write     # rewrite both sections
    python -m fuseflow.dialects.generate             # exit 1 and name stale files
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from fuseflow.dialects import containers
from fuseflow.dialects.alu import ALU_OPS
from fuseflow.dialects.primitives import PRIMITIVES, TENSOR, Attr, Port, Primitive

SOURCE_ROOT = Path(__file__).resolve().parents[1]
"""The repository root (this file is ``dialects/generate.py``)."""
COMMAND = "python -m fuseflow.dialects.generate --write"

_STREAM_VARS = {
    "ref": ["%ref = irdl.parametric @sam::@ref<>"],
    "crd": ["%crd = irdl.parametric @sam::@crd<>"],
    "repsig": ["%repsig = irdl.parametric @sam::@repsig<>"],
    "val": ["%e = irdl.any", "%t = irdl.any", "%val = irdl.parametric @sam::@val<%e, %t>"],
    TENSOR: ["%tensor = irdl.any"],
}
_ATTR_BASES = {"int": "#builtin.integer", "float": "#builtin.float", "string": "#builtin.string",
               "i64_array": "#builtin.dense_array"}
_ATTR_TYPE_TEXT = {"int": "integer", "float": "float", "string": "string",
                   "i64_array": "`array<i64: ...>`"}
_LISTED_VALUES = 4
"""Enum attributes with more values than this are listed in a table of their own."""
_TYPE_TEXT = {"ref": "`!sam.ref`", "crd": "`!sam.crd`", "repsig": "`!sam.repsig`",
              "val": "`!sam.val`", TENSOR: "tensor"}


# IRDL ---------------------------------------------------------------------------------------

def _port_vars(prim: Primitive) -> tuple[list[str], dict[tuple[str, ...], str]]:
    """Constraint variables of the ports (one per stream kind, one for a multi-kind port)."""
    lines: list[str] = []
    names: dict[tuple[str, ...], str] = {}
    for port in prim.operands + prim.results:
        if port.own_type:
            lines += [f"%e_{port.name} = irdl.any", f"%t_{port.name} = irdl.any",
                      f"%val_{port.name} = irdl.parametric @sam::@val<%e_{port.name}, "
                      f"%t_{port.name}>"]
            names[("own", port.name)] = f"val_{port.name}"
            continue
        for kind in port.kinds:
            if (kind,) not in names:
                lines += _STREAM_VARS[kind]
                names[(kind,)] = kind
        if port.kinds not in names:
            if "stream" in names.values():
                raise ValueError(f"{prim.op_name}: two multi-kind port types; IRDL needs one "
                                 "variable per type")
            lines.append(f"%stream = irdl.any_of({', '.join('%' + k for k in port.kinds)})")
            names[port.kinds] = "stream"
    return lines, names


def _ports_line(what: str, ports: tuple[Port, ...], names: dict) -> list[str]:
    if not ports:
        return []
    items = [f"{p.name}: {'' if p.arity == 'single' else p.arity + ' '}"
             f"%{names[('own', p.name) if p.own_type else p.kinds]}" for p in ports]
    return [f"irdl.{what}({', '.join(items)})"]


def _attr_lines(attr: Attr) -> list[str]:
    if not attr.values:
        return [f'%{attr.name} = irdl.base "{_ATTR_BASES[attr.type]}"']
    lines = [f'%{attr.name}_{v} = irdl.is "{v}"' for v in attr.values]
    members = ", ".join(f"%{attr.name}_{v}" for v in attr.values)
    return lines + [f"%{attr.name} = irdl.any_of({members})"]


def _comment(text: str) -> list[str]:
    return ["// " + line for line in textwrap.wrap(text, 92)]


def irdl_operation(prim: Primitive) -> str:
    """The ``irdl.operation`` of one primitive, indented for the ``@sam`` dialect body."""
    head = _comment(prim.summary)
    optional = [a for a in prim.attributes if a.optional]
    if optional:
        listed = ", ".join(f'"{a.name}" ({a.type})' for a in optional)
        head += _comment(f"Optional attributes (IRDL cannot declare them; dialects/verify.py "
                         f"checks them): {listed}.")
    body, names = _port_vars(prim)
    required = [a for a in prim.attributes if not a.optional]
    for attr in required:
        body += _attr_lines(attr)
    body += _ports_line("operands", prim.operands, names)
    body += _ports_line("results", prim.results, names)
    if required:
        body.append("irdl.attributes { " + ", ".join(f'"{a.name}" = %{a.name}' for a in required)
                    + " }")
    lines = head + [f"irdl.operation @{prim.name} {{"] + ["  " + b for b in body] + ["}"]
    return "\n".join("  " + line for line in lines)


def irdl_section() -> str:
    """The generated IRDL of every primitive."""
    return "\n\n".join(irdl_operation(p) for p in PRIMITIVES)


def _wrapped_list(head: str, items: list[str], indent: str) -> list[str]:
    """``head(item, item, ...)`` broken into lines of at most 100 columns."""
    lines, line = [], f"{indent}{head}("
    for index, item in enumerate(items):
        text = item + (")" if index == len(items) - 1 else ",")
        if len(line) + 1 + len(text) > 100:
            lines.append(line)
            line = indent + "    " + text
        else:
            line += ("" if line.endswith("(") else " ") + text
    return lines + [line]


def irdl_container(container: containers.Container) -> str:
    """The ``irdl.operation`` of a container op (indented for its dialect body)."""
    indent = "    "
    head = _comment(container.summary) + _comment(
        f"Any number of inputs and results of any types: slot k holds the k-th run of equal "
        f"consecutive types (IRDL binds a variable to one type per op, across a variadic's "
        f"elements too), so {containers.INPUT_SLOTS} input and {containers.RESULT_SLOTS} "
        f"result slots cap the runs, not the values (dialects/containers.py).")
    body = [f"{indent}%in{i} = irdl.any" for i in range(containers.INPUT_SLOTS)]
    body += [f"{indent}%out{i} = irdl.any" for i in range(containers.RESULT_SLOTS)]
    body += _wrapped_list("irdl.operands", [f"in{i}: variadic %in{i}"
                                            for i in range(containers.INPUT_SLOTS)], indent)
    body += _wrapped_list("irdl.results", [f"out{i}: variadic %out{i}"
                                           for i in range(containers.RESULT_SLOTS)], indent)
    body += [f"{indent}%body = irdl.region with size 1", f"{indent}irdl.regions(body: %body)"]
    return "\n".join(["  " + line for line in head]
                     + [f"  irdl.operation @{container.name} {{"] + body + ["  }"])


def container_section(dialect: str):
    """The generated IRDL of ``dialect``'s container op."""
    def make() -> str:
        return "\n\n".join(irdl_container(c) for c in containers.CONTAINERS
                            if c.dialect == dialect)
    return make


# Docs ---------------------------------------------------------------------------------------

def _port_text(port: Port) -> str:
    kind = " or ".join(_TYPE_TEXT[k] for k in port.kinds)
    notes = []
    if port.arity == "optional":
        notes.append("optional")
    elif port.arity == "variadic":
        notes.append(f"variadic, at least {port.min_count}" if port.min_count else "variadic")
    note = f" ({', '.join(notes)})" if notes else ""
    doc = f" — {port.doc}" if port.doc else ""
    return f"`{port.name}`: {kind}{note}{doc}"


def _attr_text(attr: Attr) -> str:
    kind = _ATTR_TYPE_TEXT[attr.type]
    if len(attr.values) > _LISTED_VALUES:
        kind = "string, one of the table below"
    elif attr.values:
        kind = "one of " + ", ".join(f'`"{v}"`' for v in attr.values)
    presence = "required" if not attr.optional else (
        "optional" if attr.default is None else f"optional, default {attr.default}")
    return f"`{attr.name}`: {kind}, {presence} — {attr.doc}"


def _alu_table() -> list[str]:
    rows = ["| `op` | operands | computes |", "| --- | --- | --- |"]
    operands = {"binary": "a, b", "unary": "x", "scalar": "x, `scalar`", "masked": "m, x, `scalar`"}
    rows += [f"| `{op.name}` | {operands[op.family]} | {op.doc} |" for op in ALU_OPS]
    return rows


def docs_primitive(prim: Primitive) -> str:
    """The reference entry of one primitive (markdown)."""
    lines = [f"### `{prim.op_name}`", "", " ".join(filter(None, (prim.summary, prim.description))),
             ""]
    for title, items in (("Operands", [_port_text(p) for p in prim.operands]),
                         ("Results", [_port_text(p) for p in prim.results]),
                         ("Attributes", [_attr_text(a) for a in prim.attributes])):
        if items:
            lines += [f"*{title}*:", ""] + [f"- {item}" for item in items] + [""]
    if prim.name == "alu":
        lines += _alu_table() + [""]
    if prim.verifier:
        lines += [f"*Verifier*: {prim.verifier}", ""]
    lines += ["```mlir", *prim.examples, "```"]
    return "\n".join(lines)


def docs_section() -> str:
    """The generated op reference of every primitive."""
    return "\n\n".join(docs_primitive(p) for p in PRIMITIVES)


# Files --------------------------------------------------------------------------------------

def _markers(comment: str, source: str = "primitives") -> tuple[str, str]:
    return (f"{comment} BEGIN generated from dialects/{source}.py by `{COMMAND}`",
            f"{comment} END generated from dialects/{source}.py")


GENERATED = (
    ("dialects/fuse.irdl.mlir", container_section("fuse"), _markers("  //", "containers")),
    ("dialects/sam.irdl.mlir", container_section("sam"), _markers("  //", "containers")),
    ("dialects/sam.irdl.mlir", irdl_section, _markers("  //")),
    ("docs/dialects.md", docs_section, tuple(f"<!--{m} -->" for m in _markers(""))),
)
"""Sections: (path relative to the source root, section text, (begin marker, end marker))."""


def splice(text: str, section: str, begin: str, end: str) -> str:
    """``text`` with the lines between the ``begin`` and ``end`` marker lines replaced."""
    lines = text.split("\n")
    if begin not in lines or end not in lines:
        raise ValueError(f"markers not found: '{begin}' ... '{end}'")
    start, stop = lines.index(begin), lines.index(end)
    return "\n".join(lines[:start + 1] + section.split("\n") + lines[stop:])


def _regenerated(root: Path) -> dict[str, tuple[str, str]]:
    """Path -> (text on disk, text with every section regenerated)."""
    texts: dict[str, tuple[str, str]] = {}
    for rel, make, (begin, end) in GENERATED:
        old, new = texts.get(rel) or ((root / rel).read_text(),) * 2
        texts[rel] = (old, splice(new, make(), begin, end))
    return texts


def stale(root: Path = SOURCE_ROOT) -> list[str]:
    """The generated files under ``root`` with a section that differs from the tables."""
    return [rel for rel, (old, new) in _regenerated(root).items() if old != new]


def write(root: Path = SOURCE_ROOT) -> list[str]:
    """Rewrites every stale generated section under ``root``; returns the files changed."""
    changed = []
    for rel, (old, new) in _regenerated(root).items():
        if old != new:
            (root / rel).write_text(new)
            changed.append(rel)
    return changed


def main(argv: list[str] | None = None) -> int:
    """Command line: check (default) or ``--write`` the generated sections."""
    parser = argparse.ArgumentParser(prog="python -m fuseflow.dialects.generate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite stale sections")
    parser.add_argument("--root", type=Path, default=SOURCE_ROOT, help="repository root")
    args = parser.parse_args(argv)
    files = write(args.root) if args.write else stale(args.root)
    verb = "rewrote" if args.write else "stale"
    for rel in files:
        sys.stderr.write(f"{verb}: {rel}\n")
    return 0 if args.write or not files else 1


if __name__ == "__main__":
    sys.exit(main())

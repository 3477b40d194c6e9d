"""``fuseflow-opt``: ``mlir-opt`` for FuseFlow's dialects and passes.

Reads MLIR from a file or stdin, verifies it (MLIR's verifier and
:mod:`fuseflow.dialects.verify`), runs a pipeline that may mix upstream passes and FuseFlow's
Python passes (:mod:`fuseflow.pipeline`), and prints the result. Errors are MLIR diagnostics
printed as ``file:line:col: error: message`` with a non-zero exit. See ``docs/fuseflow-opt.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import pkgutil
import re
import sys
import traceback
import typing
from collections import Counter
from dataclasses import dataclass

from fuseflow import mlir, textcheck
from fuseflow.dialects import verify
from fuseflow.errors import FuseFlowError
from fuseflow.passes import registry
from fuseflow.passes.base import ChoiceEnum, Pass, PipelineError
from fuseflow.pipeline import Pipeline

TOOL = "fuseflow-opt"
SPLIT_MARKER = "// -----"
STDIN_NAME = "<stdin>"
# Module.parse names its buffer "-"; locations are renamed to the input's name after parsing.
PARSER_BUFFER_NAME = "-"
# mlir-opt turns this note off under --verify-diagnostics; the bindings cannot, so it is dropped.
CURRENT_OP_NOTE = "see current operation:"
REPRODUCER_RESOURCE = "mlir_reproducer"
PASS_PREFIXES = ("fuseflow-", "sam-")

_SEVERITIES = {
    mlir.ir.DiagnosticSeverity.ERROR: "error",
    mlir.ir.DiagnosticSeverity.WARNING: "warning",
    mlir.ir.DiagnosticSeverity.REMARK: "remark",
    mlir.ir.DiagnosticSeverity.NOTE: "note",
}


class UsageError(FuseFlowError):
    """A bad command line: the message is printed after the tool name."""


# Diagnostics.

@dataclass(frozen=True)
class Diag:
    """A diagnostic copied out of MLIR: severity, source position (or none) and message."""

    severity: str
    file: str | None
    line: int
    col: int
    message: str
    notes: tuple["Diag", ...] = ()

    @classmethod
    def from_mlir(cls, diag, buffer_name: str) -> "Diag":
        """Copies an ``ir.Diagnostic``/``DiagnosticInfo``; parser positions get ``buffer_name``."""
        position = _file_line_col(diag.location)
        file, line, col = position if position else (None, 0, 0)
        if file == PARSER_BUFFER_NAME:
            file = buffer_name
        notes = tuple(cls.from_mlir(n, buffer_name) for n in diag.notes)
        return cls(_SEVERITIES[diag.severity], file, line, col, str(diag.message), notes)

    def flatten(self) -> list["Diag"]:
        """This diagnostic and its notes, as mlir-opt's verifier sees them."""
        return [self] + [n for n in self.notes if not n.message.startswith(CURRENT_OP_NOTE)]


_LOCATION_KINDS = (mlir.ir.FileLineColLoc, mlir.ir.NameLoc, mlir.ir.CallSiteLoc, mlir.ir.FusedLoc)


def _file_line_col(loc) -> tuple[str, int, int] | None:
    """The first file position in ``loc`` (diagnostics carry generic ``Location`` objects)."""
    for kind in _LOCATION_KINDS:
        if loc.typeid == kind.static_typeid:
            loc = kind(loc)
            break
    if isinstance(loc, mlir.ir.FileLineColLoc):
        return loc.filename, loc.start_line, loc.start_col
    if isinstance(loc, mlir.ir.NameLoc):
        return _file_line_col(loc.child_loc)
    if isinstance(loc, mlir.ir.CallSiteLoc):
        return _file_line_col(loc.callee)
    if isinstance(loc, mlir.ir.FusedLoc):
        for inner in loc.locations:
            found = _file_line_col(inner)
            if found:
                return found
    return None


class Source:
    """An input buffer: its name and lines, for printing diagnostics with their source line."""

    def __init__(self, name: str, text: str):
        self.name = name
        self.lines = text.splitlines()

    def format(self, diag: Diag, severity: str | None = None, message: str | None = None) -> str:
        """``file:line:col: severity: message``, the source line and a caret, then the notes."""
        severity, message = severity or diag.severity, message or diag.message
        if diag.file is None:
            text = f"<unknown>: {severity}: {message}\n"
        else:
            text = f"{diag.file}:{diag.line}:{diag.col}: {severity}: {message}\n"
            if diag.file == self.name and 0 < diag.line <= len(self.lines):
                source = self.lines[diag.line - 1]
                text += source + "\n" + " " * max(diag.col - 1, 0) + "^\n"
        return text + "".join(self.format(note) for note in diag.notes)


# --verify-diagnostics: expected-* comments, as in mlir-opt.

_EXPECTED = re.compile(
    r"expected-(error|warning|remark|note)(-re)?\s*(?:@(above|below|unknown|[+-]\d+))?\s*"
    r"\{\{(.*)\}\}\s*$")


@dataclass
class Expected:
    """One ``// expected-<severity> @<where> {{message}}`` comment."""

    severity: str
    at: tuple[int, int]       # line and column of the comment itself
    line: int | None          # the line it designates; None for @unknown (no source position)
    pattern: re.Pattern
    text: str
    seen: bool = False

    def matches(self, diag: Diag, file: str) -> bool:
        if self.seen or self.severity != diag.severity:
            return False
        if diag.file is None:
            position_ok = self.line is None
        else:
            position_ok = diag.file == file and diag.line == self.line
        return position_ok and self.pattern.search(diag.message) is not None


def _expected_pattern(text: str, is_regex: bool) -> re.Pattern:
    if not is_regex:
        return re.compile(re.escape(text))
    # As in FileCheck: literal text with {{regex}} parts.
    parts = re.split(r"\{\{(.*?)\}\}", text)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def parse_expected(lines: list[str], first_line: int) -> list[Expected]:
    """The expectations in ``lines`` (numbered from ``first_line``), designators resolved.

    ``@below`` means the next line with no expected-* comment, ``@above`` the previous one.
    """
    found, below, last_plain = [], [], None
    for index, line in enumerate(lines):
        number = first_line + index
        match = _EXPECTED.search(line)
        if match is None:
            for exp in below:
                exp.line = number
            below.clear()
            last_plain = number
            continue
        severity, regex, where, text = match.groups()
        exp = Expected(severity, (number, match.start() + 1), number,
                       _expected_pattern(text, bool(regex)), text)
        if where == "below":
            below.append(exp)
        elif where == "above":
            exp.line = last_plain
        elif where == "unknown":
            exp.line = None
        elif where:
            exp.line = number + int(where)
        found.append(exp)
    return found


def check_expected(diags: list[Diag], expected: list[Expected], source: Source) -> list[str]:
    """Matches emitted diagnostics with expectations; the report of every mismatch."""
    report = []
    for diag in (d for top in diags for d in top.flatten()):
        match = next((e for e in expected if e.matches(diag, source.name)), None)
        if match is None:
            bare = dataclasses.replace(diag, notes=())
            report.append(source.format(bare, "error",
                                        f"unexpected {diag.severity}: {diag.message}"))
        else:
            match.seen = True
    for exp in expected:
        if not exp.seen:
            at = Diag("error", source.name, exp.at[0], exp.at[1], "")
            report.append(source.format(at, "error",
                                        f'expected {exp.severity} "{exp.text}" was not produced'))
    return report


# Input splitting and parsing.

@dataclass(frozen=True)
class Chunk:
    """A piece of the input (all of it unless splitting) and the line it starts on."""

    first_line: int
    lines: list[str]

    def text(self) -> str:
        """The chunk, preceded by blank lines so that parser positions are input positions."""
        return "\n" * (self.first_line - 1) + "\n".join(self.lines) + "\n"


def split_input(text: str, marker: str | None) -> list[Chunk]:
    """Splits ``text`` at lines starting with ``marker`` (one chunk if ``marker`` is None)."""
    lines = text.splitlines()
    if marker is None:
        return [Chunk(1, lines)]
    chunks, start = [], 0
    for index, line in enumerate(lines):
        if line.lstrip().startswith(marker):
            chunks.append(Chunk(start + 1, lines[start:index]))
            start = index + 1
    chunks.append(Chunk(start + 1, lines[start:]))
    return chunks


def rename_locations(op, old: str, new: str) -> None:
    """Renames the file of every ``old`` file location of ``op`` and everything nested in it."""
    def renamed(loc):
        if isinstance(loc, mlir.ir.FileLineColLoc) and loc.filename == old:
            return mlir.Location.file(new, loc.start_line, loc.start_col, context=loc.context)
        return None

    loc = renamed(op.location)
    if loc is not None:
        op.location = loc
    for region in op.regions:
        for block in region.blocks:
            for arg in block.arguments:
                loc = renamed(arg.location)
                if loc is not None:
                    arg.set_location(loc)
            for child in block.operations:
                rename_locations(child.operation, old, new)


# Crash reproducers: the input IR plus the pipeline, in MLIR's external-resource form.

_RESOURCES = re.compile(r"\{-#(.*?)#-\}", re.DOTALL)
_PIPELINE_ENTRY = re.compile(r'pipeline\s*:\s*"((?:[^"\\]|\\.)*)"')
_VERIFY_ENTRY = re.compile(r"verify_each\s*:\s*(true|false)")


@dataclass(frozen=True)
class Reproducer:
    """What replays a failure: the pipeline and whether the verifier ran after each pass."""

    pipeline: str
    verify_each: bool = True

    def render(self, module_asm: str, path: str) -> str:
        """The reproducer file: a replay hint, the module, and the pipeline as a resource."""
        escaped = self.pipeline.replace("\\", "\\\\").replace('"', '\\"')
        return (f"// Replay with: {TOOL} --run-reproducer {path}\n{module_asm.rstrip()}\n\n"
                "{-#\n  external_resources: {\n"
                f"    {REPRODUCER_RESOURCE}: {{\n"
                f'      pipeline: "{escaped}",\n'
                "      disable_threading: true,\n"
                f"      verify_each: {'true' if self.verify_each else 'false'}\n"
                "    }\n  }\n#-}\n")

    @classmethod
    def extract(cls, text: str) -> tuple["Reproducer", str]:
        """Reads the reproducer resource of ``text``; returns it and the text without it."""
        for block in _RESOURCES.finditer(text):
            body = block.group(1)
            pipeline = _PIPELINE_ENTRY.search(body)
            if REPRODUCER_RESOURCE not in body or pipeline is None:
                continue
            verify_each = _VERIFY_ENTRY.search(body)
            reproducer = cls(re.sub(r"\\(.)", r"\1", pipeline.group(1)),
                             verify_each is None or verify_each.group(1) == "true")
            # Blank the resource out line for line, so positions in the IR stay the same.
            blank = "\n" * block.group(0).count("\n")
            return reproducer, text[:block.start()] + blank + text[block.end():]
        raise UsageError(f"no '{REPRODUCER_RESOURCE}' pipeline resource in the input")


# Options.

@dataclass
class Options:
    """What one fuseflow-opt run does; filled from the command line."""

    input: str = "-"
    output: str = "-"
    pipeline: str = ""
    split_marker: str | None = None
    verify_diagnostics: bool = False
    print_ir_after_all: bool = False
    print_ir_before_all: bool = False
    print_ir_after_change: bool = False
    print_ir_after_failure: bool = False
    print_ir_tree_dir: str | None = None
    pass_statistics: bool = False
    allow_unregistered_dialect: bool = False
    dump_pass_pipeline: bool = False
    print_generic: bool = False
    print_debuginfo: bool = False
    timing: bool = False
    verify_each: bool = True
    verify_on_parse: bool = True
    reproducer: str | None = None
    run_reproducer: bool = False


class _Bool(ChoiceEnum):
    TRUE = "true"
    FALSE = "false"


def _parse_bool(text: str, flag: str) -> bool:
    try:
        return _Bool.parse(text, flag) is _Bool.TRUE
    except PipelineError as err:
        raise UsageError(str(err)) from None


def _build_parser() -> tuple[argparse.ArgumentParser, set[str]]:
    """The parser of the tool's own flags, and their names (without dashes)."""
    parser = argparse.ArgumentParser(
        prog=TOOL, add_help=False, allow_abbrev=False,
        description="Runs FuseFlow and upstream MLIR passes on MLIR input, like mlir-opt. "
                    "Every FuseFlow pass and named pipeline is also a flag: "
                    "--<pass> or --<pass>='key=value key2=value2' (see --list-passes).")
    names: set[str] = set()

    def add(*flags, **kwargs):
        names.update(f[2:] for f in flags if f.startswith("--"))
        parser.add_argument(*flags, **kwargs)

    add("input", nargs="?", default="-", help="input file ('-' for stdin, the default)")
    add("-o", dest="output", default="-", metavar="FILE",
        help="output file (default: stdout); also -o=FILE")
    add("--pass-pipeline", default=None, metavar="PIPELINE",
        help="pipeline in mlir-opt syntax, e.g. 'builtin.module(canonicalize,sam-verify)'")
    add("--split-input-file", default=None, metavar="MARKER",
        help=f"process chunks separated by '{SPLIT_MARKER}' lines (or =MARKER) independently")
    add("--verify-diagnostics", action="store_true",
        help="check emitted diagnostics against // expected-error comments")
    add("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass")
    add("--mlir-print-ir-before-all", action="store_true", help="print the IR before every pass")
    add("--mlir-print-ir-after-change", action="store_true",
        help="print the IR after every pass that changed it")
    add("--mlir-print-ir-after-failure", action="store_true",
        help="print the IR after the pass that failed")
    add("--mlir-print-ir-tree-dir", default=None, metavar="DIR",
        help="write the IR dumps of the --mlir-print-ir-* flags to files under DIR "
             "(one folder per operation) instead of stderr")
    add("--mlir-pass-statistics", action="store_true",
        help="report what each pass changed (operation counts by name) on stderr")
    add("--allow-unregistered-dialect", action="store_true",
        help="accept operations of dialects that are not registered")
    add("--show-dialects", action="store_true", help="list the registered dialects and exit")
    add("--dump-pass-pipeline", action="store_true",
        help="print the pipeline (named pipelines expanded) on stderr before running it")
    add("--version", action="store_true", help="print the version and exit")
    add("--mlir-print-op-generic", action="store_true", help="print ops in generic form")
    add("--mlir-print-debuginfo", action="store_true", help="print source locations")
    add("--mlir-timing", action="store_true", help="report the time taken by each pass")
    add("--verify-each", default="true", metavar="BOOL",
        help="=false skips the verifiers after each pass and at the end (default: true)")
    add("--no-fuseflow-verify-on-parse", action="store_true",
        help="skip FuseFlow's dialect verifiers after parsing (MLIR's verifier still runs)")
    add("--mlir-pass-pipeline-crash-reproducer", default=None, metavar="FILE",
        help="on a pass failure, write the input IR and pipeline to FILE")
    add("--run-reproducer", action="store_true",
        help="run the pipeline stored in the input (a reproducer file)")
    add("--list-passes", action="store_true", help="list FuseFlow passes and named pipelines")
    add("-h", "--help", action="store_true", help="show this help")
    return parser, names


def _is_upstream_pass(name: str) -> bool:
    try:
        mlir.PassManager.parse(f"builtin.module({name})", context=mlir.Context())
    except ValueError:
        return False
    return True


# Flags whose value, as in mlir-opt, can only be given after '=' (the bare flag means this).
_BARE_FLAG_VALUES = {"--split-input-file": SPLIT_MARKER, "--verify-each": "true"}


def _normalize_spellings(argv: list[str]) -> list[str]:
    """mlir-opt's spellings in argparse's form: ``-o=FILE`` becomes ``-o FILE``,
    ``-name`` becomes ``--name``, a bare ``--split-input-file`` or ``--verify-each`` gets its
    default value, and ``--split-input-file MARKER`` takes the next argument as its marker when
    that starts with ``//`` and names no existing file (markers are comment lines)."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg.startswith("-o="):
            out += ["-o", arg[3:]]
            continue
        if len(arg) > 2 and arg[0] == "-" and arg[1] != "-":
            arg = "-" + arg  # like mlir-opt, accept -name for --name
        if arg == "--split-input-file" and i < len(argv) and argv[i].startswith("//") \
                and not os.path.exists(argv[i]):
            arg = f"{arg}={argv[i]}"
            i += 1
        elif arg in _BARE_FLAG_VALUES:
            arg = f"{arg}={_BARE_FLAG_VALUES[arg]}"
        out.append(arg)
    return out


def _split_pass_flags(argv: list[str], tool_flags: set[str]) -> tuple[list[str], list[str]]:
    """Separates pass flags (``--name`` or ``--name=options``, in order) from tool arguments."""
    rest, passes = [], []
    for arg in _normalize_spellings(argv):
        name, eq, value = arg[2:].partition("=")
        if arg.startswith("--") and name not in tool_flags and (
                registry.is_registered(name) or _is_upstream_pass(name)):
            passes.append(name + ("{" + value + "}" if eq and value else ""))
        else:
            rest.append(arg)
    return rest, passes


def parse_command_line(argv: list[str]) -> Options | str:
    """The options of a run, or the text to print for ``--help``/``--list-passes``."""
    parser, tool_flags = _build_parser()
    rest, passes = _split_pass_flags(argv, tool_flags)
    args, unknown = parser.parse_known_args(rest)
    for arg in unknown:
        if arg.lstrip("-").startswith(PASS_PREFIXES):
            raise UsageError(f"unknown pass '{arg}'; registered passes and pipelines: "
                             + ", ".join(sorted([*registry.PASSES, *registry.PIPELINES])))
        raise UsageError(f"unknown command line argument '{arg}'; try '{TOOL} --help'")
    if args.help:
        return parser.format_help() + "\n" + list_passes()
    if args.version:
        return version_text()
    if args.show_dialects:
        return "Available Dialects: " + ", ".join(registered_dialects()) + "\n"
    if args.list_passes:
        return list_passes()
    printing = (args.mlir_print_ir_after_all or args.mlir_print_ir_before_all
                or args.mlir_print_ir_after_change or args.mlir_print_ir_after_failure)
    if args.mlir_print_ir_tree_dir is not None and not printing:
        raise UsageError("--mlir-print-ir-tree-dir needs one of --mlir-print-ir-after-all, "
                         "--mlir-print-ir-before-all, --mlir-print-ir-after-change, "
                         "--mlir-print-ir-after-failure")
    for flag, path in (("-o", args.output),
                       ("--mlir-pass-pipeline-crash-reproducer",
                        args.mlir_pass_pipeline_crash_reproducer)):
        _check_writable(flag, path)
    if args.pass_pipeline is not None and passes:
        raise UsageError("--pass-pipeline cannot be combined with pass flags "
                         f"(--{passes[0].split('{')[0]})")
    if args.run_reproducer and (args.pass_pipeline is not None or passes):
        raise UsageError("--run-reproducer takes its pipeline from the reproducer")
    pipeline = args.pass_pipeline or ("builtin.module(" + ",".join(passes) + ")" if passes else "")
    return Options(
        input=args.input, output=args.output, pipeline=pipeline,
        split_marker=args.split_input_file, verify_diagnostics=args.verify_diagnostics,
        print_ir_after_all=args.mlir_print_ir_after_all,
        print_ir_before_all=args.mlir_print_ir_before_all,
        print_ir_after_change=args.mlir_print_ir_after_change,
        print_ir_after_failure=args.mlir_print_ir_after_failure,
        print_ir_tree_dir=args.mlir_print_ir_tree_dir, pass_statistics=args.mlir_pass_statistics,
        allow_unregistered_dialect=args.allow_unregistered_dialect,
        dump_pass_pipeline=args.dump_pass_pipeline, print_generic=args.mlir_print_op_generic,
        print_debuginfo=args.mlir_print_debuginfo, timing=args.mlir_timing,
        verify_each=_parse_bool(args.verify_each, "--verify-each"),
        verify_on_parse=not args.no_fuseflow_verify_on_parse,
        reproducer=args.mlir_pass_pipeline_crash_reproducer, run_reproducer=args.run_reproducer)


def _check_writable(flag: str, path: str | None) -> None:
    """Rejects an output path whose folder does not exist, before any input is read."""
    if path is None or path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"cannot write {flag} file '{path}': folder '{folder}' does not exist")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {flag} file '{path}': it is a folder")


def version_text() -> str:
    """The tool's version and the MLIR it is built on."""
    from importlib import metadata

    import fuseflow

    return (f"{TOOL} (FuseFlow) {fuseflow.__version__}\n"
            f"  MLIR from torch-mlir {metadata.version('torch-mlir')}\n")


def registered_dialects() -> list[str]:
    """The dialects a fuseflow-opt context can parse, sorted: upstream dialects with Python
    bindings that are registered in the context, and FuseFlow's ``fuse`` and ``sam``."""
    import torch_mlir.dialects as bindings

    ctx = mlir.new_context()
    names = set()
    for module in pkgutil.iter_modules(bindings.__path__):
        if not module.name.endswith("_ops_gen"):
            continue
        dialect = getattr(importlib.import_module(f"{bindings.__name__}.{module.name}"),
                          "_Dialect", None)
        if dialect is None:
            continue
        try:
            ctx.get_dialect_descriptor(dialect.DIALECT_NAMESPACE)
        except ValueError:
            continue  # bindings of a dialect this build does not register (e.g. torch)
        names.add(dialect.DIALECT_NAMESPACE)
    names.update(name for name in ("fuse", "sam") if ctx.is_dialect_loaded(name))
    return sorted(names)


def list_passes() -> str:
    """FuseFlow's passes with their options, and the named pipelines, from the registry."""
    out = ["FuseFlow passes:"]
    for name in sorted(registry.PASSES):
        try:
            cls = registry.pass_class(name)
        except ImportError as err:
            out.append(f"  --{name:<28} - (cannot be loaded: {err})")
            continue
        out.append(f"  --{name:<28} - {cls.summary()}")
        hints = typing.get_type_hints(cls)
        for f in cls.option_fields():
            out.append(f"      {f.name.replace('_', '-')}=<{_type_name(hints[f.name])}>"
                       f"{' - ' + f.metadata['help'] if 'help' in f.metadata else ''}"
                       f" (default: {_default_text(f)})")
    out.append("Named pipelines:")
    for name in sorted(registry.PIPELINES):
        out.append(f"  --{name:<28} - {registry.PIPELINES[name]}")
    return "\n".join(out) + "\n"


def _type_name(hint) -> str:
    if isinstance(hint, type) and issubclass(hint, ChoiceEnum):
        return "|".join(m.value for m in hint)
    origin = typing.get_origin(hint)
    if origin in (tuple, list):
        (elem, *_) = typing.get_args(hint) or (str,)
        return f"{_type_name(elem)},..."
    if origin is not None:
        return "|".join(_type_name(a) for a in typing.get_args(hint) if a is not type(None))
    return getattr(hint, "__name__", str(hint))


def _default_text(f: dataclasses.Field) -> str:
    value = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    if isinstance(value, ChoiceEnum):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


# The driver.

class OptDriver:
    """One fuseflow-opt run: read, split, parse, verify, run the pipeline, print."""

    def __init__(self, options: Options, stdout=None, stderr=None):
        self.options = options
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.ctx = mlir.new_context()
        self.ctx.allow_unregistered_dialects = options.allow_unregistered_dialect
        self.diags: list[Diag] = []
        self.source = Source(STDIN_NAME, "")
        self.reproducer_written = False
        self.notices: list[str] = []  # printed after the diagnostics of the current chunk

    def _on_diagnostic(self, diag) -> bool:
        self.diags.append(Diag.from_mlir(diag, self.source.name))
        return True

    def run(self) -> int:
        """Processes the input; the exit code."""
        opts = self.options
        name = STDIN_NAME if opts.input == "-" else opts.input
        text = self.read(opts.input)
        pipeline_text, verify_each = opts.pipeline, opts.verify_each
        if opts.run_reproducer:
            reproducer, text = Reproducer.extract(text)
            pipeline_text, verify_each = reproducer.pipeline, reproducer.verify_each
        self.source = Source(name, text)
        self.pipeline = Pipeline.parse(pipeline_text)
        self.verify_each = verify_each
        if opts.dump_pass_pipeline:
            self.stderr.write(f"Pass Manager with {len(self.pipeline.steps)} passes:\n"
                              f"{self.pipeline.text()}\n")
        # With statistics each step runs in its own pass manager, to count ops between steps.
        if opts.pass_statistics:
            self.stages = [(step, self.pass_manager(Pipeline.of(step)))
                           for step in self.pipeline.steps]
        else:
            self.stages = [(None, self.pass_manager(self.pipeline))]
        outputs, failed = [], False
        handler = self.ctx.attach_diagnostic_handler(self._on_diagnostic)
        try:
            for chunk in split_input(text, opts.split_marker):
                output, chunk_failed = self.run_chunk(chunk)
                outputs.append(output or "")
                failed |= chunk_failed
        finally:
            handler.detach()
        joined = ((opts.split_marker or "") + "\n").join(outputs)
        self.write(opts.output, joined, keep=not failed)
        return 1 if failed else 0

    def run_chunk(self, chunk: Chunk) -> tuple[str | None, bool]:
        """Processes one chunk and reports its diagnostics; its output and whether it failed."""
        self.diags, self.notices = [], []
        output = self.process(chunk)
        if self.options.verify_diagnostics:
            report = check_expected(self.diags, parse_expected(chunk.lines, chunk.first_line),
                                    self.source)
            failed = bool(report)
        else:
            report = [self.source.format(d) for d in self.diags]
            failed = output is None
        self.stderr.write("".join(report + self.notices))
        return output, failed

    def pass_manager(self, pipeline: Pipeline) -> "mlir.PassManager":
        """A pass manager for ``pipeline`` with the run's verifier, timing and IR printing."""
        opts = self.options
        pm = pipeline.pass_manager(self.ctx, verify_each=self.verify_each, timing=opts.timing)
        if (opts.print_ir_after_all or opts.print_ir_before_all or opts.print_ir_after_change
                or opts.print_ir_after_failure):
            if opts.print_ir_tree_dir:
                os.makedirs(opts.print_ir_tree_dir, exist_ok=True)
            # The after-change and after-failure flags filter printing after passes (as in
            # MLIR's instrumentation); on their own they turn it on.
            pm.enable_ir_printing(
                print_before_all=opts.print_ir_before_all,
                print_after_all=(opts.print_ir_after_all or opts.print_ir_after_change
                                 or opts.print_ir_after_failure),
                print_after_change=opts.print_ir_after_change,
                print_after_failure=opts.print_ir_after_failure,
                print_generic_op_form=opts.print_generic, enable_debug_info=opts.print_debuginfo,
                tree_printing_dir_path=opts.print_ir_tree_dir)
        return pm

    def process(self, chunk: Chunk) -> str | None:
        """Parses, verifies and transforms one chunk; its printed result, or None on failure."""
        module = self.parse(chunk.text())
        if module is None:
            return None
        if self.options.verify_on_parse and not verify.verify_module(module.operation):
            return None
        if self.pipeline.steps and not self.run_pipeline(module):
            return None
        if self.pipeline.steps and self.verify_each and not verify.verify_module(module.operation):
            return None
        if any(d.severity == "error" for d in self.diags):
            return None
        return module.operation.get_asm(print_generic_op_form=self.options.print_generic,
                                        enable_debug_info=self.options.print_debuginfo)

    def parse(self, text: str):
        """The module of ``text`` with locations naming the input, or None after errors."""
        problems = textcheck.find_crashing_constructs(text)
        if problems:
            self.diags.extend(Diag("error", self.source.name, p.line, p.col, p.message)
                              for p in problems)
            return None
        try:
            module = mlir.Module.parse(text, self.ctx)
        except mlir.MLIRError as err:
            self.diags.extend(Diag.from_mlir(d, self.source.name) for d in err.error_diagnostics)
            return None
        rename_locations(module.operation, PARSER_BUFFER_NAME, self.source.name)
        return module

    def run_pipeline(self, module) -> bool:
        """Runs the pass manager on ``module``; on failure records diagnostics and a reproducer."""
        snapshot = None
        if self.options.reproducer and not self.reproducer_written:
            snapshot = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
        self.stdout.flush()
        self.stderr.flush()  # IR printing writes to the process's stderr directly
        statistics = []
        try:
            for step, pm in self.stages:
                before = None if step is None else _op_counts(module.operation)
                pm.run(module.operation)
                if step is not None:
                    statistics.append(_statistics(step, before, _op_counts(module.operation)))
            if statistics:
                self.notices.append(_STATISTICS_HEADER + "".join(statistics))
            return True
        except mlir.MLIRError as err:
            found = [Diag.from_mlir(d, self.source.name) for d in err.error_diagnostics]
            self.diags.extend(found or [Diag("error", None, 0, 0, str(err.message))])
        except Exception:  # a bug in a Python pass: report it like a crash
            self.diags.append(Diag("error", None, 0, 0,
                                   "pass pipeline crashed:\n" + traceback.format_exc().rstrip()))
        if snapshot is not None:
            self.write_reproducer(snapshot)
        return False

    def write_reproducer(self, module_asm: str) -> None:
        path = self.options.reproducer
        reproducer = Reproducer(self.pipeline.text(), self.verify_each)
        try:
            with open(path, "w") as f:
                f.write(reproducer.render(module_asm, path))
        except OSError as err:
            self.notices.append(f"{TOOL}: error: cannot write reproducer '{path}': "
                                f"{err.strerror}\n")
            return
        self.reproducer_written = True
        self.notices.append(f"{TOOL}: reproducer written to '{path}'; replay with: "
                            f"{TOOL} --run-reproducer {path}\n")

    def read(self, path: str) -> str:
        if path == "-":
            return sys.stdin.read()
        try:
            with open(path) as f:
                return f.read()
        except OSError as err:
            raise UsageError(f"cannot open input file '{path}': {err.strerror}") from None

    def write(self, path: str, text: str, keep: bool) -> None:
        if path == "-":
            self.stdout.write(text)
        elif keep:
            try:
                with open(path, "w") as f:
                    f.write(text)
            except OSError as err:
                raise UsageError(f"cannot write output file '{path}': {err.strerror}") from None


_STATISTICS_HEADER = ("===" + "-" * 73 + "===\n" + " " * 25 + "... Pass statistics report ...\n"
                      + "===" + "-" * 73 + "===\n")


def _op_counts(op) -> Counter:
    """Operations nested in ``op`` (itself included), by name."""
    counts = Counter([op.name])
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                counts += _op_counts(child.operation)
    return counts


def _statistics(step, before: Counter, after: Counter) -> str:
    """One pass's statistics: operation counts before and after, and the change per op name.

    (The torch-mlir build compiles MLIR's own pass statistics out, so these are measured by
    the driver.)"""
    name = step.pipeline_text() if isinstance(step, Pass) else step
    lines = [f"{name}\n", f"  (S) {sum(before.values())} ops-before - operations before the pass\n",
             f"  (S) {sum(after.values())} ops-after - operations after the pass\n"]
    for op_name in sorted(set(before) | set(after)):
        delta = after[op_name] - before[op_name]
        if delta:
            lines.append(f"  (S) {delta:+d} {op_name} - change in '{op_name}' operations\n")
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The ``fuseflow-opt`` command; returns the exit code."""
    try:
        options = parse_command_line(sys.argv[1:] if argv is None else list(argv))
        if isinstance(options, str):
            sys.stdout.write(options)
            return 0
        return OptDriver(options).run()
    except (UsageError, PipelineError) as err:
        sys.stderr.write(f"{TOOL}: error: {str(err).strip()}\n")
    except ImportError as err:
        sys.stderr.write(f"{TOOL}: error: a registered pass cannot be loaded: {err}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())

"""MLIR source locations as data: op names and source frames, and the PyTorch line they lead to.

The MLIR Python bindings print a location (``str(op.location)``) but do not expose its parts,
so this module parses the textual location grammar:

    loc(L)   L ::= unknown | "file":line:col [to [line]:col] | "name" [( L )]
               | callsite( L at L ) | fused [<attr>] [ L, ... ]

A call-site location lists the callee's frames before the caller's, so the first frame of a
torch-mlir location is the PyTorch line that created the op and the later ones are its callers.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass


class LocationSyntaxError(ValueError):
    """A location string that does not follow MLIR's location grammar."""


@dataclass(frozen=True)
class Frame:
    """One file position of a location."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class SourceLocation:
    """The parts of one location: names (outermost first) and frames (callee first)."""

    text: str
    names: tuple[str, ...] = ()
    frames: tuple[Frame, ...] = ()

    def source_frame(self) -> Frame | None:
        """The frame of the source line: the first frame naming a file that exists (synthetic
        frames, such as the importer's kernel tags, are skipped), else the first frame."""
        for frame in self.frames:
            if os.path.isfile(frame.file):
                return frame
        return self.frames[0] if self.frames else None

    def source_line(self) -> str:
        """The text of :meth:`source_frame`'s line, stripped ('' when the file is unreadable)."""
        frame = self.source_frame()
        return linecache.getline(frame.file, frame.line).strip() if frame else ""


def parse_location(text: str) -> SourceLocation:
    """Parses ``loc(...)`` (or its inner part) into names and frames."""
    parser = _Parser(text)
    names: list[str] = []
    frames: list[Frame] = []
    parser.skip_space()
    if parser.take("loc("):
        parser.location(names, frames)
        parser.expect(")")
    else:
        parser.location(names, frames)
    parser.skip_space()
    if parser.pos != len(text):
        parser.fail("unexpected text after the location")
    return SourceLocation(text, tuple(names), tuple(frames))


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, what: str):
        raise LocationSyntaxError(f"{what} at column {self.pos} of location {self.text!r}")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def take(self, token: str) -> bool:
        self.skip_space()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            self.fail(f"expected {token!r}")

    def string(self) -> str:
        self.expect('"')
        out = []
        while self.pos < len(self.text) and self.text[self.pos] != '"':
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                if nxt in '"\\':
                    out.append(nxt)
                    self.pos += 2
                    continue
                if self.pos + 2 < len(self.text):   # \XX: a hex-escaped byte
                    out.append(chr(int(self.text[self.pos + 1:self.pos + 3], 16)))
                    self.pos += 3
                    continue
            out.append(ch)
            self.pos += 1
        self.expect('"')
        return "".join(out)

    def integer(self) -> int:
        self.skip_space()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        if start == self.pos:
            self.fail("expected an integer")
        return int(self.text[start:self.pos])

    def location(self, names: list[str], frames: list[Frame]) -> None:
        if self.take("unknown"):
            return
        if self.take("callsite("):
            self.location(names, frames)
            self.expect("at")
            self.location(names, frames)
            self.expect(")")
            return
        if self.take("fused"):
            if self.take("<"):
                self.balanced("<", ">")
            self.expect("[")
            if not self.take("]"):
                self.location(names, frames)
                while self.take(","):
                    self.location(names, frames)
                self.expect("]")
            return
        name = self.string()
        if self.take(":"):
            line = self.integer()
            self.expect(":")
            frames.append(Frame(name, line, self.integer()))
            if self.take("to"):
                if not self.take(":"):
                    self.integer()
                    self.expect(":")
                self.integer()
            return
        names.append(name)
        if self.take("("):
            self.location(names, frames)
            self.expect(")")

    def balanced(self, opening: str, closing: str) -> None:
        depth = 1
        while depth and self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == '"':
                self.string()
                continue
            depth += (ch == opening) - (ch == closing)
            self.pos += 1
        if depth:
            self.fail(f"unbalanced {opening!r}")

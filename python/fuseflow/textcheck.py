"""Checks of MLIR text for inputs that crash the upstream parser instead of failing cleanly.

MLIR's parser dereferences null on some well-formed but incomplete attributes, killing the
process (a segmentation fault) before any diagnostic is printed. Every entry point that hands
user text to ``Module.parse`` (``fuseflow-opt``, ``fuseflow.compile`` with MLIR text) calls
:func:`find_crashing_constructs` first and reports what it finds as located errors.

Known crash: a ``#sparse_tensor.encoding<{...}>`` without a ``map`` entry (``<{}>``,
``<{ posWidth = 32 }>``); the encoding's dimension-to-level map is then null.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENCODING = "#sparse_tensor.encoding"
_ENCODING_OPEN = re.compile(re.escape(ENCODING) + r"\s*<\s*\{")
_KEY = re.compile(r"\s*([A-Za-z_][\w.]*)\s*=")
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


@dataclass(frozen=True)
class TextProblem:
    """A construct of the input the parser cannot be trusted with, at a 1-based position."""

    line: int
    col: int
    message: str


def find_crashing_constructs(text: str) -> list[TextProblem]:
    """The constructs of ``text`` that would crash MLIR's parser, in input order.

    Comments, string literals and malformed constructs (left to the parser, which reports
    them itself) are skipped.
    """
    problems = []
    code = _blank_comments_and_strings(text)
    for match in _ENCODING_OPEN.finditer(code):
        body_start = match.end()
        body_end = _matching_close(code, body_start - 1)
        if body_end is None:
            continue
        entries = _top_level_entries(code[body_start:body_end])
        keys = {_KEY.match(entry).group(1) for entry in entries if _KEY.match(entry)}
        if "map" not in keys:
            line = code.count("\n", 0, match.start()) + 1
            col = match.start() - (code.rfind("\n", 0, match.start()) + 1) + 1
            problems.append(TextProblem(line, col, (
                f"'{ENCODING}' needs a 'map' entry (the dimension-to-level map, e.g. "
                "map = (d0, d1) -> (d0 : dense, d1 : compressed)); MLIR's parser crashes "
                "without one")))
    return problems


def _blank_comments_and_strings(text: str) -> str:
    """``text`` with ``//`` comments and string literals replaced by spaces (positions kept)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
        else:
            i += 1
    return "".join(out)


def _matching_close(code: str, open_at: int) -> int | None:
    """The index of the bracket closing the one at ``open_at``, or None if unbalanced.

    ``->`` arrows are not closers of ``<``.
    """
    stack = [_CLOSERS[code[open_at]]]
    for i in range(open_at + 1, len(code)):
        ch = code[i]
        if ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif ch in ")]}>":
            if ch == ">" and code[i - 1] == "-":
                continue
            if ch != stack[-1]:
                return None
            stack.pop()
            if not stack:
                return i
    return None


def _top_level_entries(body: str) -> list[str]:
    """``body`` split at commas outside brackets."""
    entries, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}" or (ch == ">" and (i == 0 or body[i - 1] != "-")):
            depth -= 1
        elif ch == "," and depth == 0:
            entries.append(body[start:i])
            start = i + 1
    entries.append(body[start:])
    return entries

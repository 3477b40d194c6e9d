"""Terminal output of the ``fuseflow`` command: rich consoles, progress bars, tables, logging.

Results go to stdout, progress and logs to stderr. Progress bars are drawn only when stderr is
a terminal; tables are plain text (no colour codes) when stdout is not one.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

PLAIN_WIDTH = 160
"""Width of tables written to a file or pipe (a terminal's own width is used otherwise)."""

LOGGER = "fuseflow"
"""FuseFlow's logger namespace: ``-v`` shows its INFO records, ``-vv`` its DEBUG records."""


def make_console(stream=None) -> Console:
    """A console on ``stream`` (stdout by default); wide, uncoloured text when not a terminal."""
    stream = stream or sys.stdout
    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=PLAIN_WIDTH, no_color=True)
    return console


def configure_logging(verbosity: int, console: Console) -> None:
    """FuseFlow's records at INFO (``-v``) or DEBUG (``-vv``) on ``console``; third-party
    loggers (torch, torch-mlir) stay at WARNING whatever the verbosity."""
    handler: logging.Handler
    if console.is_terminal:
        handler = RichHandler(console=console, show_path=False, markup=False)
    else:
        handler = logging.StreamHandler(console.file)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    logging.getLogger(LOGGER).setLevel(level)


class Steps:
    """A progress bar over a known number of steps, each named when it starts."""

    def __init__(self, progress: Progress, total: int):
        self._progress = progress
        self._task = progress.add_task("", total=total)

    def start(self, description: str) -> None:
        """Names the step now running."""
        self._progress.update(self._task, description=description)

    def done(self, count: int = 1) -> None:
        """Marks ``count`` steps finished."""
        self._progress.advance(self._task, count)


@contextmanager
def steps(total: int) -> Iterator[Steps]:
    """A transient progress bar of ``total`` steps on stderr (off when it is not a terminal)."""
    console = make_console(sys.stderr)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        transient=True, disable=not console.is_terminal)
    with progress:
        yield Steps(progress, total)


def table(title: str, columns: list[str], rows: list[list[str]], right: set[str] = frozenset()
          ) -> Table:
    """A rich table; columns named in ``right`` are right-aligned (numbers)."""
    out = Table(title=title, title_justify="left", header_style="bold")
    for name in columns:
        out.add_column(name, justify="right" if name in right else "left", no_wrap=True)
    for row in rows:
        out.add_row(*row)
    return out

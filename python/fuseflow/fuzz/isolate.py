"""Runs fuzz cases in a child process, so a hang or a crash ends one case, not the campaign.

:class:`Isolated` keeps one worker process that applies a module-level function to each case
and sends back its :class:`~fuseflow.fuzz.outcome.Report`. A case that takes longer than the
timeout is a ``hang`` (the worker is killed and restarted); a worker that dies (a segfault in
MLIR, an abort) is a ``crash``. Workers are forked (no re-import per restart; a
launcher script without a main guard, as pytest's, cannot spawn).
"""

from __future__ import annotations

import multiprocessing

from fuseflow.fuzz.outcome import Outcome, Report


def _serve(func, conn) -> None:
    while True:
        case = conn.recv()
        if case is None:
            return
        try:
            report = func(case)
        except Exception as err:  # noqa: BLE001 - a bug of the checker itself, reported
            report = Report(Outcome.INTERNAL_ERROR, "checker", f"{type(err).__name__}: {err}")
        conn.send(report)


class Isolated:
    """Applies ``func(case) -> Report`` to cases in a restartable child process."""

    def __init__(self, func, timeout: float):
        self.func = func
        self.timeout = timeout
        self._ctx = multiprocessing.get_context("fork")
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        self._conn, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(self.func, child), daemon=True)
        self._proc.start()
        child.close()

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
        self._proc = self._conn = None

    def run(self, case, first_timeout: float = 120.0) -> Report:
        """The report of ``case``; the first case after a (re)start may also import libraries,
        so it gets ``first_timeout`` more seconds."""
        fresh = self._proc is None
        if fresh:
            self._start()
        self._conn.send(case)
        if not self._conn.poll(self.timeout + (first_timeout if fresh else 0.0)):
            self._stop()
            return Report(Outcome.HANG, detail=f"no result within {self.timeout:g} s")
        try:
            return self._conn.recv()
        except (EOFError, ConnectionError):
            self._proc.join(timeout=5)
            code = self._proc.exitcode
            self._stop()
            return Report(Outcome.CRASH, detail=f"worker died (exit code {code})")

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._conn.send(None)
            self._proc.join(timeout=5)
        self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

"""A fuzzing campaign: cases run in isolated workers, outcomes tallied, progress logged."""

from __future__ import annotations

import logging
import threading
import time

from fuseflow.fuzz.isolate import Isolated
from fuseflow.fuzz.outcome import Tally

log = logging.getLogger(__name__)


def run_campaign(check, cases, *, timeout: float, jobs: int = 1,
                 progress_every: int = 100, checkpoint=None) -> Tally:
    """Applies ``check(case) -> Report`` to every case in ``jobs`` isolated workers; every
    ``progress_every`` cases logs the counts and calls ``checkpoint(tally, seconds)`` (a long
    run keeps what it has done if it is stopped)."""
    tally, lock = Tally(), threading.Lock()
    pending = iter(cases)
    start = time.monotonic()

    def worker():
        with Isolated(check, timeout) as runner:
            while True:
                with lock:
                    case = next(pending, None)
                if case is None:
                    return
                report = runner.run(case)
                with lock:
                    tally.add(case, report)
                    if report.failed:
                        log.warning("case %s: %s (%s) %s", case, report.outcome.value,
                                    report.stage, report.detail)
                    if tally.total % progress_every == 0:
                        log.info("%d cases in %.0f s: %s", tally.total,
                                 time.monotonic() - start, dict(tally.counts))
                        if checkpoint is not None:
                            checkpoint(tally, time.monotonic() - start)

    threads = [threading.Thread(target=worker) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally

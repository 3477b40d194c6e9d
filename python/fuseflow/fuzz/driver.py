"""The command line of a long fuzzing campaign (``bench/fuzz_models.py``, ``bench/fuzz_opt.py``).

``--cases N --first-seed S`` runs seeds ``S .. S+N-1`` in ``--jobs`` isolated workers and writes
JSON every ``progress_every`` cases (``"complete": false`` until the run ends); ``--replay SEED``
runs one seed in this process, with tracebacks; ``--merge A B ...`` writes the JSON of runs
on consecutive seed ranges as one. Exit status 1 when any case failed (wrong, internal error,
hang or crash).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import time
import warnings
from pathlib import Path
from typing import Callable


def campaign_main(doc: str, *, module: str, check: str, replay: Callable, default_json: Path,
                  default_cases: int, default_timeout: float, progress_every: int = 100,
                  summary: tuple[str, ...] = ("cases", "seconds", "counts"),
                  argv: list[str] | None = None) -> int:
    """Runs a campaign of ``module.check`` (``check(seed) -> Report``) as the command line asks.

    ``replay(module, seed)`` prints one case and its report; ``summary`` are the result's keys
    printed as one JSON line at the end.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--cases", type=int, default=default_cases)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=default_timeout,
                        help="seconds per case")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path, default=default_json)
    parser.add_argument("--replay", type=int, metavar="SEED",
                        help="run one seed in this process and print it")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="PART",
                        help="write the JSON of runs on consecutive seed ranges as one")
    args = parser.parse_args(argv)
    if args.merge:
        from fuseflow.fuzz.outcome import merge_results

        merged = merge_results([json.loads(p.read_text()) for p in args.merge])
        _write_json(args.json, merged)
        print(json.dumps({k: merged[k] for k in ("cases", "seconds", "counts")}))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    warnings.filterwarnings("ignore")
    fuzzer = importlib.import_module(module)
    if args.replay is not None:
        replay(fuzzer, args.replay)
        return 0
    from fuseflow.fuzz.campaign import run_campaign

    def write(tally, seconds, complete=False):
        result = {"seconds": round(seconds, 1), "first_seed": args.first_seed,
                  "complete": complete, **tally.to_dict()}
        _write_json(args.json, result)
        return result

    start = time.monotonic()
    seeds = range(args.first_seed, args.first_seed + args.cases)
    tally = run_campaign(getattr(fuzzer, check), seeds, timeout=args.timeout, jobs=args.jobs,
                         progress_every=progress_every, checkpoint=write)
    result = write(tally, time.monotonic() - start, complete=True)
    print(json.dumps({k: result[k] for k in summary}))
    for message, n in tally.errors.most_common(15):
        print(f"{n:6d}  {message}")
    for case, report in tally.failures[:30]:
        print(f"{report.outcome.value}: seed {case}: {report.stage}: {report.detail}")
    return 1 if tally.failures else 0


def _write_json(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")

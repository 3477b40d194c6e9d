"""Differential fuzzing of random PyTorch models against PyTorch (``fuseflow.fuzz.models``).

Each case (seeded, reproducible) is compiled, simulated on both engines and compared with
PyTorch in an isolated worker; the run reports how many cases were ok, wrong, a clean
(FuseFlow) error, an internal error, a hang or a crash, the clean errors by message (what is
rejected as unsupported) and every failing case with its seed. Writes JSON.

    python bench/fuzz_models.py --cases 200
    python bench/fuzz_models.py --cases 10000 --jobs 2 --json bench/results/fuzz_models.json
    python bench/fuzz_models.py --replay 1234          # one case, in process, with traceback
    python bench/fuzz_models.py --merge a.json b.json  # runs on consecutive seed ranges as one

A long run writes its JSON every 100 cases (``"complete": false`` until it ends).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
import warnings
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "fuzz_models.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--replay", type=int, help="run one seed in this process and print it")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="PART",
                        help="write the JSON of runs on consecutive seed ranges as one")
    args = parser.parse_args()
    if args.merge:
        from fuseflow.fuzz.outcome import merge_results

        merged = merge_results([json.loads(p.read_text()) for p in args.merge])
        args.json.write_text(json.dumps(merged, indent=1) + "\n")
        print(json.dumps({k: merged[k] for k in ("cases", "seconds", "counts")}))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    warnings.filterwarnings("ignore")
    from fuseflow.fuzz import models

    if args.replay is not None:
        import random

        case = models.random_case(random.Random(args.replay), args.replay)
        print(case)
        print(models.check_case(case))
        return 0
    from fuseflow.fuzz.campaign import run_campaign

    def write(tally, seconds, complete=False):
        result = {"seconds": round(seconds, 1), "first_seed": args.first_seed,
                  "complete": complete, **tally.to_dict()}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        return result

    start = time.monotonic()
    seeds = range(args.first_seed, args.first_seed + args.cases)
    tally = run_campaign(models.check_seed, seeds, timeout=args.timeout, jobs=args.jobs,
                         checkpoint=write)
    result = write(tally, time.monotonic() - start, complete=True)
    print(json.dumps({k: result[k] for k in ("cases", "seconds", "counts", "rejected_fraction")}))
    for message, n in tally.errors.most_common(15):
        print(f"{n:6d}  {message}")
    for case, report in tally.failures[:30]:
        print(f"{report.outcome.value}: seed {case}: {report.stage}: {report.detail}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Fuzzing ``fuseflow-opt`` with random valid ``linalg.generic`` kernels and their mutations
(``fuseflow.fuzz.kernels``).

Each case (seeded, reproducible) runs the ``fuseflow-opt`` driver in an isolated worker; the
run reports how many inputs were accepted (ok), rejected with a located diagnostic (clean
error), raised an internal error, hung or crashed the process, the diagnostics by message and
every failing case with its seed. Writes JSON.

    python bench/fuzz_opt.py --cases 1000
    python bench/fuzz_opt.py --replay 17         # one case, in process: the input and report
    python bench/fuzz_opt.py --merge a.json b.json   # runs on consecutive seed ranges as one

A long run writes its JSON every 500 cases (``"complete": false`` until it ends).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
import warnings
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "fuzz_opt.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--replay", type=int, help="print one seed's input and run it here")
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
    from fuseflow.fuzz import kernels

    if args.replay is not None:
        case = kernels.opt_case(args.replay)
        print(f"// {case}\n{case.text}")
        print(kernels.check_opt(case))
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
    tally = run_campaign(kernels.check_opt, seeds, timeout=args.timeout, jobs=args.jobs,
                         progress_every=500, checkpoint=write)
    result = write(tally, time.monotonic() - start, complete=True)
    print(json.dumps({k: result[k] for k in ("cases", "seconds", "counts")}))
    for message, n in tally.errors.most_common(15):
        print(f"{n:6d}  {message}")
    for case, report in tally.failures[:30]:
        print(f"{report.outcome.value}: seed {case}: {report.stage}: {report.detail}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

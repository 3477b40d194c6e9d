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

from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "fuzz_models.json"


def _replay(models, seed: int) -> None:
    import random

    case = models.random_case(random.Random(seed), seed)
    print(case)
    print(models.check_case(case))


if __name__ == "__main__":
    from fuseflow.fuzz.driver import campaign_main

    raise SystemExit(campaign_main(
        __doc__, module="fuseflow.fuzz.models", check="check_seed", replay=_replay,
        default_json=DEFAULT_JSON, default_cases=200, default_timeout=60.0,
        summary=("cases", "seconds", "counts", "rejected_fraction")))

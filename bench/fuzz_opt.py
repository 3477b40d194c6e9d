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

from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "fuzz_opt.json"


def _replay(kernels, seed: int) -> None:
    case = kernels.opt_case(seed)
    print(f"// {case}\n{case.text}")
    print(kernels.check_opt(case))


if __name__ == "__main__":
    from fuseflow.fuzz.driver import campaign_main

    raise SystemExit(campaign_main(
        __doc__, module="fuseflow.fuzz.kernels", check="check_opt", replay=_replay,
        default_json=DEFAULT_JSON, default_cases=1000, default_timeout=30.0,
        progress_every=500))

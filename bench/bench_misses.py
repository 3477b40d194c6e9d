"""CPU nanoseconds per entry of an accumulator's miss matrix (``joins.misses``): the
``gammaln`` computation (``misses_gamma``, what every matrix took before) against what
``misses`` takes now, on matrices shaped like the largest accumulators of the small
published graphs (fiber-size bins × distinct key frequencies).

Inputs are synthetic with the published shapes: sizes 1, 2, ... with the gaps of binned
degrees (Cora, Cora-ML) or 44 empty bins of 64 (DBLP), key frequencies ``count · J /
measured`` for integral counts (not integral themselves, as on the published points).
Each timing is the fastest of ``--batches`` batches of ``--calls`` calls (``time.process_time``),
the two paths alternating.

    python bench/bench_misses.py
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from fuseflow.explore import joins


def shapes(rng: np.random.Generator):
    """``(name, d, q, J)`` like the largest accumulators of Cora, Cora-ML and DBLP."""
    gaps = [22, 23, 24, 27, 30, 31, 32, 33, 34, 35, 37, 41, 43, 45, 66, 75, 79, 169]
    cora = np.array(list(range(2, 21)) + gaps, dtype=float)
    cora_ml = np.array(list(range(2, 33)) + [34, 35, 36, 37, 40, 42, 43, 44, 51, 53, 55, 61,
                                             69, 71, 74, 84, 92, 123, 148, 223], dtype=float)
    dblp = np.zeros(64)
    dblp[np.sort(rng.choice(60, 16, replace=False))] = np.arange(1.0, 17.0)
    dblp[60:] = [13.43, 15.77, 20.55, 57.99]
    for name, d, keys, J, measured in (("cora 37x146", cora, 146, 2708.0, 2667.0),
                                       ("cora_ml 51x223", cora_ml, 223, 2995.0, 3012.0),
                                       ("dblp 64x423", dblp, 423, 17716.0, 17403.0)):
        counts = np.sort(rng.choice(np.arange(1, 3 * keys), keys, replace=False))
        yield name, d, np.minimum(counts / measured, 1.0), J


def fastest(fn, batches: int, calls: int) -> float:
    best = float("inf")
    for _ in range(batches):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name, d, q, J in shapes(np.random.default_rng(args.seed)):
        top = (J + 1.0) - q * J
        entries = d.size * q.size
        before = after = float("inf")
        for _ in range(2):
            before = min(before, fastest(lambda: joins.misses_gamma(d, top, J),
                                         args.batches, args.calls))
            after = min(after, fastest(lambda: joins.misses(d, q, J), args.batches,
                                       args.calls))
        worst = float(np.max(np.abs(joins.misses(d, q, J) - joins.misses_gamma(d, top, J))))
        print(json.dumps({"matrix": name, "entries": entries,
                          "gammaln_ns_per_entry": before / entries * 1e9,
                          "misses_ns_per_entry": after / entries * 1e9,
                          "gammaln_us": before * 1e6, "misses_us": after * 1e6,
                          "max_abs_difference": worst}), flush=True)


if __name__ == "__main__":
    main()

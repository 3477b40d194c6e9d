"""Reference-engine speed on SpMM as the problem grows: compile time, simulated cycles,
tokens moved, wall time and tokens per second. Prints a table and writes JSON.

    python bench/bench_reference_engine.py --scales 1 2 4 8 --json bench/results/reference.json
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import fuseflow
from fuseflow.kernels import get_kernel


def measure(kernel_name: str, scale: int, sparsity: float) -> dict:
    kernel = get_kernel(kernel_name)
    inputs = kernel.inputs(sparsity, seed=0, scale=scale)
    t0 = time.perf_counter()
    compiled = fuseflow.compile(kernel.module(), inputs,
                                fuseflow.Schedule(formats=dict(kernel.declared)))
    t1 = time.perf_counter()
    result = compiled.simulate(*inputs)
    t2 = time.perf_counter()
    tokens = sum(r.summary().get("tokens", 0) for r in result.stats.values())
    return {"kernel": kernel_name, "scale": scale, "sparsity": sparsity,
            "shapes": [list(t.shape) for t in inputs], "cycles": result.cycles,
            "tokens": tokens, "compile_s": round(t1 - t0, 3), "simulate_s": round(t2 - t1, 3),
            "tokens_per_s": round(tokens / (t2 - t1)) if t2 > t1 else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default="spmm")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--sparsity", type=float, default=0.9)
    parser.add_argument("--json", help="write the records here")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    rows = [measure(args.kernel, s, args.sparsity) for s in args.scales]
    print(f"{'scale':>5} {'shapes':<22} {'cycles':>9} {'tokens':>9} {'compile s':>9} {'sim s':>8} {'tokens/s':>10}")
    for r in rows:
        print(f"{r['scale']:>5} {str(r['shapes']):<22} {r['cycles']:>9} {r['tokens']:>9} "
              f"{r['compile_s']:>9} {r['simulate_s']:>8} {r['tokens_per_s']:>10}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

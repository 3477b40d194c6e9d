"""Simulator throughput of both engines: SpMM at growing sizes and a Cora-sized GCN layer.

Throughput is simulated tokens per wall second: tokens summed over all streams (every block's
``tokens_out``) divided by the wall time of ``CompiledModel.simulate`` (which includes binding
the inputs and assembling the outputs). One invocation measures both engines; every (case,
engine) runs in a fresh process, so its peak resident memory is its own and its first run
pays the one-time costs a user's first call pays (on this VM mostly page faults: memory the
process has not touched yet, or freed for a few seconds, costs about 1 s per GB to touch
again). The fast engine runs ``--repeats`` times (first and best reported separately), the
reference once, and only where its estimated time (from the tokens and its measured rate so
far) stays under ``--reference-budget`` seconds. Where both engines run, their cycles, tokens
and output bytes must agree. Prints a table and writes JSON; each row names the commit of the
tree ``fuseflow`` was imported from (``+dirty`` with uncommitted changes to tracked files).

    python bench/bench_engines.py                       # default cases, JSON to bench/results/
    python bench/bench_engines.py --spmm-scales 4 16 --no-gcn --reference-budget 60
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import resource
import time
import warnings
from pathlib import Path

from bench_common import write_json

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "engines.json"
SPMM_SPARSITY = 0.9


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def source() -> tuple[Path, str]:
    """The tree ``fuseflow`` is imported from and its commit, ``+dirty`` if its tracked files
    differ from it (the graphs depend on the compiler as much as on the simulator)."""
    import subprocess

    import fuseflow.sim

    tree = Path(fuseflow.sim.__file__).resolve().parent.parent
    git = ["git", "-C", str(tree)]
    try:
        commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return tree, "unknown (not a git tree)"
    return tree, commit + ("+dirty" if dirty else "")


def _build(case: dict):
    """``(compiled model, inputs, shapes)`` of a case."""
    import torch

    import fuseflow

    if case["kind"] == "spmm":
        from fuseflow.kernels import get_kernel

        kernel = get_kernel("spmm")
        inputs = kernel.inputs(SPMM_SPARSITY, seed=0, scale=case["scale"])
        compiled = fuseflow.compile(kernel.module(), inputs, fuseflow.Schedule(formats=dict(kernel.declared)))
        return compiled, inputs
    from fuseflow.apps import get_application

    model, inputs = get_application("gcn").build(case["preset"], "cora", 0)
    layer = model.layer1
    with torch.no_grad():
        return fuseflow.compile(layer, inputs), inputs


def measure(case: dict, engine: str, repeats: int) -> dict:
    """Compiles and simulates one case on one engine (meant to run in a fresh process)."""
    warnings.filterwarnings("ignore")
    compiled, inputs = _build(case)
    rss_before = _rss_mb()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = compiled.simulate(*inputs, engine=engine)
        times.append(time.perf_counter() - t0)
    tokens = sum(r.summary()["tokens"] for r in result.stats.values())
    digest = hashlib.sha256(b"".join(o.numpy().tobytes() for o in result.outputs)).hexdigest()[:16]
    return {"case": case["name"], "engine": engine, "shapes": [list(t.shape) for t in inputs],
            "kernels": len(result.stats), "cycles": result.cycles, "tokens": tokens,
            "seconds_first": round(times[0], 4), "seconds_best": round(min(times), 4),
            "tokens_per_s": round(tokens / min(times)), "tokens_per_s_first": round(tokens / times[0]),
            "peak_rss_mb": round(_peak_rss_mb()), "sim_peak_mb": round(_peak_rss_mb() - rss_before),
            "output_digest": digest}


def run_isolated(case: dict, engine: str, repeats: int) -> dict:
    """:func:`measure` in a fresh process."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(measure, (case, engine, repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spmm-scales", type=int, nargs="*", default=[4, 16, 32, 64, 96, 128])
    parser.add_argument("--gcn-preset", default="published", help="'published' is Cora-sized (2,708 nodes)")
    parser.add_argument("--no-gcn", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="fast-engine runs per case (first and best reported)")
    parser.add_argument("--reference-budget", type=float, default=300.0,
                        help="skip the reference engine where its estimated time exceeds this (s); 0: never run it")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    cases = [{"name": f"spmm x{s}", "kind": "spmm", "scale": s} for s in args.spmm_scales]
    if not args.no_gcn:
        cases.append({"name": f"gcn layer ({args.gcn_preset})", "kind": "gcn", "preset": args.gcn_preset})
    rows = []
    ref_rate = None
    tree, commit = source()
    print(f"fuseflow from {tree} at {commit}")
    for case in cases:
        fast = run_isolated(case, "fast", args.repeats)
        estimate = fast["tokens"] / ref_rate if ref_rate else 0.0
        ref = None
        if args.reference_budget > 0 and estimate <= args.reference_budget:
            ref = run_isolated(case, "reference", 1)
            ref_rate = ref["tokens"] / ref["seconds_best"]
            for key in ("cycles", "tokens", "output_digest"):
                if ref[key] != fast[key]:
                    raise SystemExit(f"{case['name']}: engines disagree on {key}: {ref[key]} vs {fast[key]}")
        row = {"case": case["name"], "commit": commit, "shapes": fast["shapes"], "cycles": fast["cycles"],
               "tokens": fast["tokens"],
               "fast": fast, "reference": ref,
               "reference_skipped_estimate_s": None if ref else round(estimate),
               "speedup_first": round(ref["seconds_first"] / fast["seconds_first"], 1) if ref else None,
               "speedup_best": round(ref["seconds_best"] / fast["seconds_best"], 1) if ref else None}
        rows.append(row)
        _print_row(row, header=len(rows) == 1)
    write_json(args.json, rows)


def _print_row(row: dict, header: bool) -> None:
    """One table line: reference time, fast first and best time, throughput, and each engine's
    peak memory (the simulation's growth of the process's peak resident set)."""
    if header:
        print(f"{'case':<22} {'tokens':>12} {'cycles':>11} | {'ref s':>7} {'fast first s':>12} {'fast best s':>11} "
              f"{'x first':>7} {'x best':>7} | {'ref tok/s':>10} {'fast tok/s first':>16} {'best':>12} | "
              f"{'ref MB':>6} {'fast MB':>7}")
    ref, fast = row["reference"], row["fast"]
    if ref:
        ref_s, ref_rate, ref_mb = f"{ref['seconds_best']:>7.2f}", f"{ref['tokens_per_s']:>10,}", f"{ref['sim_peak_mb']:>6}"
        speedups = f"{row['speedup_first']:>6}x {row['speedup_best']:>6}x"
    else:
        ref_s, ref_rate, ref_mb = f"{'~' + str(row['reference_skipped_estimate_s']):>7}", f"{'skipped':>10}", f"{'-':>6}"
        speedups = f"{'-':>7} {'-':>7}"
    print(f"{row['case']:<22} {row['tokens']:>12,} {row['cycles']:>11,} | {ref_s} {fast['seconds_first']:>12.3f} "
          f"{fast['seconds_best']:>11.3f} {speedups} | {ref_rate} {fast['tokens_per_s_first']:>16,} "
          f"{fast['tokens_per_s']:>12,} | {ref_mb} {fast['sim_peak_mb']:>7}", flush=True)


if __name__ == "__main__":
    main()

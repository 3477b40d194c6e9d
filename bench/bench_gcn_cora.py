"""Wall time and peak memory of the full 2-layer GCN on the Cora-sized synthetic graph.

For each fusion configuration: compile the published workload (``plan.schedule(F)`` of the GCN
application's fusion plan), simulate on the chosen engine, and check the output against
PyTorch. Each configuration runs in a fresh process under an address-space limit and a time
limit, so one that fails to compile, runs out of memory or runs too long is reported as such
and the others still run. Prints a table and writes JSON.

    python bench/bench_gcn_cora.py                                   # unfused, partial, full
    python bench/bench_gcn_cora.py --fusion unfused --engine reference
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing
import resource
import time
import traceback
import warnings
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "gcn_cora.json"
FUSIONS = ("unfused", "partial", "full")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _limit_memory(gigabytes: float) -> None:
    limit = int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_config(fusion: str, engine: str, preset: str, seed: int) -> dict:
    """Builds, compiles, simulates and checks one configuration (in a fresh process)."""
    warnings.filterwarnings("ignore")
    import torch

    import fuseflow
    from fuseflow.apps import get_application

    record = {"fusion": fusion, "engine": engine}
    app = get_application("gcn")
    model, inputs = app.build(preset, "cora", seed)
    adjacency, features = inputs
    record.update(nodes=adjacency.shape[0], edges=int(adjacency._nnz()), features=features.shape[1],
                  feature_density=round(features._nnz() / features.shape[0] / features.shape[1], 4))
    stage = "compile"
    try:
        t0 = time.perf_counter()
        kwargs = {"plan": app.plan(model)} if "plan" in inspect.signature(fuseflow.compile).parameters else {}
        # the published workload (the plan's sparse declarations) where the plan has them
        schedule = (kwargs["plan"].schedule(fusion) if hasattr(kwargs.get("plan"), "schedule")
                    else fuseflow.Schedule(fusion=fusion))
        compiled = fuseflow.compile(model, inputs, schedule, **kwargs)
        t1 = time.perf_counter()
        stage = "simulate"
        result = compiled.simulate(*inputs, engine=engine)
        t2 = time.perf_counter()
        stage = "check"
        with torch.no_grad():
            want = model(*inputs)
        error = float((result.output - want).abs().max())
        ok = torch.allclose(result.output, want, rtol=1e-4, atol=1e-5)
    except BaseException as exc:  # noqa: BLE001 - a failing configuration is a result to report
        record.update(status=f"failed to {stage}: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                      detail=traceback.format_exc(limit=3)[-2000:], peak_rss_mb=round(_peak_rss_mb()))
        return record
    tokens = sum(r.summary()["tokens"] for r in result.stats.values())
    record.update(status="ok" if ok else "wrong output", kernels=len(result.stats), cycles=result.cycles,
                  tokens=tokens, compile_s=round(t1 - t0, 2), simulate_s=round(t2 - t1, 2),
                  total_s=round(t2 - t0, 2), tokens_per_s=round(tokens / (t2 - t1)), max_abs_error=error,
                  peak_rss_mb=round(_peak_rss_mb()))
    return record


def run_isolated(fusion: str, args) -> dict:
    """:func:`run_config` in a fresh process with the memory and time limits."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1, initializer=_limit_memory, initargs=(args.memory_limit_gb,)) as pool:
        pending = pool.apply_async(run_config, (fusion, args.engine, args.preset, args.seed))
        try:
            return pending.get(timeout=args.timeout)
        except multiprocessing.TimeoutError:
            return {"fusion": fusion, "engine": args.engine, "status": f"timed out after {args.timeout:.0f} s"}
        except Exception as exc:  # the worker died (e.g. killed for memory)
            return {"fusion": fusion, "engine": args.engine, "status": f"worker failed: {exc!r}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fusion", nargs="+", choices=FUSIONS, default=list(FUSIONS))
    parser.add_argument("--engine", default="fast", choices=("fast", "reference"))
    parser.add_argument("--preset", default="published", help="'published' is Cora-sized (2,708 nodes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-limit-gb", type=float, default=8.0, help="address-space limit per configuration")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per configuration")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    rows = []
    print(f"{'fusion':<9} {'status':<10} {'kernels':>7} {'tokens':>14} {'cycles':>12} {'compile s':>9} "
          f"{'sim s':>8} {'tok/s':>12} {'peak MB':>8} {'max |err|':>10}")
    for fusion in args.fusion:
        r = run_isolated(fusion, args)
        rows.append(r)
        if r["status"] == "ok" or r["status"] == "wrong output":
            print(f"{fusion:<9} {r['status']:<10} {r['kernels']:>7} {r['tokens']:>14,} {r['cycles']:>12,} "
                  f"{r['compile_s']:>9} {r['simulate_s']:>8} {r['tokens_per_s']:>12,} {r['peak_rss_mb']:>8} "
                  f"{r['max_abs_error']:>10.2e}", flush=True)
        else:
            print(f"{fusion:<9} {r['status']}", flush=True)
    done = [r for r in rows if r["status"] == "ok"]
    print(f"{len(done)}/{len(rows)} configurations ran and matched PyTorch; total wall time of those "
          f"{sum(r['total_s'] for r in done):.1f} s, largest peak RSS "
          f"{max((r.get('peak_rss_mb', 0) for r in rows), default=0)} MB")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"preset": args.preset, "engine": args.engine, "runs": rows}, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()

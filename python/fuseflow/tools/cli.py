"""The ``fuseflow`` command: compile a PyTorch kernel or model, simulate it, check it against PyTorch.

    fuseflow run spmm --sparsity 0.9 --scale 4          # one kernel, cycles + check
    fuseflow run all --json out.json                    # every kernel
    fuseflow run gcn --dataset karate --fusion partial  # an application, one configuration
    fuseflow run gcn --json gcn.json                    # every fusion configuration + speedups
    fuseflow list                                       # kernels and applications available

Exit status is non-zero when a simulated output differs from PyTorch.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings

from fuseflow.viz.command import add_parser as add_view_parser


def _compare(simulated, expected, rtol: float, atol: float):
    import torch

    expected = expected.to_dense() if expected.layout != torch.strided else expected
    ok = torch.allclose(simulated, expected.to(simulated.dtype), rtol=rtol, atol=atol,
                        equal_nan=True)
    err = (simulated - expected).abs().max().item() if simulated.numel() else 0.0
    return ok, err


def run_kernel(name: str, args) -> dict:
    """Compiles, simulates and checks one kernel; returns its record."""
    import fuseflow
    from fuseflow.kernels import get_kernel

    kernel = get_kernel(name)
    inputs = kernel.inputs(args.sparsity, seed=args.seed, scale=args.scale)
    model = kernel.module()
    start = time.perf_counter()
    compiled = fuseflow.compile(model, inputs, fuseflow.Schedule(formats=dict(kernel.declared)))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    result = compiled.simulate(*inputs, engine=args.engine)
    sim_s = time.perf_counter() - start
    ok, err = _compare(result.output, model(*inputs), args.rtol, args.atol)
    return {
        "kernel": name, "description": kernel.description, "sparsity": args.sparsity,
        "scale": args.scale, "engine": args.engine, "cycles": result.cycles,
        "kernels": {k: r.cycles for k, r in result.stats.items()},
        "matches_pytorch": ok, "max_abs_error": err,
        "compile_seconds": round(compile_s, 3), "simulate_seconds": round(sim_s, 3),
    }


def cmd_run_app(args) -> int:
    from fuseflow.apps.base import FUSION_LEVELS, PRESETS, parse_choice
    from fuseflow.apps.runner import run_application, speedups

    preset = parse_choice(args.preset, PRESETS, "preset")
    levels = FUSION_LEVELS if args.fusion == "all" else (
        parse_choice(args.fusion, FUSION_LEVELS, "fusion configuration"),)
    records = run_application(args.target, preset, args.dataset, levels, args.engine,
                              args.seed, rtol=max(args.rtol, 1e-4), atol=args.atol)
    print(f"{args.target} ({records[0].dataset}, preset {preset}, engine {args.engine})")
    print(f"{'fusion':<9} {'cycles':>11} {'kernels':>7} {'ops':>11} {'vs PyTorch':<11} "
          f"{'max err':>9} {'compile s':>9} {'sim s':>8}")
    failures = 0
    for r in records:
        if r.error:
            failures += 1
            print(f"{r.fusion:<9} FAILED: {r.error}")
            continue
        failures += not r.matches_pytorch
        verdict = "match" if r.matches_pytorch else "MISMATCH"
        print(f"{r.fusion:<9} {r.cycles:>11} {len(r.kernels):>7} {r.ops:>11} {verdict:<11} "
              f"{r.max_abs_error:>9.2e} {r.compile_seconds:>9.2f} {r.simulate_seconds:>8.2f}")
        for kernel, cycles in r.kernels.items():
            print(f"    {kernel:<40} {cycles:>11}")
    ratios = speedups(records)
    if len(ratios) > 1:
        print("speedup over unfused: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"records": [r.to_dict() for r in records], "speedup_over_unfused": ratios,
                       "total_cycles": {r.fusion: r.cycles for r in records if not r.error}},
                      f, indent=2)
    return 1 if failures else 0


def cmd_run(args) -> int:
    from fuseflow.apps import APPLICATIONS
    from fuseflow.kernels import KERNELS

    if args.target in APPLICATIONS:
        return cmd_run_app(args)
    if args.target != "all" and args.target not in KERNELS:
        raise ValueError(f"unknown kernel or application {args.target!r}; valid: all, "
                         f"{', '.join(list(KERNELS) + list(APPLICATIONS))}")
    names = list(KERNELS) if args.target == "all" else [args.target]
    records, failures = [], 0
    print(f"{'kernel':<20} {'cycles':>10}  {'per kernel':<28} {'vs PyTorch':<12} {'max err':>9}")
    for name in names:
        rec = run_kernel(name, args)
        records.append(rec)
        failures += not rec["matches_pytorch"]
        per = ", ".join(f"{k}={c}" for k, c in rec["kernels"].items())
        verdict = "match" if rec["matches_pytorch"] else "MISMATCH"
        print(f"{name:<20} {rec['cycles']:>10}  {per:<28} {verdict:<12} {rec['max_abs_error']:>9.2e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=2)
    print(f"{len(records) - failures} of {len(records)} outputs match PyTorch")
    return 1 if failures else 0


def cmd_list(args) -> int:
    from fuseflow.apps import APPLICATIONS
    from fuseflow.kernels import KERNELS

    print("kernels:")
    for k in KERNELS.values():
        print(f"  {k.name:<20} {k.description}")
    print("applications:")
    for app in APPLICATIONS.values():
        print(f"  {app.name:<20} {app.title}; data sets: {', '.join(app.datasets)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fuseflow", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log compiler progress")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="compile, simulate and check a kernel ('all' for every one)")
    run.add_argument("target", help="kernel or application name (see 'fuseflow list') or 'all'")
    run.add_argument("--dataset", help="application data set (default: the preset's)")
    run.add_argument("--preset", default="tiny", help="application size: tiny, small, published")
    run.add_argument("--fusion", default="all",
                     help="application fusion configuration: unfused, partial, full or all")
    run.add_argument("--sparsity", type=float, default=0.5, help="fraction of zeros in sparse operands")
    run.add_argument("--scale", type=int, default=1, help="multiply every operand dimension")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--engine", default="reference", help="simulator engine")
    run.add_argument("--rtol", type=float, default=1e-5)
    run.add_argument("--atol", type=float, default=1e-5)
    run.add_argument("--json", help="write the records to this JSON file")
    run.set_defaults(func=cmd_run)
    lst = sub.add_parser("list", help="list the kernels")
    lst.set_defaults(func=cmd_list)
    add_view_parser(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    try:
        return args.func(args)
    except (KeyError, ValueError) as err:
        print(f"fuseflow: error: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

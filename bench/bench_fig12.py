"""The Figure 12 sweep timed point by point: wall seconds, peak memory and simulated tokens per
second of every application × data set × fusion configuration, and the sweep's total.

Runs ``fuseflow reproduce``'s sweep (:mod:`fuseflow.reproduce.sweep`: one forked worker per
point, ``--workers`` at once, a resumable cache in ``--out``) and writes a JSON record of every
point and the totals, then prints the slowest points. A rerun with the same ``--out`` resumes
(points already finished keep their measurements).

    python bench/bench_fig12.py                                   # tiny preset, every app
    python bench/bench_fig12.py --preset small --workers 1 --timeout 900
    python bench/bench_fig12.py --preset published --apps gcn,graphsage --timeout 1800
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import tempfile
import time
from pathlib import Path

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "fig12-{preset}.json"


def main(argv=None) -> int:
    from fuseflow.reproduce.sweep import SweepSettings, default_workers, run_sweep, sweep_points

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="tiny", choices=("tiny", "small", "published"))
    parser.add_argument("--apps", default=None, help="comma-separated applications")
    parser.add_argument("--datasets", default=None, help="comma-separated data sets")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: the cores not busy)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per point")
    parser.add_argument("--out", default=None,
                        help="sweep folder, the resumable cache (default: a temporary folder)")
    parser.add_argument("--json", default=None,
                        help="record to write (default: bench/results/fig12-<preset>.json)")
    args = parser.parse_args(argv)

    def names(value):
        return tuple(x for x in value.split(",") if x) if value else None

    points = sweep_points(args.preset, names(args.apps), names(args.datasets))
    settings = SweepSettings(workers=args.workers or default_workers(), timeout=args.timeout)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="fig12-"))
    start = time.perf_counter()
    records = run_sweep(points, out, settings,
                        lambda r, done, total: print(f"[{done}/{total}] {r.key}: {r.status} "
                                                     f"{r.wall_seconds} s", flush=True))
    wall = time.perf_counter() - start
    rows = []
    for r in records:
        seconds = r.get("simulate_seconds")
        rows.append({
            "key": r["key"], "status": r["status"], "wall_seconds": r["wall_seconds"],
            "compile_seconds": r.get("compile_seconds"), "simulate_seconds": seconds,
            "peak_rss_bytes": r.get("peak_rss_bytes"), "cycles": r.get("cycles"),
            "tokens": r.get("tokens"),
            "tokens_per_second": round(r["tokens"] / seconds) if r.get("tokens") and seconds
            else None,
            "extrapolated": bool(r.get("extrapolation")), "error": r.get("error")})
    doc = {
        "bench": "fig12", "preset": args.preset, "workers": settings.workers,
        "timeout": args.timeout, "sweep_wall_seconds": round(wall, 1),
        "point_wall_seconds": round(sum(r["wall_seconds"] or 0 for r in rows), 1),
        "peak_rss_bytes": max((r["peak_rss_bytes"] or 0 for r in rows), default=0),
        "statuses": {s: sum(r["status"] == s for r in rows) for s in
                     ("ok", "mismatch", "error", "timeout", "killed")},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(), "points": rows,
    }
    path = Path(args.json or str(DEFAULT_JSON).format(preset=args.preset))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(rows)} points, {doc['statuses']}, sweep {wall:.0f} s wall, points "
          f"{doc['point_wall_seconds']:.0f} s, peak worker RSS {doc['peak_rss_bytes'] / 2**30:.2f} "
          f"GiB")
    for r in sorted(rows, key=lambda r: -(r["wall_seconds"] or 0))[:8]:
        print(f"  {r['key']}: {r['wall_seconds']} s, {r['status']}, "
              f"{r['tokens_per_second'] or '-'} tokens/s")
    print(f"record: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

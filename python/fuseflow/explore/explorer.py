"""``fuseflow.explore(model, inputs, ...)``: search, then simulate the best candidates.

1. The op graph of the imported model (units: the plan's stages or FX nodes), once per
   reassociation variant (:mod:`fuseflow.explore.reassociate`: every subset of the chains
   of products, up to :data:`MAX_CHAINS` chains), joined into one graph where each chain's
   association is a choice (:mod:`fuseflow.explore.joint`).
2. One fusion search over it (:func:`fuseflow.explore.joint.joint_search`; without chains
   :func:`fuseflow.explore.search.search`), each candidate kernel a group under one
   schedule choice (order, lanes, tiles: :mod:`fuseflow.explore.axes`) scored by the cost
   model: the Pareto front of predicted cycles, on-chip buffer bytes, bytes materialized
   and lanes.
3. The ``top`` fastest predicted solutions, and the plan's named configurations
   (unfused / partial / full) for comparison, simulated as Dask tasks, cached on disk
   (:mod:`fuseflow.explore.sweep`).
4. A ranked table, JSON (:meth:`Exploration.to_dict`) and a PNG of the front
   (:meth:`Exploration.plot`).
"""

from __future__ import annotations

import copy
import itertools
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fuseflow.errors import FuseFlowError, check_int
from fuseflow.explore.axes import block_shapes, default_axes, lane_factors
from fuseflow.explore.costmodel import MeasuredCache, source
from fuseflow.explore.evaluate import OBJECTIVES, Cost, KernelEvaluator, Option, pareto
from fuseflow.explore.joint import joint_search
from fuseflow.explore.opgraph import program_graph
from fuseflow.explore.reassociate import chains, reassociate
from fuseflow.explore.search import Solution, search
from fuseflow.explore.sweep import (
    Payload,
    Point,
    PointCache,
    _digest,
    data_digest,
    point_key,
    predict_point,
    simulate_points,
)
from fuseflow.grouping import kernel_label

log = logging.getLogger(__name__)

MAX_CHAINS = 3
"""Chains of products considered for reassociation (every subset of them is a variant)."""


@dataclass(frozen=True)
class Candidate:
    """A searched solution in a reassociation variant."""

    solution: Solution
    reassociated: tuple
    units: tuple[str, ...]

    @property
    def fusion(self) -> tuple[tuple[str, ...], ...]:
        return self.solution.fusion(list(self.units))

    @property
    def cost(self):
        return self.solution.cost

    def point(self, name: str) -> Point:
        fusion = self.fusion
        index = {frozenset(g): i for i, g in enumerate(fusion)}
        label = {o.group: kernel_label(index[o.group], fusion[index[o.group]])
                 for o in self.solution.kernels}
        kernels = sorted(self.solution.kernels, key=lambda o: label[o.group])
        return Point(name, fusion, tuple((label[o.group], o.order) for o in kernels),
                     tuple(str(c) for c in self.reassociated),
                     tuple((label[o.group], o.parallel) for o in kernels if o.parallel),
                     tuple((label[o.group], o.block) for o in kernels if o.block))


@dataclass
class Exploration:
    """What :func:`explore` found: the predicted front, the simulated points, timings."""

    front: list[Candidate]
    points: list[dict]
    """Every simulated point: name, fusion, orders, reassociation, predicted cost (searched
    points), simulated cycles and totals, ``cached``; ranked by simulated cycles."""
    search: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)

    @property
    def best(self) -> dict:
        """The fastest simulated point."""
        return self.points[0]

    def named_speedup(self) -> tuple[str, float] | None:
        """The fastest of the plan's named configurations (unfused, partial, full) and how
        many times faster than it the best point is (None without simulated named ones)."""
        named = [p for p in self.points if isinstance(p["fusion"], str)
                 and p["simulated"].get("cycles")]
        if not named or not self.points[0]["simulated"].get("cycles"):
            return None
        fastest = min(named, key=lambda p: p["simulated"]["cycles"])
        return fastest["name"], fastest["simulated"]["cycles"] / self.best["simulated"]["cycles"]

    def to_dict(self) -> dict:
        vs = self.named_speedup()
        return {"best": self.best["name"] if self.points else None,
                "best_named": {"name": vs[0], "speedup": vs[1]} if vs else None,
                "points": self.points,
                "front": [{"fusion": [list(g) for g in c.fusion],
                           "reassociated": [str(x) for x in c.reassociated],
                           "orders": [list(o.order) for o in c.solution.kernels],
                           "parallel": [[list(p) for p in o.parallel]
                                        for o in c.solution.kernels],
                           "blocks": [list(o.block) for o in c.solution.kernels],
                           "predicted": dict(zip(OBJECTIVES, c.cost.as_tuple()))}
                          for c in self.front],
                "search": self.search, "counters": self.counters}

    COLUMNS = ("rank", "point", "kernels", "lanes", "cycles", "vs best", "predicted",
               "vs PyTorch", "cached")
    """The ranked table's columns (:meth:`rows`)."""
    NUMERIC = frozenset({"rank", "lanes", "cycles", "vs best", "predicted"})
    """Its columns of numbers (right-aligned)."""

    def __str__(self) -> str:
        """The ranked table, the best point's kernels and the speed-up over the fastest
        named configuration, as plain text (what ``fuseflow explore`` prints)."""
        rows = [list(self.COLUMNS)] + self.rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.COLUMNS))]
        numeric = [name in self.NUMERIC for name in self.COLUMNS]
        lines = ["  ".join(cell.rjust(w) if right else cell.ljust(w)
                           for cell, w, right in zip(r, widths, numeric)).rstrip()
                 for r in rows]
        if self.points:
            best = self.best
            lines.append(f"best: {best['name']}" + (
                "" if isinstance(best["fusion"], str) else f" with {len(best['fusion'])} "
                "kernels"))
            lines += [f"  {line}" for line in kernel_lines(best)]
            if best.get("reassociated"):
                lines.append(f"  reassociated: {'; '.join(best['reassociated'])}")
        vs = self.named_speedup()
        if vs is not None:
            lines.append(f"vs the fastest named configuration ({vs[0]}): {vs[1]:.2f}x")
        lines += [f"failed: {name}: {error}" for name, error in self.failures()]
        return "\n".join(lines)

    def failures(self) -> list[tuple[str, str]]:
        """``(point, error)`` of every point that could not be simulated or predicted (the
        compiler's or simulator's error; the table says ``failed``)."""
        return [(p["name"], p["simulated"]["error"]) for p in self.points
                if "error" in p["simulated"]]

    def rows(self) -> list[list[str]]:
        """The ranked table's rows (:attr:`COLUMNS`)."""
        out = []
        base = self.points[0]["simulated"].get("cycles") if self.points else None
        for rank, p in enumerate(self.points, 1):
            sim = p["simulated"]
            cycles = sim.get("cycles")
            pred = p.get("predicted", {}).get("cycles")
            out.append([str(rank), p["name"], str(len(p["fusion"])) if not isinstance(
                p["fusion"], str) else p["fusion"], str(point_lanes(p)),
                f"{cycles:,.0f}" if cycles is not None else "failed" if "error" in sim
                else "?",
                f"{cycles / base:.2f}x" if cycles and base else "",
                f"{pred:,.0f}" if pred is not None else "",
                {True: "ok", False: "WRONG"}.get(sim.get("matches"), ""),
                "yes" if p.get("cached") else ""])
        return out

    def plot(self, path) -> Path:
        """A PNG: predicted front (cycles vs bytes materialized, colour: buffer bytes) and
        the simulated points."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = Path(path)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        if self.front:
            xs = [c.cost.materialized for c in self.front]
            ys = [c.cost.cycles for c in self.front]
            sc = ax.scatter(xs, ys, c=[c.cost.buffer for c in self.front], cmap="viridis",
                            marker="o", label="Pareto front (predicted)")
            fig.colorbar(sc, ax=ax, label="on-chip buffer bytes (predicted)")
        for p in self.points:
            cycles = p["simulated"].get("cycles")
            if cycles is None:
                continue
            ax.scatter([p["simulated"].get("bytes_written", 0)], [cycles], marker="x",
                       color="red" if p is self.points[0] else "black")
            ax.annotate(p["name"], (p["simulated"].get("bytes_written", 0), cycles),
                        fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel("bytes materialized off chip")
        ax.set_ylabel("cycles")
        ax.set_yscale("log")
        ax.set_title("fusion search: predicted front (o), simulated points (x)")
        ax.legend(loc="best", fontsize=8)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


def point_lanes(point: dict) -> int:
    """The most lanes any kernel of a point (as JSON) forks into."""
    most = 1
    for forks in point.get("parallel", {}).values():
        n = 1
        for _, factor in forks:
            n *= factor
        most = max(most, n)
    return most


def variants(program, limit: int = MAX_CHAINS, enabled: bool = True):
    """``(chains rewritten, program)`` for every subset of the model's first ``limit`` chains
    (only the original without ``enabled``)."""
    yield (), program
    if not enabled:
        return
    found = chains(program.module)[:limit]
    for k in range(1, len(found) + 1):
        for chosen in itertools.combinations(found, k):
            variant = copy.copy(program)
            variant.module = reassociate(program.module, chosen)
            yield chosen, variant


def search_variants(program, inputs, *, orders: int = 3, max_units=None, max_span=None,
                    reassociate_chains: bool = True, arch=None, formats=None, lanes=(1,),
                    blocks=((),), joint: bool = True):
    """The Pareto front over reassociation variants, and search statistics: one search over
    every association of the chains (:mod:`fuseflow.explore.joint`), or with ``joint=False``
    one search per variant, fronts merged (variants share tensor statistics either way, so
    both give the same front)."""
    axes = default_axes(orders, lanes, blocks)

    def make(variant):
        return KernelEvaluator(variant, inputs, orders=orders, arch=arch,
                               formats=dict(formats or {}), axes=axes)

    programs = list(variants(program, enabled=reassociate_chains))
    if joint and len(programs) > 1:
        found = chains(program.module)[:MAX_CHAINS]
        result = joint_search(program, inputs, found, programs, make, max_units=max_units,
                              max_span=max_span)
        front = [Candidate(s, chosen, units) for s, chosen, units in result.front]
        return pareto(front), [result.stats]
    candidates, stats, first = [], [], None
    for chosen, variant in programs:
        graph = program_graph(variant)
        evaluator = make(variant)
        if first is None:
            first = evaluator
        else:
            evaluator.share_with(first)
        result = search(graph, evaluator, max_units=max_units, max_span=max_span)
        stats.append({"reassociated": [str(c) for c in chosen], "units": len(graph),
                      "groups": result.groups, "candidates": result.candidates,
                      "space": result.space, "cuts": result.states,
                      "partial_solutions": result.labels, "batches": evaluator.batches,
                      "seconds": result.seconds, "best_predicted": result.best.cost.cycles
                      if result.front else None})
        candidates += [Candidate(s, chosen, tuple(graph.units)) for s in result.front]
    return pareto(candidates), stats


def explore(model, inputs, plan=None, *, arch=None, top: int = 5, configurations=None,
            orders: int = 3, lanes=(1,), blocks=((),),
            max_units: int | None = None, max_span: int | None = None,
            reassociate_chains: bool = True, formats=None, cache=None,
            scheduler: str | None = None, workers: int | None = None,
            progress=None, simulate: bool = True) -> Exploration:
    """Searches the fusion space of ``model`` (see the module doc) and simulates the ``top``
    fastest predicted solutions (and the fastest of each lane count:
    :func:`simulated_candidates`) and the plan's ``configurations`` (default: all of them).

    ``lanes``: lane counts a kernel may fork one level into (``(1, 2, 4)``; 1: no fork);
    ``blocks``: tile shapes for kernels with blocked operands (``((), (4, 4))``; ``()``:
    scalar values) (:mod:`fuseflow.explore.axes`); ``formats``: declared input formats
    (default: the plan's, ``plan.formats()``: the published workload's pruned weights);
    ``cache``: folder of simulated points (default:
    none kept); ``scheduler``: a Dask
    scheduler address (default: a LocalCluster of ``workers`` processes, every core);
    ``progress(name, cached)``: called per finished point; without ``simulate`` every point
    is predicted by the cost model in this process instead (models too large to simulate;
    nothing cached; each result says ``source: cost model``).
    """
    import fuseflow
    from fuseflow.sim.arch import Arch

    check_int(top, "top (fastest predicted solutions to simulate)", 0)
    check_int(orders, "orders (legal orders evaluated per candidate group)", 1)
    for name, value in (("max_units", max_units), ("max_span", max_span),
                        ("workers", workers)):
        if value is not None:
            check_int(value, name, 1)
    if arch is not None:
        Arch.of(arch)
    started = time.perf_counter()
    if formats is None:
        formats = plan.formats() if hasattr(plan, "formats") else {}
    program = fuseflow.Program(model, inputs, plan)
    graph = _text_digest(program.mlir())
    data = data_digest(list(inputs) + list(program.param_values))
    store = PointCache(Path(cache)) if cache is not None else _NoCache()
    searches = PointCache(Path(cache) / "searches") if cache is not None else _NoCache()
    search_key = _digest("search", graph, sorted((formats or {}).items()), data,
                         asdict(arch) if arch is not None else {}, orders,
                         [list(lane_factors(lanes)), [list(b) for b in block_shapes(blocks)]],
                         max_units, max_span,
                         reassociate_chains, MAX_CHAINS, fuseflow.__version__, _code_digest())
    saved = searches.get(search_key)
    if saved is not None:
        front, stats = [_candidate(c) for c in saved["front"]], saved["variants"]
    else:
        front, stats = search_variants(program, inputs, orders=orders, max_units=max_units,
                                       max_span=max_span, reassociate_chains=reassociate_chains,
                                       arch=arch, formats=formats, lanes=lanes, blocks=blocks)
        searches.put(search_key, {"front": [_saved(c) for c in front], "variants": stats})
    searched = time.perf_counter()
    ranked = simulated_candidates(front, top)
    points = [c.point(f"searched-{i + 1}") for i, c in enumerate(ranked)]
    predicted = {p.name: c.cost for p, c in zip(points, ranked)}
    if plan is not None:
        names = configurations if configurations is not None else list(plan.fusion_groups)
        points += [Point(name, name) for name in names]
    keys = [point_key(graph, data, arch, p, formats) for p in points]
    payload = Payload(model, tuple(inputs), plan, dict(formats))
    if simulate:
        results, counters = simulate_points(points, payload, keys, store,
                                            arch=arch, scheduler=scheduler, workers=workers,
                                            progress=progress)
    else:
        measured = [source(t) for t in inputs]
        cache = MeasuredCache()
        results = {}
        for p in points:
            try:
                results[p.name] = predict_point(program, payload, p, arch, measured, cache)
            except FuseFlowError as err:      # reported, not fatal, as a failed simulation
                log.warning("point %s failed: %s", p.name, err)
                results[p.name] = {"error": f"{type(err).__name__}: {err}"}
            if progress:
                progress(p.name, False)
        failed = sum("error" in r for r in results.values())
        counters = {"cached": 0, "simulated": 0, "predicted": len(points) - failed,
                    "cached_points": []}
    rows = []
    for point in points:
        row = {**point.to_dict(), "simulated": results.get(point.name, {}),
               "cached": point.name in counters["cached_points"]}
        if point.name in predicted:
            row["predicted"] = dict(zip(OBJECTIVES, predicted[point.name].as_tuple()))
        rows.append(row)
    rows.sort(key=lambda r: r["simulated"].get("cycles", float("inf")))
    counters["failed"] = sum("error" in r["simulated"] for r in rows)
    counters.update(search_cached=saved is not None, search_seconds=searched - started,
                    total_seconds=time.perf_counter() - started)
    return Exploration(front, rows, {"variants": stats}, counters)


def simulated_candidates(front: list[Candidate], top: int) -> list[Candidate]:
    """The ``top`` fastest predicted candidates, then the fastest of each lane count not among
    them (so the simulations show what fusion alone gives and what lanes add)."""
    ranked = sorted(front, key=lambda c: c.cost.cycles)
    chosen = ranked[:top]
    for lanes in sorted({c.cost.lanes for c in ranked}):
        if not any(c.cost.lanes == lanes for c in chosen):
            chosen.append(next(c for c in ranked if c.cost.lanes == lanes))
    return chosen


def _saved(c: Candidate) -> dict:
    """A searched candidate as JSON (the search's own cache)."""
    return {"units": list(c.units), "reassociated": [str(x) for x in c.reassociated],
            "cost": list(c.cost.as_tuple()),
            "kernels": [{"group": sorted(o.group), "order": list(o.order),
                         "cost": list(o.cost.as_tuple()), "ops": o.ops,
                         "bytes_read": o.bytes_read,
                         "parallel": [list(p) for p in o.parallel], "block": list(o.block)}
                        for o in c.solution.kernels]}


def _candidate(doc: dict) -> Candidate:
    """The candidate :func:`_saved` wrote (chains by their names, as points record them)."""
    kernels = tuple(Option(frozenset(k["group"]), tuple(k["order"]), Cost(*k["cost"]),
                           k["ops"], k["bytes_read"],
                           tuple((v, f) for v, f in k.get("parallel", ())),
                           tuple(k.get("block", ()))) for k in doc["kernels"])
    return Candidate(Solution(kernels, Cost(*doc["cost"])), tuple(doc["reassociated"]),
                     tuple(doc["units"]))


def _code_digest() -> str:
    """A digest of the explorer's and cost model's source: a cached search is redone when
    the code that scored it changes."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


def _text_digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def kernel_lines(point: dict) -> list[str]:
    """One line per kernel of a searched point: its units, order, lanes and tiles (a named
    configuration's point: none)."""
    from fuseflow.grouping import kernel_label

    if isinstance(point["fusion"], str):
        return []
    lines = []
    for i, group in enumerate(point["fusion"]):
        name = kernel_label(i, tuple(group))
        order = point.get("orders", {}).get(name)
        forks = point.get("parallel", {}).get(name)
        block = point.get("blocks", {}).get(name)
        extra = [",".join(order)] if order else []
        if forks:
            extra.append(" ".join(f"{v}:{f} lanes" for v, f in forks))
        if block:
            extra.append("tiles " + "x".join(map(str, block)))
        lines.append(f"[{', '.join(group)}]" + (f"  ({'; '.join(extra)})" if extra else ""))
    return lines


class _NoCache:
    """No point cache (``explore(cache=None)``): nothing read or kept, no kernel cache."""

    root = None

    def get(self, key):
        return None

    def put(self, key, result):
        pass

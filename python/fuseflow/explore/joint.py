"""Reassociation inside one fusion search: every chain's association is a choice the join
makes, and a candidate kernel that does not depend on it is evaluated once.

Reassociating a chain (:mod:`fuseflow.explore.reassociate`) keeps the units' names and flips
the dependence of the chain's two units; every other unit keeps its ops and, except for which
unit computes the chain's result, its producers. So the *joint* op graph has each unit that
holds a product of a chain once per association of the chains it holds (``layer1.aggregate@o``
and ``layer1.aggregate@r``) and every other unit once. Each reassociation variant (a subset
of the chains rewritten) is an ordinary op graph whose units map into the joint one.

A cut of the joint graph covers some units; the units of a chain it covers fix that chain's
association (a cut covering both ``@o`` and ``@r`` units of one chain is never formed), the
others are still open. A candidate group joins a cut when the two fix no chain differently
and, in *every* variant that agrees with both, the group's producers outside it are covered:
so the kernels of a complete solution run in a topological order of its variant's graph (a
legal partition of it, each group convex in it). Every legal partition of every variant is
reached this way, with the same costs, so the front at the complete cuts is the front the
per-variant searches merge to (``test_joint.py`` checks it on GCN).

Candidate kernels are shared between variants: a group is evaluated in the first variant
that has it (variants share the statistics of every tensor, so a kernel reading the chain's
result costs the same whichever association computed it: the reassociated product's result
takes the statistics the original's has, :meth:`~fuseflow.explore.evaluate.KernelEvaluator.
share_with`), and only groups holding a chain's units are evaluated once per association.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace

from fuseflow.explore.evaluate import ZERO, pareto
from fuseflow.explore.opgraph import OpGraph
from fuseflow.explore.search import Solution, count_space, extend

ORIGINAL, REASSOCIATED = "o", "r"


@dataclass
class JointGraph:
    """The op graphs of every reassociation variant, their units named in one graph."""

    chains: tuple
    """The chains considered (:class:`~fuseflow.explore.reassociate.Chain`)."""
    variants: list[tuple[frozenset, OpGraph]]
    """(indices of the chains rewritten, the variant's op graph), the original first."""
    holds: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Unit -> the chains whose products it holds (those units are named per association)."""

    def __post_init__(self):
        self.units: list[str] = []
        self.plain: dict[str, str] = {}
        self.fixes: dict[str, dict[int, str]] = {}
        self.preds: list[dict[str, frozenset]] = []
        for chosen, graph in self.variants:
            preds = {}
            for u in graph.units:
                j = self.name(u, chosen)
                if j not in self.plain:
                    self.units.append(j)
                    self.plain[j] = u
                    self.fixes[j] = {c: self.association(c, chosen) for c in self.holds.get(u, ())}
                preds[j] = frozenset(self.name(p, chosen) for p in graph.preds[u])
            self.preds.append(preds)
        self.size = len(self.variants[0][1].units)

    @staticmethod
    def association(chain: int, chosen) -> str:
        return REASSOCIATED if chain in chosen else ORIGINAL

    def name(self, unit: str, chosen) -> str:
        """The joint name of ``unit`` in the variant rewriting the chains ``chosen``."""
        held = self.holds.get(unit, ())
        if not held:
            return unit
        return unit + "@" + "".join(self.association(c, chosen) for c in held)

    def group(self, group, chosen) -> frozenset:
        return frozenset(self.name(u, chosen) for u in group)

    def fixed(self, units) -> dict[int, str] | None:
        """The associations ``units`` fix (None: they fix a chain both ways)."""
        out: dict[int, str] = {}
        for u in units:
            for c, a in self.fixes[u].items():
                if out.setdefault(c, a) != a:
                    return None
        return out

    def agreeing(self, fixed: dict[int, str]) -> list[int]:
        """Indices of the variants that agree with ``fixed``."""
        return [i for i, (chosen, _) in enumerate(self.variants)
                if all(self.association(c, chosen) == a for c, a in fixed.items())]

    def variant_of(self, fixed: dict[int, str]) -> int:
        """The variant whose rewritten chains are exactly those ``fixed`` reassociated."""
        chosen = frozenset(c for c, a in fixed.items() if a == REASSOCIATED)
        return next(i for i, (c, _) in enumerate(self.variants) if c == chosen)


def joint_graph(program, found_chains, variant_programs) -> JointGraph:
    """The joint graph of ``program`` over the chains ``found_chains`` and the variants
    ``variant_programs`` ((chains rewritten, program) pairs, the original first)."""
    from fuseflow.explore.opgraph import program_graph

    variants = []
    index = {c: i for i, c in enumerate(found_chains)}
    for chosen, variant in variant_programs:
        variants.append((frozenset(index[c] for c in chosen), program_graph(variant)))
    base = variants[0][1]
    holds: dict[str, tuple[int, ...]] = {}
    for u in base.units:
        nodes = set(base.nodes.get(u, ()))
        held = tuple(i for i, c in enumerate(found_chains) if {c.inner, c.outer} & nodes)
        if held:
            holds[u] = held
    return JointGraph(tuple(found_chains), variants, holds)


def joint_join(jg: JointGraph, options: dict[frozenset, list]) -> tuple[list[Solution], dict]:
    """The FFM join over the joint graph (see the module doc): the Pareto front of complete
    solutions over every association of the chains, and counters."""
    by_source: dict[str, list] = {}
    for group, opts in options.items():
        kept = pareto(opts)
        fixed = jg.fixed(group)
        if not kept or fixed is None:
            continue
        external = {}
        sources = set(group)
        for v in jg.agreeing(fixed):
            preds = jg.preds[v]
            external[v] = frozenset(p for u in group for p in preds[u] if p not in group)
            sources -= {u for u in group if preds[u] & group}
        for u in sources or group:
            by_source.setdefault(u, []).append((group, fixed, external, kept))
    labels: dict[frozenset, list[Solution]] = {frozenset(): [Solution((), ZERO)]}
    fixes: dict[frozenset, dict] = {frozenset(): {}}
    pending = {0: [frozenset()]}
    complete: list[Solution] = []
    visited = kept_labels = 0
    for size in range(jg.size + 1):
        for cut in pending.pop(size, []):
            front = pareto(labels.pop(cut))
            visited += 1
            kept_labels += len(front)
            if size == jg.size:
                complete += front
                continue
            have = fixes.pop(cut)
            seen: set[frozenset] = set()
            for u in jg.units:
                if u in cut:
                    continue
                for group, fixed, external, opts in by_source.get(u, ()):
                    if group in seen or not cut.isdisjoint(group):
                        continue
                    merged = dict(have)
                    if any(merged.setdefault(c, a) != a for c, a in fixed.items()):
                        continue
                    agreeing = jg.agreeing(merged)
                    if not all(external[v] <= cut for v in agreeing if v in external):
                        continue
                    seen.add(group)
                    if extend(labels, pending, cut | group, front, opts):
                        fixes[cut | group] = merged
    return pareto(complete), {"states": visited, "labels": kept_labels}


@dataclass
class JointResult:
    """The front over every association (each solution with the chains it reassociates, its
    kernels' groups in plain unit names) and how the search went."""

    front: list[tuple[Solution, tuple, tuple[str, ...]]]
    """(solution, chains reassociated, the variant's units in program order)."""
    stats: dict


def joint_search(program, inputs, found_chains, variant_programs, make_evaluator,
                 max_units=None, max_span=None) -> JointResult:
    """One search over every reassociation of ``found_chains`` (see the module doc).
    ``make_evaluator(variant_program)`` returns a
    :class:`~fuseflow.explore.evaluate.KernelEvaluator` for a variant."""
    start, cpu = time.perf_counter(), time.process_time()
    variant_programs = list(variant_programs)
    jg = joint_graph(program, found_chains, variant_programs)
    options: dict[frozenset, list] = {}
    first = None
    per_variant = []
    for (chosen, graph), (_, variant) in zip(jg.variants, variant_programs):
        evaluator = make_evaluator(variant)
        if first is None:
            first = evaluator
        else:
            evaluator.share_with(first)
        groups = graph.groups(max_units=max_units, max_span=max_span)
        new = [g for g in groups if jg.group(g, chosen) not in options]
        evaluator.graph = graph
        evaluator.baseline(graph.units)
        evaluator.evaluate(new, graph.units)
        for g in new:
            j = jg.group(g, chosen)
            options[j] = [replace(o, group=j) for o in evaluator.options(g)]
        per_variant.append({"reassociated": sorted(chosen), "groups": len(groups),
                            "evaluated_groups": len(new), "candidates": evaluator.evaluated,
                            "batches": evaluator.batches})
    evaluated = time.perf_counter()
    front, counters = joint_join(jg, options)
    out = []
    seen = set()
    for sol in front:
        fixed = jg.fixed([u for o in sol.kernels for u in o.group])
        v = jg.variant_of(fixed)
        chosen, graph = jg.variants[v]
        kernels = tuple(replace(o, group=frozenset(jg.plain[u] for u in o.group))
                        for o in sol.kernels)
        plain = Solution(kernels, sol.cost)
        key = (plain.key(), chosen)
        if key in seen:
            continue
        seen.add(key)
        out.append((plain, tuple(found_chains[c] for c in sorted(chosen)), tuple(graph.units)))
    space = 0
    for chosen, graph in jg.variants:
        opts = {g: options.get(jg.group(g, chosen), [])
                for g in graph.groups(max_units=max_units, max_span=max_span)}
        space += count_space(graph, {g: [replace(o, group=g) for o in v] for g, v in
                                     opts.items()})
    stats = {"joint": True, "chains": [str(c) for c in found_chains], "units": jg.size,
             "joint_units": len(jg.units), "groups": len(options),
             "candidates": sum(len(o) for o in options.values()), "space": space,
             "cuts": counters["states"], "partial_solutions": counters["labels"],
             "variants": per_variant, "seconds": time.perf_counter() - start,
             "evaluate_seconds": evaluated - start, "join_seconds":
             time.perf_counter() - evaluated, "cpu_seconds": time.process_time() - cpu,
             "best_predicted": out[0][0].cost.cycles if out else None}
    return JointResult(out, stats)


def subsets(items):
    """Every subset of ``items``, the empty one first."""
    for k in range(len(items) + 1):
        yield from itertools.combinations(items, k)


__all__ = ["JointGraph", "JointResult", "joint_graph", "joint_join", "joint_search"]

"""Sweeps of one kernel's schedule axes: its dataflow order and its parallel level and factor.

>>> points = fuseflow.sweep.sweep(compiled, inputs, kernel=0, factors=(1, 2, 4))
>>> best = min(points, key=lambda p: p.cycles)

For each legal order of the kernel (best first, at most ``orders``), each level the order can
fork (``levels``: ``"outermost"``, ``"all"`` or loop names; see
:meth:`~fuseflow.scheduling.KernelInfo.parallel_variables`) and each lane count of
``factors`` (1: no lanes, once per order), the kernel is rescheduled alone
(:meth:`~fuseflow.CompiledModel.reschedule`), simulated and checked against ``expected``.
Each point gives the kernel's cycles, its speedup over the compiled schedule, the cost
model's predicted tokens and the model's total cycles. ``blocks`` adds the block axis:
``()`` is scalar values, ``(b, c)`` tiles as values (a kernel with BSR operands of that
block, ``docs/lowering.md``); lanes that fork an in-block offset, which tiles do not
iterate, are left out of the tile points.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from fuseflow.errors import ArgumentError


@dataclass
class SweepPoint:
    """One schedule of the swept kernel and what it costs."""

    kernel: str
    index: int
    order: tuple[str, ...]
    parallel: tuple[tuple[str, int], ...]
    lanes: int
    cycles: int = 0
    total_cycles: int = 0
    speedup: float = 0.0
    """The compiled schedule's kernel cycles over this point's."""
    tokens: float | None = None
    matches: bool | None = None
    block: tuple[int, ...] = ()
    """The schedule's block: tiles as values when non-empty."""

    @property
    def label(self) -> str:
        lanes = " ".join(f"{v}:{f}" for v, f in self.parallel) or "1 lane"
        tiles = f" · tiles {'x'.join(map(str, self.block))}" if self.block else ""
        return f"{','.join(self.order)} · {lanes}{tiles}"

    def to_dict(self) -> dict:
        out = asdict(self)
        out.update(order=list(self.order), parallel=[list(p) for p in self.parallel],
                   block=list(self.block), label=self.label)
        return out


def sweep(compiled, inputs, kernel=0, *, orders: int | None = None, levels="outermost",
          factors=(1, 2, 4), engine: str = "fast", arch=None, expected=None,
          rtol: float = 1e-4, atol: float = 1e-5, blocks=((),),
          progress: Callable[[str], None] | None = None) -> list[SweepPoint]:
    """Simulates the kernel ``kernel`` (index, name or part of one) of ``compiled`` under every
    schedule of the axes (see the module doc); the points in sweep order."""
    from fuseflow.explore.costmodel import CostModelError, predict
    from fuseflow.orders import select_kernel
    from fuseflow.tools.execute import compare

    from fuseflow.compiler import CompileError

    factors = _factors(factors)
    blocks = _blocks(blocks)
    info = select_kernel(compiled.kernels, kernel)
    baseline = None
    points = []
    seen_tiles: set = set()
    for (order, parallel), block in ((s, b) for b in blocks
                                     for s in schedules(info, orders, levels, factors)):
        if progress is not None:
            progress(f"{info.name}: {','.join(order)} {dict(parallel) or ''}"
                     f"{' tiles ' + 'x'.join(map(str, block)) if block else ''}")
        same = tuple(order) == tuple(info.schedule.order) and not parallel and not block
        try:
            variant = compiled if same else compiled.reschedule(
                info.index, order=order, parallel=dict(parallel) or None, block=block or None)
        except CompileError:
            if not block:
                raise
            continue  # lanes over an in-block offset: tiles do not iterate it
        if block:  # orders that differ only where they place the offsets: one tile schedule
            key = (variant.kernels[info.index].einsum, variant.mlir("sam").count("sam."),
                   parallel, block)
            if key in seen_tiles:
                continue
            seen_tiles.add(key)
        result = variant.simulate(*inputs, engine=engine, arch=arch)
        lanes = 1
        for _, factor in parallel:
            lanes *= factor
        point = SweepPoint(info.name, info.index, tuple(order), tuple(parallel), lanes,
                           result.run.kernels[info.index].result.cycles, result.cycles,
                           block=tuple(block))
        if same:
            baseline = point.cycles
        try:
            if not block:  # the cost model predicts scalar values
                point.tokens = predict(variant, *inputs, arch=arch).kernels[info.index].tokens
        except CostModelError:
            pass
        if expected is not None:
            point.matches = compare(result.output, expected, rtol, atol)[0]
        points.append(point)
    if baseline is None:
        baseline = compiled.simulate(*inputs, engine=engine, arch=arch).run.kernels[
            info.index].result.cycles
    for point in points:
        point.speedup = round(baseline / point.cycles, 3) if point.cycles else 0.0
    return points


def schedules(info, orders: int | None, levels, factors) -> list:
    """The ``(order, parallel)`` pairs of the sweep of kernel ``info``."""
    found = []
    for order in info.legal_orders(orders):
        forkable = info.parallel_variables(order)
        if levels == "outermost":
            chosen = forkable[:1]
        elif levels == "all":
            chosen = forkable
        else:
            chosen = tuple(v.strip() for v in levels.split(",")) if isinstance(levels, str) \
                else tuple(levels)
            wrong = [v for v in chosen if v not in forkable]
            if wrong:
                raise ArgumentError(f"levels {', '.join(wrong)} cannot be forked under order "
                                    f"{','.join(order)}; forkable: {', '.join(forkable)}")
        for factor in factors:
            if factor == 1:
                found.append((tuple(order), ()))
            else:
                found += [(tuple(order), ((var, factor),)) for var in chosen]
    return found


def _blocks(blocks) -> tuple[tuple[int, ...], ...]:
    values = tuple(tuple(b) for b in blocks)
    if not values or not all(all(isinstance(n, int) and n >= 1 for n in b) for b in values):
        raise ArgumentError(f"blocks must be tile shapes like (4, 4), or () for scalar values, "
                            f"got {blocks!r}")
    return values


def _factors(factors) -> tuple[int, ...]:
    values = tuple(factors)
    if not values or not all(isinstance(f, int) and not isinstance(f, bool) and f >= 1
                             for f in values):
        raise ArgumentError(f"factors must be lane counts >= 1, got {factors!r}")
    return values

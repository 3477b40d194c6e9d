"""Intersecter and unioner: co-iteration of sorted fibers.

Inputs are ``n`` coordinate streams followed by ``m`` reference streams; ``attrs['ref_groups']
[i]`` references travel with coordinate input ``i`` (default: one each). Outputs are the joined
coordinate stream and the ``m`` references in input order. Every step costs one cycle: one
distinct coordinate of the union of the current fibers, one skipped ``N``, one stop, or ``D``.
"""

from __future__ import annotations

from fuseflow.sim.tokens import DONE, EMPTY, is_data


def ref_ports(ctx):
    """The number of crd inputs and the reference input ports of each (from ``ref_groups``)."""
    block = ctx.block
    groups = block.attrs.get("ref_groups")
    if groups is None:
        if len(block.inputs) % 2:
            ctx.error("without ref_groups a joiner needs one ref input per crd input")
        groups = [1] * (len(block.inputs) // 2)
    groups = [int(g) for g in groups]
    n = len(groups)
    if n + sum(groups) != len(block.inputs) or 1 + sum(groups) != len(block.outputs):
        ctx.error(f"ref_groups {groups} do not match {len(block.inputs)} inputs and {len(block.outputs)} outputs")
    ports, base = [], n
    for g in groups:
        ports.append(list(range(base, base + g)))
        base += g
    return n, ports


def _pop(ctx, i, ref_ports):
    """Dequeues coordinate input ``i`` and its references; returns the references."""
    yield from ctx.recv(i)
    refs = []
    for p in ref_ports[i]:
        refs.append((yield from ctx.recv(p)))
    return refs


def _join(ctx, union: bool):
    n, ports = ref_ports(ctx)
    while True:
        heads = []
        for i in range(n):
            heads.append((yield from ctx.peek(i)))
        if EMPTY in heads:
            yield from _pop(ctx, heads.index(EMPTY), ports)
            ctx.step()
            continue
        if all(h is DONE for h in heads):
            for i in range(n):
                yield from _pop(ctx, i, ports)
            yield from ctx.send_all(DONE)
            ctx.step()
            return
        if DONE in heads:
            ctx.error(f"inputs end at different points: heads {heads}")
        data = [h for h in heads if is_data(h)]
        if not data:
            if any(h != heads[0] for h in heads):
                ctx.error(f"inputs have different stop structure: heads {heads}")
            for i in range(n):
                yield from _pop(ctx, i, ports)
            yield from ctx.send_all(heads[0])
            ctx.step()
            continue
        cmin = min(data)
        if union:
            yield from ctx.send(0, cmin)
            out = 1
            for i in range(n):
                if is_data(heads[i]) and heads[i] == cmin:
                    refs = yield from _pop(ctx, i, ports)
                else:
                    refs = [EMPTY] * len(ports[i])
                for r in refs:
                    yield from ctx.send(out, r)
                    out += 1
        elif len(data) == n and all(h == cmin for h in heads):
            refs = []
            for i in range(n):
                refs += yield from _pop(ctx, i, ports)
            yield from ctx.send(0, cmin)
            for out, r in enumerate(refs, start=1):
                yield from ctx.send(out, r)
        else:
            for i in range(n):
                if is_data(heads[i]) and heads[i] == cmin:
                    yield from _pop(ctx, i, ports)
        ctx.step()


def intersect(ctx):
    """Emits the coordinates present in every input, with every input's references."""
    yield from _join(ctx, union=False)


def union(ctx):
    """Emits the coordinates present in any input; ``N`` for the references of absent inputs."""
    yield from _join(ctx, union=True)

"""Vectorized intersecter and unioner: co-iteration as one sorted merge of the coordinates.

Every input closes the same fibers with the same stops, so the inputs leave each fiber
together; within it the joiner's steps are the distinct coordinates of all inputs in order,
and a step pops the inputs whose head holds the step's coordinate (a stop: every input). The
merge, its clocks and its layout run compiled (``fast_merge``); each reference output is then
gathered from its input. Inputs with ``N`` coordinates, unsorted fibers or different stops go
to the reference implementation.
"""

from __future__ import annotations

import numpy as np

from fuseflow.sim.blocks.joiner import ref_ports
from fuseflow.sim.engines import fast_merge
from fuseflow.sim.engines.fast_stream import (
    CODE_DTYPE, TIME_DTYPE, Stream, check_stamps, coordinate_dtype, ends_with_done, finish,
)


def _mergeable(crds: list[Stream]) -> bool:
    """Whether the coordinate streams may go to the compiled merge (which checks the rest):
    integer coordinates, each stream ending with its only ``D``."""
    return all(ends_with_done(s) and s.data.dtype.kind == "i" for s in crds)


def _laid_end_to_end(streams: list[Stream]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The streams' codes, payloads and stamps (int64, shifts applied) laid end to end, and
    each stream's offset (plus the total)."""
    off = np.zeros(len(streams) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(s) for s in streams])
    time = np.empty(int(off[-1]), dtype=np.int64)
    for s, a, b in zip(streams, off[:-1], off[1:]):
        np.add(s.base, np.int64(s.shift), out=time[a:b])
    code = np.concatenate([s.code for s in streams])
    crd = np.concatenate([s.data for s in streams])
    return code, crd, time, off


def _reference_stamps(crds: list[Stream], refs: list[list[Stream]], off: np.ndarray):
    """Per token of each input, the latest stamp among its references stamped apart from it
    (int64, end to end like the inputs), and which inputs have such references."""
    latest = np.empty(int(off[-1]), dtype=np.int64)  # read only where has_ref
    has_ref = np.zeros(len(crds), dtype=np.bool_)
    for i, (c, group) in enumerate(zip(crds, refs)):
        apart = [r for r in group if not r.same_stamps(c)]  # stamped with the crds: never later than the peeked head
        if not apart:
            continue
        has_ref[i] = True
        out = latest[off[i]:off[i + 1]]
        np.add(apart[0].base, np.int64(apart[0].shift), out=out)
        for r in apart[1:]:
            np.maximum(out, r.base.astype(np.int64) + r.shift, out=out)
    return latest, has_ref


def _join(ctx, ins, union: bool):
    """Co-iteration in two compiled passes (``fast_merge``): one checks and counts the merge,
    one lays out the coordinates and the clocks; then each reference output is gathered."""
    n, ports = ref_ports(ctx)
    crds = ins[:n]
    refs = [[ins[p] for p in group] for group in ports]
    if not _mergeable(crds) or any(len(r) != len(c) for c, group in zip(crds, refs) for r in group):
        return None
    code, crd, time, off = _laid_end_to_end(crds)
    nsteps, common, top = fast_merge.merge_count(code, crd, off)
    if nsteps < 0:
        return None  # N coordinates, unsorted fibers or different stops: the reference
    latest, has_ref = _reference_stamps(crds, refs, off)
    ii, lat = ctx.ii, ctx.latency
    emitted = nsteps if union else common
    out_code = np.empty(emitted, dtype=CODE_DTYPE)
    out_crd = np.empty(emitted, dtype=coordinate_dtype(int(top) + 2))
    out_time = np.empty(emitted, dtype=TIME_DTYPE)
    src_row = np.cumsum([bool(group) for group in refs]) - 1  # a row per input with references
    src_row[[not group for group in refs]] = -1
    src = np.empty((int(src_row.max(initial=-1)) + 1, emitted), dtype=np.int32 if off[-1] < 2 ** 31 else np.int64)
    # a union's references wait for their own stamps from the first input with them on
    time_row = np.cumsum(has_ref) - 1 if union else np.full(n, -1)
    ref_time = np.empty((int(time_row.max(initial=-1)) + 1, emitted), dtype=TIME_DTYPE)
    last = fast_merge.merge_fill(code, crd, off, time, latest, has_ref, ii, lat, union, out_code, out_crd,
                                 out_time, src_row, src, time_row, ref_time)
    check_stamps(int(last) + ii + lat)  # computed in int64: the largest clock written, and its latency
    outs = [Stream(out_code, out_crd, out_time)]
    for i in range(n):
        stamps = out_time if time_row[i] < 0 else ref_time[time_row[i]]
        for r in refs[i]:
            data = r.data
            rc = np.empty(emitted, dtype=CODE_DTYPE)
            rd = np.empty((emitted,) + data.shape[1:], dtype=data.dtype)  # tiles: whole tiles kept
            fast_merge.gather_refs(src[src_row[i]], out_code, r.code, data, rc, rd)
            outs.append(Stream(rc, rd, stamps))
    return finish(ctx, ins, outs, None, ii, steps=nsteps, last=int(last))  # at most one token per step on every output


def intersect(ctx, ins):
    """Coordinates present in every input, with every input's references."""
    return _join(ctx, ins, union=False)


def union(ctx, ins):
    """Coordinates present in any input; ``N`` for the references of absent inputs."""
    return _join(ctx, ins, union=True)

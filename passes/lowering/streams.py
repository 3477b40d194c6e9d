"""Streams: the ``sam`` ops that realize planned spaces, values, reductions and writes.

:meth:`Streams.build` turns an iteration space (:mod:`.spaces`) into scanners, locators and
joiners and returns the coordinate stream and each participant's new reference (or value, for
a virtual tensor); participants a space does not mention are repeated. :meth:`Streams.evaluate`
reads values (arrays) and computes the body (ALUs); :meth:`Streams.reduce` reduces a
reduction's innermost variable with a reducer and the others with sparse accumulators;
:meth:`Streams.write` writes a result level by level. Every op is planned with the kernel's
:class:`~fuseflow.passes.lowering.builder.PlanBuilder`, located at the linalg op it comes from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fuseflow.dialects.types import storage_levels
from fuseflow.passes.lowering.background import scalar_op
from fuseflow.passes.lowering.einsum import Const, LoweringError, Reduce, Root, Use
from fuseflow.passes.lowering.spaces import Leaf, Universe, VLeaf, merge

if TYPE_CHECKING:
    from fuseflow.passes.lowering.lower import KernelLowering
    from fuseflow.passes.lowering.scopes import Scope


class Streams:
    """Plans the streams of one kernel's lowering."""

    def __init__(self, lowering: KernelLowering):
        self.lw = lowering
        self.contract: dict[int, tuple[str, ...]] = {}
        """Values as tiles: id of a ``mul`` that is a sum's body -> the tile axes it sums (a
        tile product)."""
        tiles = lowering.tiles
        if tiles is not None:
            for r in lowering.k.reduces():
                axes = tiles.reduced.get(r.rid, ())
                body = r.body
                if axes and r.kind == "sum" and getattr(body, "kind", None) == "mul" and \
                        len(body.args) == 2 and not any(isinstance(a, Const) for a in body.args):
                    self.contract[id(body)] = axes

    def axes(self, expr) -> tuple[str, ...]:
        """Values as tiles: the tile axes of ``expr``'s values (``()`` for scalars)."""
        tiles = self.lw.tiles
        if tiles is None or isinstance(expr, Const):
            return ()
        if isinstance(expr, Use):
            return tiles.uses[expr.uid]
        if isinstance(expr, Reduce):
            gone = tiles.reduced.get(expr.rid, ())
            return tuple(a for a in self.axes(expr.body) if a not in gone)
        found = set().union(*(self.axes(a) for a in expr.args))
        return tiles.sort(found - set(self.contract.get(id(expr), ())))

    def _tile_args(self, expr, operands) -> dict:
        """The ``tile`` argument of the ALU computing ``expr`` from ``operands`` (expressions),
        when their tiles differ from the result's (broadcast or tile product)."""
        out = self.axes(expr)
        ins = [self.axes(a) for a in operands]
        if all(a == out for a in ins):
            return {}
        letters = {a: chr(ord("a") + i) for i, a in enumerate(self.lw.tiles.axes)}
        spec = ",".join("".join(letters[a] for a in axes) for axes in ins) + "->" + \
            "".join(letters[a] for a in out)
        return {"tile": (spec, self.lw.tiles.shape(out))}

    def build(self, space, scope: Scope, var: str):
        """(crd, {stream key: stream}) for a planned space; keys ('u', uid) or ('v', rid)."""
        lw, b = self.lw, self.lw.b
        if isinstance(space, Leaf):
            u = space.use
            level_index = lw.next_level[u.uid]
            if level_index >= len(u.vars) or u.vars[level_index] != var:
                raise LoweringError(lw.k.loc, f"{u} takes part in several branches of the "
                                              f"iteration space over {var}; not supported yet")
            with b.at(u.loc):
                crd, ref = b.scan(lw.ref[u.uid], u.operand, u.levels[level_index], var)
            lw.next_level[u.uid] = level_index + 1
            return crd, {("u", u.uid): ref}
        if isinstance(space, VLeaf):
            virt = lw.virtual[space.rid]
            crd = virt.crds[var]
            virt.next += 1
            return crd, {("v", space.rid): virt.val if not virt.remaining() else None}
        if isinstance(space, Universe):
            crd, _ = b.range_scan(scope.iteration_ref(b), lw.k.sizes[var], var)
            return crd, {}
        located, drivers = lw.spaces.split_located(space, var)
        if located:
            crd, streams = self.build(merge(space.kind, drivers), scope, var)
            for leaf in located:
                u = leaf.use
                level_index = lw.next_level[u.uid]
                with b.at(u.loc):
                    streams[("u", u.uid)] = b.locate(lw.ref[u.uid], crd, u.operand,
                                                     u.levels[level_index])
                lw.next_level[u.uid] = level_index + 1
            return crd, streams
        parts = self._distinct([self.build(child, scope, var) for child in space.children])
        if len(parts) == 1:
            return parts[0]
        groups, keys = [], []
        for crd, streams in parts:
            if any(s is None for s in streams.values()):
                raise LoweringError(lw.k.loc, f"a fused intermediate is merged over {var} "
                                              "before its innermost level; choose another "
                                              "order or fusion")
            refs = list(dict.fromkeys(s for k, s in streams.items() if k[0] == "u"))
            vals = list(dict.fromkeys(s for k, s in streams.items() if k[0] == "v"))
            groups.append((crd, refs, vals))
            keys.append(streams)
        crd, out_refs, out_vals = b.joiner(space.kind, groups)
        result = {}
        for (_, refs, vals), streams, outs in zip(groups, keys, _split(out_refs, out_vals, groups)):
            renamed = dict(zip(refs + vals, outs))
            result.update({k: renamed[s] for k, s in streams.items()})
        return crd, result

    @staticmethod
    def _distinct(parts: list) -> list:
        """Merges joiner inputs that are the same streams (two uses of one tensor scanned from
        the same reference): joining a stream with itself would split its consumers."""
        merged: list = []
        for crd, streams in parts:
            mine = set(streams.values())
            for other_crd, other in merged:
                theirs = set(other.values())
                if other_crd == crd and len(mine) == 1 and mine == theirs and None not in mine:
                    other.update(streams)
                    break
            else:
                merged.append((crd, dict(streams)))
        return merged

    def set_stream(self, key, stream) -> None:
        """Records a participant's stream after a level (a reference, or a virtual value)."""
        if key[0] == "u":
            self.lw.ref[key[1]] = stream
        elif stream is not None:
            self.lw.virtual[key[1]].val = stream

    def repeat(self, key, crd, var: str) -> None:
        """Repeats a participant that does not index ``var`` once per coordinate of ``crd``."""
        lw = self.lw
        if key[0] == "u":
            with lw.b.at(lw.uses[key[1]].loc):
                lw.ref[key[1]] = lw.b.repeat(lw.ref[key[1]], crd)
            return
        virt = lw.virtual[key[1]]
        if virt.remaining():
            raise LoweringError(lw.k.loc, f"the order visits {var} between the levels "
                                          f"({', '.join(virt.levels)}) of a fused "
                                          "intermediate; choose another order or fusion")
        with lw.b.at(virt.origin):
            virt.val = lw.b.repeat(virt.val, crd)

    # Values -----------------------------------------------------------------------------
    def evaluate(self, expr):
        """The value stream of ``expr`` at the current iteration."""
        lw, b = self.lw, self.lw.b
        if isinstance(expr, Use):
            with b.at(expr.loc):
                tile = lw.tiles.shape(self.axes(expr)) if lw.tiles is not None else ()
                return b.array(lw.ref[expr.uid], expr.operand, tile)
        if isinstance(expr, Reduce):
            return lw.virtual[expr.rid].val
        if isinstance(expr, Const) or all(isinstance(a, Const) for a in expr.args):
            raise LoweringError(lw.k.loc, "a kernel whose value does not depend on any tensor "
                                          "is not supported")
        if expr.kind == "mask_fill":
            mask, x = expr.args
            if isinstance(mask, Const) or isinstance(x, Const):
                raise LoweringError(lw.k.loc, "a masked fill of a constant is not supported")
            mask_vals, x_vals = self.evaluate(mask), self.evaluate(x)
            with b.at(expr.loc):
                return b.alu("mask_fill", mask_vals, x_vals, scalar=expr.fill,
                             **self._tile_args(expr, (mask, x)))
        if len(expr.args) == 1:
            vals = self.evaluate(expr.args[0])
            with b.at(expr.loc):
                return b.alu(expr.kind, vals)
        lhs, rhs = expr.args
        if isinstance(rhs, Const):
            vals = self.evaluate(lhs)
            with b.at(expr.loc):
                return scalar_op(b, expr.kind, vals, rhs.value, reverse=False)
        if isinstance(lhs, Const):
            vals = self.evaluate(rhs)
            with b.at(expr.loc):
                return scalar_op(b, expr.kind, vals, lhs.value, reverse=True)
        lhs_vals, rhs_vals = self.evaluate(lhs), self.evaluate(rhs)
        with b.at(expr.loc):
            return b.alu(expr.kind, lhs_vals, rhs_vals, **self._tile_args(expr, (lhs, rhs)))

    # Reductions and writers ------------------------------------------------------------
    def reduce(self, r: Reduce, scope: Scope, vals):
        """Reduces ``vals`` over ``r``'s bound variables: (values, {free var: crd})."""
        b = self.lw.b
        live = list(scope.vars)
        crds = dict(scope.crd)
        in_tile = {}
        if self.lw.tiles is not None:
            have = self.axes(r.body)
            out = self.axes(r)
            if have != out:  # tile axes the body still has: each tile reduced first
                letters = {a: chr(ord("a") + i) for i, a in enumerate(self.lw.tiles.axes)}
                in_tile = {"tile": ("".join(letters[a] for a in have) + "->" +
                                    "".join(letters[a] for a in out), self.lw.tiles.shape(out))}
        for var in reversed(scope.vars):
            if var not in r.vars:
                continue
            below = live[live.index(var) + 1:]
            if not below:
                vals = b.reduce(r.kind, vals, self._outer_if_sparse(scope, live, var, crds),
                                **in_tile)
                in_tile = {}
            else:
                if in_tile:
                    raise LoweringError(self.lw.k.loc, "values as tiles: a reduction over "
                                                       "in-block offsets and a non-innermost "
                                                       "index variable is not supported")
                if r.kind != "sum":
                    raise LoweringError(self.lw.k.loc, "a max reduction over a non-innermost "
                                                       "index variable is not supported")
                new_crds, vals = b.spacc([crds[v] for v in below], vals)
                crds.update(zip(below, new_crds))
            live.remove(var)
        if r.init is not None:
            vals = b.alu("scalar_add" if r.kind == "sum" else "scalar_max", vals,
                         scalar=r.init)
        return vals, crds

    def _outer_if_sparse(self, scope: Scope, live: list[str], var: str, crds: dict):
        """The coordinates of the level above ``var`` if its fibers can be empty: a reducer
        needs them to tell an empty fiber of ``var`` from an empty outer fiber."""
        index = live.index(var)
        if index > 0:
            outer = crds[live[index - 1]]
        elif scope.context:
            outer = scope.context[-1][1]
        else:
            return None                     # the root's single fiber
        return None if outer in self.lw.never_empty else outer

    def write(self, root: Root, vals, crds) -> None:
        """Writes result ``root``: its levels' coordinates (dropping empty fibers above
        sparse levels) and its values."""
        b = self.lw.b
        _, levels = storage_levels(root.result_type)
        if self.lw.tiles is not None and self.axes(root.expr) != self.lw.tiles.roots[root.index]:
            raise LoweringError(self.lw.k.loc, f"values as tiles: result #{root.index} is "
                                               "written over in-block offsets its value does "
                                               "not depend on (or in another order)")
        streams = [crds[v] for v in root.out_vars]
        for lvl in range(len(streams) - 2, -1, -1):
            if levels[lvl].format != "dense":
                streams[lvl + 1], streams[lvl] = b.crddrop(streams[lvl + 1], streams[lvl])
        for lvl, crd in enumerate(streams):
            b.level_write(crd, root.index, lvl)
        b.value_write(vals, root.index)


def _split(out_refs: list, out_vals: list, groups: list) -> list[list]:
    """A joiner's output streams per input group (its references, then its values)."""
    per_group, r, v = [], 0, 0
    for _, refs, vals in groups:
        per_group.append(out_refs[r:r + len(refs)] + out_vals[v:v + len(vals)])
        r, v = r + len(refs), v + len(vals)
    return per_group

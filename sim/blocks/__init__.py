"""Streaming primitives, one module per family, as generator functions of a block context.

``IMPLEMENTATIONS`` maps every block kind of :mod:`fuseflow.sim.graph` to its implementation.
A block function takes the context ``ctx`` of its block and communicates only through it:
``tok = yield from ctx.recv(port)`` / ``ctx.peek(port)`` wait for and return an input token
(advancing the block's clock to the token's stamp), ``yield from ctx.send(port, tok)`` /
``ctx.send_all(tok)`` emit at the current clock plus latency, and ``ctx.step()`` ends a step
(the clock advances by the initiation interval). ``ctx.block``, ``ctx.tensor()``,
``ctx.output_format()``, ``ctx.sink``, ``ctx.stats`` and ``ctx.error(msg)`` give the rest.
"""

from fuseflow.sim.blocks.alu import alu
from fuseflow.sim.blocks.array import array
from fuseflow.sim.blocks.crd import crddrop, crdhold
from fuseflow.sim.blocks.fork import broadcast, fork, join
from fuseflow.sim.blocks.joiner import intersect, union
from fuseflow.sim.blocks.reduce import reduce
from fuseflow.sim.blocks.repeat import repeat, repsiggen
from fuseflow.sim.blocks.scan import locate, root, scan
from fuseflow.sim.blocks.spacc import spacc
from fuseflow.sim.blocks.write import level_write, value_write

IMPLEMENTATIONS = {
    "root": root, "scan": scan, "locate": locate, "repsiggen": repsiggen, "repeat": repeat,
    "intersect": intersect, "union": union, "array": array, "alu": alu, "reduce": reduce,
    "spacc": spacc, "crddrop": crddrop, "crdhold": crdhold, "level_write": level_write,
    "value_write": value_write, "fork": fork, "join": join, "broadcast": broadcast,
}

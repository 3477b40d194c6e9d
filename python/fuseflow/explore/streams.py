"""Stream profiles: the token counts of a stream without its tokens.

A stream is a flattened fiber tree (``shared/reference/sam-streams.md``). Its profile keeps,
for each level of that tree from the outermost down to the stream's own, a :class:`Level`:
the data tokens of that level's stream (coordinates, references or values; ``N`` included),
how many of them are ``N``, its stop tokens and, among those, the *bare* stops (stops with no
data before them: an empty fiber of this level or one mirrored from an enclosing level). The
root stream (``0 D``) is the single level ``Level(items=1)``.

By the scanner rule (``docs/timing.md``) a child level has one fiber per parent data token,
closed by one stop, plus one bare stop per bare parent stop:

    stops(child) = items(parent) + bare(parent)
    bare(child)  = empty fibers(child) + bare(parent)

and a stream of ``items`` data tokens and ``stops`` stops has ``items + stops + 1`` tokens
(``D`` last).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields

import numpy as np


@dataclass(slots=True, eq=False)
class Level:
    """Token counts of one level of a stream's fiber tree. Treated as immutable (rules build
    new levels; :meth:`with_` copies); not frozen, which makes building one several times
    cheaper."""

    items: float
    """Data tokens (``N`` included)."""
    nulls: float = 0.0
    """``N`` tokens among the data tokens."""
    stops: float = 0.0
    """Stop tokens."""
    bare: float = 0.0
    """Stops with no data token before them."""
    size: float = 0.0
    """Coordinate range (coordinate streams; 0 when unknown)."""
    nonzero: float = 1.0
    """Fraction of the data tokens that are nonzero values (value streams)."""
    hist: np.ndarray | None = None
    """Expected data tokens per coordinate value (``size`` entries) of a coordinate stream,
    or of a reference stream into a dense level (whose references follow the coordinates);
    None when coordinates are taken as uniform."""
    sizes: tuple | None = None
    """``(weights, sizes, scale, groups)``: how many fibers of this level hang under each
    parent coordinate and their mean data tokens, ``sizes · scale`` (a measured scan under a
    dense level: e.g. node degrees; a join thins them by ``scale``); ``groups`` is
    ``np.unique(sizes, return_inverse=True)``, measured with the statistics, or None,
    so a rule concave in the fiber size can average over fibers instead of applying itself
    to the mean; None when unknown. An accumulator's key sizes leave ``sizes`` None (they are
    ``groups[0][groups[1]]``) and may give the index as a
    :class:`~fuseflow.explore.rules.NodeMap`."""

    @property
    def data(self) -> float:
        """Data tokens that are not ``N``."""
        return self.items - self.nulls

    @property
    def tokens(self) -> float:
        """Tokens of a stream whose innermost level this is: data, stops and ``D``."""
        return self.items + self.stops + 1.0

    def child(self, items: float, empty: float, nulls: float = 0.0, size: float = 0.0,
              nonzero: float = 1.0, hist: np.ndarray | None = None,
              sizes: tuple | None = None) -> "Level":
        """The level a scanner builds below this one (the scanner rule)."""
        return Level(items, nulls, self.items + self.bare, empty + self.bare, size, nonzero, hist,
                     sizes)

    def histogram(self) -> np.ndarray:
        """:attr:`hist`, or the uniform spread of the data tokens over ``size`` coordinates."""
        if self.hist is not None:
            return self.hist
        n = max(int(round(self.size)), 1)
        return np.full(n, self.data / n)

    def with_(self, **changes) -> "Level":
        """A copy with ``changes`` (fields by name)."""
        get = changes.get
        return Level(get("items", self.items), get("nulls", self.nulls),
                     get("stops", self.stops), get("bare", self.bare), get("size", self.size),
                     get("nonzero", self.nonzero), get("hist", self.hist),
                     get("sizes", self.sizes))


_FIELDS = tuple(f.name for f in dataclass_fields(Level))

Profile = tuple[Level, ...]
"""A stream's levels, outermost first; the last one is the stream's own."""

ROOT: Profile = (Level(1.0),)
"""The root stream ``0 D``."""


def tokens(profile: Profile) -> float:
    """Tokens of a stream with ``profile``."""
    return profile[-1].tokens


def own_empty(profile: Profile) -> float:
    """Empty fibers of the stream's own level (its bare stops not mirrored from above)."""
    if len(profile) < 2:
        return 0.0
    return max(profile[-1].bare - profile[-2].bare, 0.0)


def fibers(profile: Profile) -> float:
    """Fibers of the stream's own level that are not mirrored empty parents: one per data
    token of the level above."""
    return profile[-2].items if len(profile) >= 2 else 1.0

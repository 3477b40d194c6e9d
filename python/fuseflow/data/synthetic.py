"""Seeded synthetic graphs and node features with prescribed statistics.

Everything is vectorized numpy (no Python loop over nodes or edges), so the largest data sets
(ogbn-mag: 736k nodes, 5.4M edges) generate in seconds.

Graphs follow the Chung-Lu model: node ``i`` gets a weight ``w_i ~ (r_i + 1)^(-1/(gamma-1))``
for a random rank ``r_i``, and edge endpoints are drawn with probability proportional to the
weights, which gives a power-law degree distribution with exponent ``gamma``. A random
recursive tree is laid down first so that no node is isolated. Endpoint pairs are drawn in
rounds until enough distinct edges exist (self loops and repeats are discarded), then a random
subset is kept so the edge count is exact.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from fuseflow.data.graph import adjacency_from_edges, canonical_csr

log = logging.getLogger(__name__)

# After this many rounds of weighted draws the remaining edges are drawn uniformly: weighted
# draws stall when the hubs of a small, dense graph are already connected to everything.
_WEIGHTED_ROUNDS = 32
_MAX_ROUNDS = 256


def power_law_weights(num_nodes: int, exponent: float, rng: np.random.Generator) -> np.ndarray:
    """Chung-Lu weights for a degree distribution ``P(k) ~ k^-exponent``, randomly permuted."""
    if exponent <= 1.0:
        raise ValueError(f"power-law exponent must exceed 1, got {exponent}")
    ranks = rng.permutation(num_nodes).astype(np.float64)
    weights = (ranks + 1.0) ** (-1.0 / (exponent - 1.0))
    return weights / weights.sum()


def power_law_graph(num_nodes: int, num_edges: int, *, rng: np.random.Generator,
                    exponent: float = 2.5, symmetric: bool = True) -> sp.csr_matrix:
    """A connected-skeleton power-law graph with exactly ``num_edges`` directed edges.

    ``symmetric``: every edge is stored in both directions (``num_edges`` must be even) and the
    degree exponent is ``exponent``. Otherwise the graph is directed (a citation graph): in- and
    out-degrees follow ``exponent`` over independent node rankings, and no pair is stored twice
    in the same direction. No self loops.
    """
    n = num_nodes
    if symmetric and num_edges % 2:
        raise ValueError(f"a symmetric graph has an even number of directed edges, got {num_edges}")
    target = num_edges // 2 if symmetric else num_edges
    capacity = n * (n - 1) // 2 if symmetric else n * (n - 1)
    if target > capacity:
        raise ValueError(f"{num_edges} edges do not fit in a simple graph on {n} nodes")
    dst_p = power_law_weights(n, exponent, rng)
    src_p = dst_p if symmetric else power_law_weights(n, exponent, rng)

    skeleton = _random_recursive_tree(n, rng) if target >= n - 1 else np.zeros(0, np.int64)
    if not symmetric:
        skeleton = _orient(skeleton, n, rng)
    extra = _draw_distinct_pairs(n, target - skeleton.size, skeleton, src_p, dst_p, symmetric, rng)
    keys = np.concatenate([skeleton, extra])
    rows, cols = np.divmod(keys, n)
    if symmetric:
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
    return adjacency_from_edges(rows, cols, n)


def binary_features(num_nodes: int, dim: int, density: float, *, rng: np.random.Generator,
                    column_exponent: float = 0.8) -> sp.csr_matrix:
    """Bag-of-words style binary features: exactly ``round(density * n * dim)`` ones.

    Every row has at least one word; word popularity follows a Zipf law with
    ``column_exponent`` and per-node document length is log-normal.
    """
    total = int(round(density * num_nodes * dim))
    total = min(max(total, num_nodes), num_nodes * dim)
    col_p = (rng.permutation(dim) + 1.0) ** (-column_exponent)
    col_p /= col_p.sum()
    row_p = rng.lognormal(0.0, 0.5, size=num_nodes)
    row_p /= row_p.sum()
    first_cols = rng.choice(dim, size=num_nodes, p=col_p)
    keys = np.arange(num_nodes, dtype=np.int64) * dim + first_cols
    for round_ in range(_MAX_ROUNDS):
        missing = total - keys.size
        if missing <= 0:
            break
        draws = int(missing * 1.1) + 16
        uniform = round_ >= _WEIGHTED_ROUNDS
        if uniform:
            rows, cols = rng.integers(0, num_nodes, draws), rng.integers(0, dim, draws)
        else:
            rows, cols = rng.choice(num_nodes, draws, p=row_p), rng.choice(dim, draws, p=col_p)
        new = _unique(rows * dim + cols)
        new = new[~np.isin(new, keys, assume_unique=True)]
        keys = np.sort(np.concatenate([keys, rng.permutation(new)[:missing]]))
    if keys.size < total:
        # Near-full densities: random draws rarely hit the last free cells; take them from the
        # complement directly so the count is always exact.
        free = np.setdiff1d(np.arange(num_nodes * dim, dtype=np.int64), keys, assume_unique=True)
        keys = np.sort(np.concatenate([keys, rng.choice(free, total - keys.size, replace=False)]))
    rows, cols = np.divmod(keys, dim)
    data = np.ones(keys.size, dtype=np.float32)
    return canonical_csr(sp.csr_matrix((data, (rows, cols)), shape=(num_nodes, dim)))


def dense_features(num_nodes: int, dim: int, *, rng: np.random.Generator) -> np.ndarray:
    """Dense standard-normal float32 features (as the word2vec embeddings of OGB data sets)."""
    return rng.standard_normal((num_nodes, dim), dtype=np.float32)


def _unique(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values; sort-based, several times faster than hash-based ``np.unique``
    on the millions of int64 keys of the large graphs."""
    keys = np.sort(keys)
    if keys.size == 0:
        return keys
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])]


def _random_recursive_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """Undirected pair keys ``min * n + max`` of a random recursive tree on a random order."""
    order = rng.permutation(n).astype(np.int64)
    k = np.arange(1, n, dtype=np.int64)
    parents = order[(rng.random(n - 1) * k).astype(np.int64)]
    children = order[1:]
    return np.minimum(parents, children) * n + np.maximum(parents, children)


def _orient(undirected: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Orients undirected pair keys ``min * n + max`` at random into ``u * n + v`` (``u -> v``)."""
    lo, hi = np.divmod(undirected, n)
    flip = rng.random(lo.size) < 0.5
    return np.where(flip, hi * n + lo, lo * n + hi)


def _draw_distinct_pairs(n, count, existing, src_p, dst_p, symmetric, rng) -> np.ndarray:
    """``count`` distinct pair keys not in ``existing``, drawn by endpoint weights."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    found = np.zeros(0, dtype=np.int64)
    taken = np.sort(existing)
    for round_ in range(_MAX_ROUNDS):
        missing = count - found.size
        if missing <= 0:
            break
        draws = int(missing * 1.2) + 16
        if round_ < _WEIGHTED_ROUNDS:
            src = rng.choice(n, size=draws, p=src_p)
            dst = rng.choice(n, size=draws, p=dst_p)
        else:
            src, dst = rng.integers(0, n, draws), rng.integers(0, n, draws)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        keys = (np.minimum(src, dst) * n + np.maximum(src, dst)) if symmetric else src * n + dst
        keys = _unique(keys)
        keys = keys[~np.isin(keys, taken, assume_unique=True)]
        # The keys are sorted: keeping the smallest would favour low node ids.
        keys = rng.permutation(keys)[:missing]
        found = np.concatenate([found, keys])
        taken = np.sort(np.concatenate([taken, keys]))
    if found.size < count:
        raise RuntimeError(f"could not draw {count} distinct edges in {_MAX_ROUNDS} rounds")
    log.debug("drew %d extra edges in %d rounds", count, round_)
    return found

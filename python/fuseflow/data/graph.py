"""The in-memory graph every loader and generator returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np
import scipy.sparse as sp

Features = Union[np.ndarray, sp.csr_matrix]

ADJACENCY_LAYOUTS = ("csr", "coo", "dense")


@dataclass(frozen=True)
class GraphData:
    """A graph with node features.

    ``adjacency[u, v] != 0`` means an edge ``u -> v``; an undirected graph stores both
    directions, so ``num_edges`` counts directed edges (the figure data-set tables quote).
    """

    name: str
    """Data-set name (``"cora"``, ``"karate"``, or the loaded file's stem)."""
    num_nodes: int
    """Number of nodes; the adjacency is ``num_nodes x num_nodes``."""
    adjacency: sp.csr_matrix
    """Adjacency as float32 CSR with sorted indices and no duplicate entries."""
    features: Features
    """Node features, ``num_nodes x feature_dim`` float32: dense numpy or scipy CSR."""

    def __post_init__(self) -> None:
        n = self.num_nodes
        if self.adjacency.shape != (n, n):
            raise ValueError(f"adjacency shape {self.adjacency.shape} does not match {n} nodes")
        if self.features.shape[0] != n:
            raise ValueError(f"features have {self.features.shape[0]} rows for {n} nodes")

    @property
    def num_edges(self) -> int:
        """Directed edge count (stored adjacency entries)."""
        return int(self.adjacency.nnz)

    @property
    def feature_dim(self) -> int:
        """Feature width."""
        return int(self.features.shape[1])

    @property
    def feature_density(self) -> float:
        """Fraction of non-zero feature entries."""
        nnz = self.features.nnz if sp.issparse(self.features) else np.count_nonzero(self.features)
        return float(nnz) / float(self.num_nodes * self.feature_dim)

    @property
    def degrees(self) -> np.ndarray:
        """Out-degree (row non-zero count) of every node."""
        return np.diff(self.adjacency.indptr)

    def is_symmetric(self) -> bool:
        """Whether every edge ``u -> v`` has its reverse ``v -> u`` with the same weight."""
        return (self.adjacency != self.adjacency.T).nnz == 0

    def has_self_loops(self) -> bool:
        """Whether any node has an edge to itself."""
        return bool(np.any(self.adjacency.diagonal() != 0))

    def normalized_adjacency(self) -> sp.csr_matrix:
        """GCN normalization ``D^-1/2 (A + I) D^-1/2`` with ``D = diag(rowsum(A + I))``.

        Kipf & Welling's renormalization trick: self loops are added before normalizing, so
        every degree is at least 1. For a symmetric ``A`` the result is symmetric; for a
        directed graph ``D`` uses out-degrees (row sums). Returns float32 CSR.
        """
        a_hat = (self.adjacency + sp.identity(self.num_nodes, dtype=np.float32, format="csr"))
        deg = np.asarray(a_hat.sum(axis=1)).ravel()
        d_inv_sqrt = sp.diags(1.0 / np.sqrt(deg)).astype(np.float32)
        return canonical_csr(d_inv_sqrt @ a_hat @ d_inv_sqrt)

    def mean_adjacency(self) -> sp.csr_matrix:
        """Row-normalized adjacency ``D^-1 A`` (mean over neighbours, GraphSAGE-mean).

        Rows of isolated nodes stay zero. Returns float32 CSR.
        """
        deg = np.asarray(self.adjacency.sum(axis=1)).ravel()
        inv = np.divide(1.0, deg, out=np.zeros_like(deg, dtype=np.float64), where=deg != 0)
        return canonical_csr(sp.diags(inv) @ self.adjacency)

    def adjacency_torch(self, layout: str = "csr"):
        """The adjacency as a float32 torch tensor in ``layout`` (``csr``, ``coo`` or ``dense``)."""
        return scipy_to_torch(self.adjacency, layout)

    def features_torch(self, sparse: bool):
        """The features as a float32 torch tensor: CSR when ``sparse``, strided otherwise."""
        if sparse:
            return scipy_to_torch(sp.csr_matrix(self.features), "csr")
        import torch

        dense = self.features.toarray() if sp.issparse(self.features) else self.features
        return torch.from_numpy(np.ascontiguousarray(dense, dtype=np.float32))


def scipy_to_torch(matrix, layout: str = "csr"):
    """Converts a scipy sparse matrix to a float32 torch tensor in ``layout``."""
    import torch

    if layout not in ADJACENCY_LAYOUTS:
        raise ValueError(
            f"unknown layout {layout!r}; valid layouts: {', '.join(ADJACENCY_LAYOUTS)}")
    csr = canonical_csr(matrix)
    if layout == "dense":
        return torch.from_numpy(csr.toarray())
    if layout == "coo":
        coo = csr.tocoo()
        indices = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
        return torch.sparse_coo_tensor(indices, torch.from_numpy(coo.data), csr.shape).coalesce()
    return torch.sparse_csr_tensor(
        torch.from_numpy(csr.indptr.astype(np.int64)),
        torch.from_numpy(csr.indices.astype(np.int64)),
        torch.from_numpy(csr.data),
        size=csr.shape,
    )


def canonical_csr(matrix) -> sp.csr_matrix:
    """float32 CSR with summed duplicates, no explicit zeros and sorted indices."""
    csr = sp.csr_matrix(matrix, dtype=np.float32)
    csr.sum_duplicates()
    csr.eliminate_zeros()
    csr.sort_indices()
    return csr


def adjacency_from_edges(rows, cols, num_nodes: int, weights=None) -> sp.csr_matrix:
    """A float32 CSR adjacency from edge endpoint arrays; duplicate edges keep weight 1.

    With ``weights`` the duplicates are summed instead.
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if weights is None:
        data = np.ones(rows.shape[0], dtype=np.float32)
        csr = canonical_csr(sp.coo_matrix((data, (rows, cols)), shape=(num_nodes, num_nodes)))
        csr.data[:] = 1.0
        return csr
    data = np.asarray(weights, dtype=np.float32)
    return canonical_csr(sp.coo_matrix((data, (rows, cols)), shape=(num_nodes, num_nodes)))

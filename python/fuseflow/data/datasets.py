"""The evaluation's data sets: real Karate Club and Cora graphs, seeded synthetic stand-ins.

* ``karate``: Zachary's Karate Club from networkx, with its one-hot features (real).
* ``cora``: the real Cora citation graph, shipped in the package (``cora/cora.cites``, see
  ``cora/README.md`` for its source and attribution): 2,708 papers, 10,556 directed edges once
  symmetrized. Its word features are not shipped, so they are synthetic with the published
  width (1,433) and density (1.27 %).
* Cora-ML, DBLP, ogbl-collab and ogbn-mag cannot be downloaded at run time, so each is replaced
  by a synthetic graph with the published node count, exact directed edge count, feature width
  and feature density (see :mod:`fuseflow.data.synthetic` for the model). Files of the real
  data sets load with :mod:`fuseflow.data.formats`.

:attr:`DatasetSpec.provenance` says which parts are real; every output names it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from importlib import resources

import numpy as np
import scipy.sparse as sp

from fuseflow.data import synthetic
from fuseflow.data.graph import GraphData, adjacency_from_edges

FEATURE_KINDS = ("onehot", "binary", "dense")

PROVENANCES = ("real", "real graph, synthetic features", "synthetic")
"""What a data set is made of: all real data, a real graph with generated features, or
generated entirely (seeded)."""


@dataclass(frozen=True)
class DatasetSpec:
    """Published statistics of one data set (the targets of its generator)."""

    name: str
    """Registry name."""
    title: str
    """Published name."""
    num_nodes: int
    """Node count."""
    num_edges: int
    """Directed edge count (adjacency non-zeros)."""
    feature_dim: int
    """Feature width."""
    feature_density: float
    """Fraction of non-zero features (1.0 for dense embeddings)."""
    feature_kind: str
    """``onehot`` (identity), ``binary`` (bag of words, sparse) or ``dense`` (float embeddings)."""
    num_classes: int = 0
    """Node classes of the published task; 0 for ogbl-collab (link prediction)."""
    symmetric: bool = True
    """Undirected graph stored in both directions; ``False`` for a directed citation graph."""
    degree_exponent: float = 2.5
    """Power-law exponent of the (in-)degree distribution of the synthetic graph."""
    source: str = "synthetic"
    """``networkx`` for the real graph shipped with networkx, ``package`` for a real graph
    shipped in this package (:attr:`graph_file`), ``synthetic`` otherwise."""
    graph_file: str = ""
    """For ``source="package"``: the edge file, relative to the ``fuseflow.data`` package."""
    note: str = ""
    """Where a statistic is assumed rather than published."""

    @property
    def real_graph(self) -> bool:
        """Whether the graph is real data (it is then used whole at every preset)."""
        return self.source != "synthetic"

    @property
    def provenance(self) -> str:
        """One of :data:`PROVENANCES`: Karate Club's one-hot features are the real ones; a
        packaged graph's features are generated."""
        if self.source == "networkx":
            return "real"
        return "real graph, synthetic features" if self.source == "package" else "synthetic"

    def scaled(self, scale: float | None) -> tuple[int, int]:
        """Node and directed edge counts at ``scale`` (same mean degree; even when symmetric)."""
        if scale is None or scale == 1.0:
            return self.num_nodes, self.num_edges
        if not 0.0 < scale <= 1.0:
            raise ValueError(f"scale must be in (0, 1], got {scale}")
        nodes = max(4, int(round(self.num_nodes * scale)))
        edges = int(round(self.num_edges * nodes / self.num_nodes))
        if self.symmetric:
            edges -= edges % 2
        return nodes, edges


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec("karate", "Zachary's Karate Club", 34, 156, 34, 1.0 / 34, "onehot",
                    num_classes=2, source="networkx"),
        DatasetSpec("cora", "Cora", 2708, 10556, 1433, 0.0127, "binary", num_classes=7,
                    source="package", graph_file="cora/cora.cites",
                    note="real citation graph; synthetic features (published width, density)"),
        DatasetSpec("cora_ml", "Cora-ML", 2995, 16316, 2879, 0.0127, "binary", num_classes=7,
                    note="feature density not published in workloads.md; Cora's is assumed"),
        DatasetSpec("dblp", "DBLP", 17716, 105734, 1639, 0.0127, "binary", num_classes=4,
                    note="feature density not published in workloads.md; Cora's is assumed"),
        DatasetSpec("collab", "ogbl-collab", 235868, 2570930, 128, 1.0, "dense"),
        DatasetSpec("mag", "ogbn-mag (paper-cites-paper)", 736389, 5416271, 128, 1.0, "dense",
                    num_classes=349, symmetric=False,
                    note="5,416,271 is odd, so the citation graph stays directed as published"),
    )
}


def load_dataset(name: str, seed: int = 0, scale: float | None = None) -> GraphData:
    """Loads data set ``name``; synthetic ones are generated from ``seed``.

    ``scale`` in (0, 1] shrinks a synthetic graph to ``scale * nodes`` nodes with the same mean
    degree, feature width and density (``scale=0.02`` gives a 60-node Cora-ML for tests). Real
    graphs (Karate Club, Cora) only exist at full scale; Cora's synthetic features come from
    ``seed``.
    """
    spec = dataset_spec(name)
    if spec.real_graph and scale not in (None, 1.0):
        raise ValueError(f"{name} is a real graph and cannot be scaled (got scale={scale})")
    if spec.source == "networkx":
        return karate_club()
    if spec.source == "package":
        return packaged_graph(spec, seed=seed)
    return synthesize(spec, seed=seed, scale=scale)


def dataset_spec(name: str) -> DatasetSpec:
    """The registry entry for ``name``; the error lists the valid names."""
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; valid names: {', '.join(DATASETS)}") from None


def synthesize(spec: DatasetSpec, seed: int = 0, scale: float | None = None) -> GraphData:
    """Generates the synthetic stand-in for ``spec`` (see :mod:`fuseflow.data.synthetic`)."""
    num_nodes, num_edges = spec.scaled(scale)
    rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
    adjacency = synthetic.power_law_graph(num_nodes, num_edges, rng=rng,
                                          exponent=spec.degree_exponent,
                                          symmetric=spec.symmetric)
    if spec.feature_kind == "binary":
        features = synthetic.binary_features(num_nodes, spec.feature_dim, spec.feature_density,
                                             rng=rng)
    elif spec.feature_kind == "dense":
        features = synthetic.dense_features(num_nodes, spec.feature_dim, rng=rng)
    else:
        features = sp.identity(num_nodes, dtype=np.float32, format="csr")
    name = spec.name if scale in (None, 1.0) else f"{spec.name}@{scale:g}"
    return GraphData(name=name, num_nodes=num_nodes, adjacency=adjacency, features=features)


def packaged_graph(spec: DatasetSpec, seed: int = 0) -> GraphData:
    """A real graph shipped in the package, symmetrized without duplicates or self loops, with
    synthetic features of ``spec``'s width and density drawn from ``seed``.

    The file lists ``<cited> <citing>`` paper ids (any integers); node ``i`` is the ``i``-th
    smallest id, so the numbering is fixed by the file alone.
    """
    edges = np.loadtxt(resources.files("fuseflow.data").joinpath(spec.graph_file),
                       dtype=np.int64, ndmin=2)
    ids, index = np.unique(edges, return_inverse=True)
    index = index.reshape(edges.shape)
    rows, cols = index[:, 0], index[:, 1]
    keep = rows != cols
    rows, cols = np.concatenate([rows[keep], cols[keep]]), np.concatenate([cols[keep], rows[keep]])
    adjacency = adjacency_from_edges(rows, cols, ids.size)
    rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
    features = synthetic.binary_features(ids.size, spec.feature_dim, spec.feature_density,
                                         rng=rng)
    return GraphData(name=spec.name, num_nodes=int(ids.size), adjacency=adjacency,
                     features=features)


def karate_club() -> GraphData:
    """Zachary's Karate Club from networkx: 34 nodes, 78 undirected edges, one-hot features.

    Edge weights (interaction counts in recent networkx) are dropped: the adjacency is binary.
    """
    import networkx as nx

    graph = nx.karate_club_graph()
    edges = np.array(graph.edges(), dtype=np.int64).T
    rows, cols = np.concatenate([edges[0], edges[1]]), np.concatenate([edges[1], edges[0]])
    n = graph.number_of_nodes()
    return GraphData(name="karate", num_nodes=n, adjacency=adjacency_from_edges(rows, cols, n),
                     features=sp.identity(n, dtype=np.float32, format="csr"))

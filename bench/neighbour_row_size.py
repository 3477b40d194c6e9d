"""How much GNN full fusion recomputes on each graph data set, from the graph alone.

Full fusion of a 2-layer GNN recomputes a row of layer 1 for every edge that reads it, so its
extra work grows with the mean row size of a *neighbour*, ``sum_j in(j) * out(j) / E``, not
with the mean degree ``E / n``: large on symmetric power-law graphs (a neighbour tends to be a
hub), about the mean degree on a directed graph whose in- and out-degrees are independent.
Prints one row per data set and writes JSON.

    python bench/neighbour_row_size.py                     # every graph data set
    python bench/neighbour_row_size.py cora collab mag
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench_common import write_json

DEFAULT_JSON = Path(__file__).parent / "results" / "neighbour_row_size.json"


def row_sizes(name: str, seed: int = 0) -> dict:
    """Nodes, edges, mean degree, mean neighbour row size and largest degree of ``name`` at
    its published size."""
    from fuseflow.data import load_dataset

    graph = load_dataset(name, seed=seed, scale=None)
    adjacency = graph.adjacency.tocsr()
    out_degree = np.diff(adjacency.indptr)
    in_degree = np.bincount(adjacency.indices, minlength=adjacency.shape[1])
    edges = int(adjacency.nnz)
    return {"dataset": name, "nodes": int(adjacency.shape[0]), "edges": edges,
            "mean_degree": edges / adjacency.shape[0],
            "mean_neighbour_row_size": float(np.dot(in_degree, out_degree)) / edges,
            "max_degree": int(out_degree.max())}


def main() -> None:
    from fuseflow.data import DATASETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    rows = []
    print(f"{'data set':<10} {'nodes':>10} {'edges':>11} {'mean degree':>12} "
          f"{'neighbour row':>14} {'max degree':>11}")
    for name in args.datasets:
        row = row_sizes(name)
        rows.append(row)
        print(f"{name:<10} {row['nodes']:>10,} {row['edges']:>11,} {row['mean_degree']:>12.2f} "
              f"{row['mean_neighbour_row_size']:>14.1f} {row['max_degree']:>11,}", flush=True)
    write_json(args.json, rows)


if __name__ == "__main__":
    main()

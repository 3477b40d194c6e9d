"""Small models and sparse inputs shared by test folders (``test/e2e``, ``test/sim``):
imported by name, ``test/`` being on pytest's ``pythonpath`` (pyproject.toml)."""

import torch


class ChainCSC(torch.nn.Module):
    """``a @ (h @ w)`` fused: inner products over the (possibly empty) rows of CSR ``a``."""

    def forward(self, a, h, w):
        return a @ (h @ w)


class RowSum(torch.nn.Module):
    def forward(self, a):
        return a.sum(dim=1)


def sparse(m, n, density, seed, empty_rows=()):
    """A dense ``m x n`` matrix with about ``density`` of its entries nonzero (uniform in
    [0, 1)), the rows ``empty_rows`` all zero."""
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(m, n, generator=g) * (torch.rand(m, n, generator=g) < density)
    a[list(empty_rows)] = 0
    return a


def chain_inputs(density, empty_rows, seeds):
    """``ChainCSC``'s inputs: a 6x6 CSR ``a`` (``density``, ``empty_rows``), a dense 6x5 ``h``
    and a 5x4 CSC ``w`` (density 0.5), drawn with the three ``seeds``."""
    a_seed, h_seed, w_seed = seeds
    return (sparse(6, 6, density, a_seed, empty_rows).to_sparse_csr(),
            torch.rand(6, 5, generator=torch.Generator().manual_seed(h_seed)),
            sparse(5, 4, 0.5, w_seed).to_sparse_csc())

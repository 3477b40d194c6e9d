"""Stacked models simulated at two depths and extrapolated to their full depth.

GPT-3 stacks 12 decoders of one shape. Simulating all of them costs 12 decoder simulations per
configuration; simulating models of 1 and 2 decoders costs 3 and gives every additive result
(cycles, and each counter: operations, reads, ...) of ``n`` decoders as

    t(n) = t(1) + (n - 1) · (t(2) - t(1))

``t(2) - t(1)`` is what one more decoder adds, including what fusion across the decoder
boundary changes (full fusion moves decoder ``i + 1``'s LN1 + QKV into decoder ``i``'s FFN
kernel). The formula is exact when every decoder after the first adds the same: the decoders
have one shape, one mask and weights of one sparsity, and dense activations, so they differ
only in where their pruned weights' non-zeros fall. The test suite compares it with simulating
every decoder. Results say when they are extrapolated (``Run.extrapolation``).
"""

from __future__ import annotations

from dataclasses import dataclass

SIMULATED = (1, 2)
"""The depths simulated to extrapolate."""


@dataclass(frozen=True)
class Extrapolation:
    """How a stacked model's results are extrapolated from :data:`SIMULATED` depths."""

    unit: str
    """What is stacked (``decoder``)."""
    layers: int
    """The full depth the results are for."""

    @property
    def formula(self) -> str:
        """The formula, with this depth (``t(12) = t(1) + 11·(t(2) - t(1))``)."""
        return f"t({self.layers}) = t(1) + {self.layers - 1}·(t(2) - t(1))"

    def apply(self, one: int, two: int) -> int:
        """``t(layers)`` from ``t(1)`` and ``t(2)``."""
        return one + (self.layers - 1) * (two - one)

    def describe(self) -> str:
        """One line for tables and logs."""
        return (f"{self.layers} {self.unit}s extrapolated from simulations of 1 and 2: "
                f"{self.formula}")


def extrapolation(app, preset: str, all_layers: bool = False) -> Extrapolation | None:
    """The extrapolation of ``app`` at ``preset``: None when the model is simulated whole (it
    stacks no units, at most 2, or ``all_layers`` asks for every one)."""
    layers = app.layer_counts.get(preset) if app.repeated else None
    if layers is None or layers <= max(SIMULATED) or all_layers:
        return None
    return Extrapolation(app.repeated, layers)

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

A model with fewer decoders is a prefix of one with more (decoder ``i`` has the same weights
in both). Where the fusion configuration keeps every kernel within one decoder (unfused,
partial), the 1-decoder model compiles to exactly the first kernels of the 2-decoder model,
so ``t(1)`` is read from the 2-decoder simulation and only that model is simulated
(:func:`first_unit_kernels` checks it on the IR and the data; full fusion, whose kernels span
the boundary, simulates both).
"""

from __future__ import annotations

import re
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
        return (f"{self.layers} {self.unit}s extrapolated from models of 1 and 2: "
                f"{self.formula}; where no kernel spans two {self.unit}s, t(1) is the first "
                f"{self.unit}'s kernels of the 2-{self.unit} simulation (not simulated again)")


def extrapolation(app, preset: str, all_layers: bool = False) -> Extrapolation | None:
    """The extrapolation of ``app`` at ``preset``: None when the model is simulated whole (it
    stacks no units, at most 2, or ``all_layers`` asks for every one)."""
    layers = app.layer_counts.get(preset) if app.repeated else None
    if layers is None or layers <= max(SIMULATED) or all_layers:
        return None
    return Extrapolation(app.repeated, layers)


_SSA = re.compile(r"%([A-Za-z0-9_.$-]+)")


def first_unit_kernels(one, two, one_inputs, two_inputs) -> int | None:
    """How many kernels the compiled 1-unit model ``one`` has, if they are the first kernels
    of the compiled 2-unit model ``two`` computing the same values: then ``t(1)`` is the sum
    of those kernels of the 2-unit simulation and the 1-unit model need not be simulated.
    None otherwise (full fusion, which fuses across the boundary, or any difference).

    The check is on the IR and the data: every op of ``one``'s ``@main`` before its return
    prints as the op in the same position of ``two``'s (SSA names renumbered in order of
    appearance; function arguments compared by name), and the inputs and parameters those ops
    read hold equal data (``*_inputs``: the forward's inputs, then ``compiled.params``)."""
    ops_one, args_one = _main_ops(one)
    ops_two, args_two = _main_ops(two)
    body = ops_one[:-1]                       # the last op is the return
    if len(body) > len(ops_two) - 1 or ops_one[-1].operation.name != "func.return":
        return None
    names_one, names_two = _argument_names(one, args_one), _argument_names(two, args_two)
    read_one, text_one = _canonical(body, names_one)
    read_two, text_two = _canonical(ops_two[:len(body)], names_two)
    if text_one != text_two or read_one != read_two:
        return None
    data_one = dict(zip(one.input_names, [*one_inputs, *one.params]))
    data_two = dict(zip(two.input_names, [*two_inputs, *two.params]))
    for name in read_one:
        a, b = data_one.get(name), data_two.get(name)
        if a is None or b is None or not _same_tensor(a, b):
            return None
    return sum(op.operation.name == "sam.graph" for op in body)


def _main_ops(compiled):
    """The ops and block arguments of ``compiled``'s ``@main``."""
    main = next(op for op in compiled.module.body.operations
                if op.operation.name == "func.func")
    block = main.regions[0].blocks[0]
    return list(block.operations), list(block.arguments)


def _argument_names(compiled, arguments) -> dict[str, str]:
    """SSA name of each ``@main`` argument (``arg<i>``) -> its input or parameter name."""
    return {f"arg{i}": name for i, name in enumerate(compiled.input_names[:len(arguments)])}


def _canonical(ops, arguments: dict[str, str]) -> tuple[list[str], str]:
    """The ops' text with every SSA value renamed by first appearance (``@main`` arguments
    by their input names), and the argument names read, in order."""
    renamed: dict[str, str] = {}
    read: list[str] = []

    def rename(match: re.Match) -> str:
        name = match.group(1)
        if name in arguments:
            if arguments[name] not in read:
                read.append(arguments[name])
            return f"%<{arguments[name]}>"
        return "%v" + renamed.setdefault(name, str(len(renamed)))

    text = "\n".join(_SSA.sub(rename, op.operation.get_asm()) for op in ops)
    return read, text


def _same_tensor(a, b) -> bool:
    """Whether two tensors (dense or sparse) hold the same shape, layout and values."""
    import torch

    if a.shape != b.shape or a.layout != b.layout:
        return False
    if a.layout != torch.strided:
        a, b = a.to_dense(), b.to_dense()
    return bool(torch.equal(a, b))

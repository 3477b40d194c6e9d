"""Kernels of any size: containers have no cap on inputs or results (a slot per run of equal
types, inputs ordered by type), end to end against PyTorch."""

import warnings

import torch

import fuseflow
from fuseflow.apps.gpt3 import GPT3, GPT3Config, bigbird_mask, plan
from fuseflow.dialects.ir import find_ops

warnings.filterwarnings("ignore", category=UserWarning)

NUM_INPUTS = 100


class ManySum(torch.nn.Module):
    """Running sums of 100 inputs of two shapes; every 8th counted back from the last (12) is
    returned, every other one summed over rows (two result shapes)."""

    def forward(self, *xs):
        returned = set(range(len(xs) - 1, 8, -8))
        outputs, total = [], xs[0]
        for index, x in enumerate(xs[1:], 1):
            total = total + x
            if index in returned:
                outputs.append(total if len(outputs) % 2 == 0 else total.sum(0))
        return tuple(outputs)


def _containers(compiled, name):
    return list(find_ops(compiled.module.operation, lambda op: op.name == name))


def test_fully_fused_kernel_with_100_inputs_and_12_results_matches_pytorch():
    generator = torch.Generator().manual_seed(0)
    xs = tuple(torch.randn(4, 3, generator=generator) if i % 3 else
               torch.randn(3, generator=generator) for i in range(NUM_INPUTS))
    model = ManySum()
    compiled = fuseflow.compile(model, xs, fuseflow.Schedule(fusion="full"))
    kernels = compiled.mlir("kernels")
    assert kernels.count('"fuse.kernel"') == 1
    # Inputs ordered by type: one run of each input type (34 vectors, the first input's type,
    # then 66 matrices), and of each result type.
    assert "operandSegmentSizes = array<i32: 34, 66, 0," in kernels
    assert "resultSegmentSizes = array<i32: 6, 6, 0," in kernels
    (graph,) = _containers(compiled, "sam.graph")
    assert len(list(graph.operands)) == NUM_INPUTS and len(list(graph.results)) == 12
    result = compiled.simulate(*xs)
    expected = model(*xs)
    assert len(result.outputs) == len(expected) == 12
    for got, want in zip(result.outputs, expected):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_gpt3_with_12_decoders_fully_fused_matches_pytorch():
    """12 decoders at tiny dimensions, the plan's full fusion (attention kernels, and each
    decoder's tail fused with the next decoder's layernorm and QKV). About a minute: the
    largest GPT-3 that compiles today (whole-model fusion into one kernel stops at the
    lowering's unsupported in-kernel ``tensor.extract_slice`` of the QKV split and
    ``tensor.collapse_shape`` of the head merge, not at the containers)."""
    config = GPT3Config(d_model=8, heads=2, seq=16, ffn=16, block=4, layers=12,
                        random_blocks=1, global_blocks=1)
    model = GPT3(config)
    generator = torch.Generator().manual_seed(0)
    for layer in model.layers:
        layer.reset_parameters(generator)
    x = torch.randn(config.seq, config.d_model, generator=generator)
    mask = bigbird_mask(config.seq, config.block, config.window, config.random_blocks,
                        config.global_blocks)
    compiled = fuseflow.compile(model, (x, mask), fuseflow.Schedule(fusion="full"),
                                plan=plan(model))
    assert len(_containers(compiled, "sam.graph")) == 1 + 2 * config.layers
    result = compiled.simulate(x, mask)
    torch.testing.assert_close(result.output, model(x, mask), rtol=1e-4, atol=1e-5)

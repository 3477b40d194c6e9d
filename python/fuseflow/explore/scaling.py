"""Models of growing size for measuring the search: GPT-3 with ``layers`` decoders."""

from __future__ import annotations

from dataclasses import replace


def gpt3_decoders(layers: int, preset: str = "tiny", seed: int = 0):
    """``(model, inputs, plan)`` of the GPT-3 application at ``preset`` with ``layers``
    decoder layers (built as :func:`fuseflow.apps.gpt3.build` builds the preset's)."""
    import torch

    from fuseflow.apps import gpt3

    config = replace(gpt3.PRESET_CONFIGS[preset], layers=layers)
    model = gpt3.GPT3(config)
    generator = torch.Generator().manual_seed(seed)
    model.reset_parameters(generator)
    params = dict(model.named_parameters())
    for name in gpt3.sparse_weight_names(model):
        gpt3.prune_(params[name], config.weight_sparsity, generator)
    x = torch.randn(config.seq, config.d_model, generator=generator)
    mask = gpt3.bigbird_mask(config.seq, config.block, config.window, config.random_blocks,
                             config.global_blocks, seed)
    return model.eval(), (x, mask), gpt3.plan(model)

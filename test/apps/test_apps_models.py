"""The four applications in PyTorch eager: registry, tiny presets, fusion plans, BigBird mask."""

import numpy as np
import pytest
import torch

from fuseflow.apps import APPLICATIONS, FUSION_LEVELS, get_application, trace_ops
from fuseflow.apps.gcn import GCN
from fuseflow.apps.gpt3 import GPT3Config, bigbird_block_mask, bigbird_mask
from fuseflow.data import load_dataset

APP_NAMES = list(APPLICATIONS)


def test_registry_lists_the_four_applications():
    assert APP_NAMES == ["sae", "gcn", "graphsage", "gpt3"]
    with pytest.raises(ValueError, match="sae, gcn, graphsage, gpt3"):
        get_application("bert")


def test_build_rejects_unknown_preset_and_data_set():
    app = get_application("gcn")
    with pytest.raises(ValueError, match="tiny, small, published"):
        app.build("huge")
    with pytest.raises(ValueError, match="karate, cora"):
        app.build("tiny", "citeseer")


@pytest.mark.parametrize("name", APP_NAMES)
def test_tiny_preset_runs_in_eager_with_finite_outputs(name):
    app = get_application(name)
    model, inputs = app.build("tiny", seed=1)
    assert len(inputs) == len(app.inputs)
    for arg, tensor in zip(app.inputs, inputs):
        if arg in app.sparse_inputs:
            assert tensor.layout == torch.sparse_csr, arg
    with torch.no_grad():
        out = model(*inputs)
    assert torch.isfinite(out).all()
    assert out.abs().sum() > 0


@pytest.mark.parametrize("name", APP_NAMES)
def test_tiny_preset_is_reproducible_per_seed(name):
    app = get_application(name)
    with torch.no_grad():
        a = app.build("tiny", seed=5)
        b = app.build("tiny", seed=5)
        c = app.build("tiny", seed=6)
        out_a, out_b, out_c = (m(*i) for m, i in (a, b, c))
    torch.testing.assert_close(out_a, out_b)
    assert not torch.allclose(out_a, out_c)


@pytest.mark.parametrize("name", APP_NAMES)
def test_fusion_plan_matches_the_exported_model(name):
    app = get_application(name)
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    assignment = plan.assign(trace_ops(model, inputs))
    assert set(assignment.values()) == {s.name for s in plan.stages}
    assert tuple(plan.fusion_groups) == FUSION_LEVELS


@pytest.mark.parametrize("name", APP_NAMES)
def test_pruned_weights_have_the_declared_sparsity(name):
    app = get_application(name)
    model, _ = app.build("tiny")
    params = dict(model.named_parameters())
    sparse = app.plan(model).sparse_parameters
    assert sparse
    for param_name, sparsity in sparse.items():
        zeros = (params[param_name] == 0).float().mean().item()
        assert zeros == pytest.approx(sparsity, abs=0.01), param_name


@pytest.mark.parametrize("name, unfused, partial", [
    ("sae", 5, 2), ("gcn", 8, 2), ("graphsage", 14, 2)])
def test_kernel_counts_of_the_single_expression_models(name, unfused, partial):
    app = get_application(name)
    plan = app.plan(app.build("tiny")[0])
    counts = {level: len(plan.kernels(level)) for level in FUSION_LEVELS}
    assert counts == {"unfused": unfused, "partial": partial, "full": 1}


def test_gpt3_kernel_counts_per_decoder():
    app = get_application("gpt3")
    model, _ = app.build("tiny")
    layers = model.config.layers
    plan = app.plan(model)
    assert len(plan.kernels("unfused")) == 18 * layers
    assert len(plan.kernels("partial")) == 3 * layers
    full = plan.fusion_groups["full"]
    assert len(full) == 1 + 2 * layers
    # Full fusion puts the next decoder's LN1 + QKV into the FFN kernel.
    assert full[2][-3:] == ("layers.1.ln1", "layers.1.attn.qkv_matmul", "layers.1.attn.qkv_bias")
    with pytest.raises(ValueError, match="unfused, partial, full"):
        plan.kernels("fused")


def test_gcn_plan_follows_the_aggregation_order():
    graph = load_dataset("karate")
    adjacency = graph.adjacency_torch()
    features = graph.features_torch(sparse=True)
    app = get_application("gcn")
    for aggregate_first, first in ((False, "layer1.transform"), (True, "layer1.aggregate")):
        model = GCN(34, 2, aggregate_first=aggregate_first)
        plan = app.plan(model)
        assert plan.stages[0].name == first
        plan.assign(trace_ops(model, (adjacency, features)))


def test_gcn_matches_a_dense_numpy_reference():
    model, (adjacency, features) = get_application("gcn").build("tiny", "cora")
    a, x = adjacency.to_dense().numpy(), features.to_dense().numpy()
    w1, b1 = model.layer1.weight.detach().numpy(), model.layer1.bias.detach().numpy()
    w2, b2 = model.layer2.weight.detach().numpy(), model.layer2.bias.detach().numpy()
    z = a @ (np.maximum(a @ (x @ w1) + b1, 0) @ w2) + b2
    expected = np.exp(z - z.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    with torch.no_grad():
        np.testing.assert_allclose(model(adjacency, features).numpy(), expected, atol=1e-5)


def test_graphsage_uses_the_mean_adjacency():
    _, (adjacency, _) = get_application("graphsage").build("tiny")
    expected = load_dataset("karate").mean_adjacency().toarray()
    np.testing.assert_allclose(adjacency.to_dense().numpy(), expected)


def test_sae_input_batch_is_sparse():
    model, (x,) = get_application("sae").build("tiny")
    assert x.shape == (32, model.encoder_weight.shape[0])
    assert 0 < x.values().numel() < 0.2 * x.shape[0] * x.shape[1]


def test_gpt3_published_config_is_the_default():
    config = GPT3Config()
    assert (config.d_model, config.heads, config.head_dim, config.seq, config.ffn,
            config.layers) == (768, 12, 64, 1024, 3072, 12)
    with pytest.raises(ValueError, match="multiple of block"):
        GPT3Config(seq=100, block=16)


@pytest.mark.parametrize("num_blocks", [8, 16, 64])
def test_bigbird_block_mask_structure(num_blocks):
    mask = bigbird_block_mask(num_blocks, window=3, random_blocks=2, global_blocks=2, seed=0)
    index = np.arange(num_blocks)
    global_ids = [0, num_blocks - 1]
    # Window: the diagonal block and both neighbours.
    assert mask[index, index].all()
    assert mask[index[:-1], index[1:]].all() and mask[index[1:], index[:-1]].all()
    # Global blocks: whole rows and columns.
    assert mask[global_ids, :].all() and mask[:, global_ids].all()
    # Random: exactly two more blocks in every other row (when that many remain free).
    for row in range(1, num_blocks - 1):
        window = {row - 1, row, row + 1}
        fixed = window | set(global_ids)
        extra = set(np.flatnonzero(mask[row])) - fixed
        assert len(extra) == min(2, num_blocks - len(fixed))
    if num_blocks == 64:
        assert mask.mean() < 0.15


def test_bigbird_random_blocks_depend_on_the_seed():
    a, b = bigbird_block_mask(32, seed=0), bigbird_block_mask(32, seed=1)
    np.testing.assert_array_equal(a, bigbird_block_mask(32, seed=0))
    assert (a != b).any()


def test_bigbird_token_mask_expands_blocks():
    mask = bigbird_mask(256, 16, seed=4)
    blocks = bigbird_block_mask(16, seed=4)
    assert mask.shape == (256, 256) and mask.dtype == torch.float32
    np.testing.assert_array_equal(mask.numpy(), np.kron(blocks, np.ones((16, 16))))
    assert set(mask.unique().tolist()) == {0.0, 1.0}


def test_gpt3_attention_ignores_masked_key_blocks():
    model, (x, mask) = get_application("gpt3").build("tiny")
    attn, block = model.layers[0].attn, model.config.block
    blocks = mask[::block, ::block].bool().numpy()
    row, col = map(int, np.argwhere(~blocks)[0])
    perturbed = x.clone()
    perturbed[col * block:(col + 1) * block] += 1.0
    with torch.no_grad():
        before, after = attn(x, mask), attn(perturbed, mask)
    rows = slice(row * block, (row + 1) * block)
    torch.testing.assert_close(before[rows], after[rows])
    attending = int(np.flatnonzero(blocks[:, col] & (np.arange(len(blocks)) != col))[0])
    rows = slice(attending * block, (attending + 1) * block)
    assert not torch.allclose(before[rows], after[rows])

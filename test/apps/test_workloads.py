"""The published workloads: pruned weights and the BigBird mask declared sparse, attention work
that follows the mask, and GPT-3's decoders extrapolated from simulations of 1 and 2."""

import warnings

import pytest
import torch

import fuseflow
from fuseflow.apps import APPLICATIONS, FUSION_LEVELS, get_application, gpt3
from fuseflow.apps.layers import Extrapolation, extrapolation, first_unit_kernels
from fuseflow.tools.execute import Settings, run_application

warnings.filterwarnings("ignore", category=UserWarning)


class _NoSteps:
    def start(self, _label):
        pass

    def done(self, _count=1):
        pass


def _simulate(model, inputs, plan, level, dense_weights=False):
    compiled = fuseflow.compile(model, inputs, plan.schedule(level, dense_weights), plan=plan)
    return compiled.simulate(*inputs)


def _ops(result, kernel_part=""):
    return sum(b.ops for name, k in result.stats.items() if kernel_part in name
               for b in k.blocks.values())


@pytest.mark.parametrize("name", list(APPLICATIONS))
def test_plans_declare_the_pruned_weights_sparse(name):
    app = get_application(name)
    model, _ = app.build("tiny")
    plan = app.plan(model)
    weights = set(plan.sparse_parameters)
    expected = weights | ({"mask"} if name == "gpt3" else set())
    assert set(plan.sparse_formats) == expected
    assert set(plan.sparse_formats.values()) == {"csr"}
    schedule = plan.schedule("partial")
    assert schedule.fusion == "partial" and schedule.formats == dict(plan.sparse_formats)
    assert plan.schedule("partial", dense_weights=True).formats == dict.fromkeys(
        plan.sparse_formats, "dense")
    # A user's declaration adds to (or overrides) the workload's.
    first = sorted(weights)[0]
    assert plan.schedule("full", formats={first: "dense"}).formats[first] == "dense"
    with pytest.raises(ValueError, match="unfused, partial, full"):
        plan.schedule("fused")


def test_a_hand_written_schedule_with_a_plan_warns_it_compiles_the_dense_variant():
    app = get_application("gcn")
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    program = fuseflow.Program(model, inputs, plan=plan)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        published = program.compile(plan.schedule("partial"))
        dense = program.compile(plan.schedule("partial", dense_weights=True))
    assert not [w for w in caught if issubclass(w.category, fuseflow.DenseVariantWarning)]
    with pytest.warns(fuseflow.DenseVariantWarning, match="plan.schedule") as caught:
        implicit = program.compile(fuseflow.Schedule(fusion="partial"))
    assert all(name in str(caught[0].message) for name in plan.sparse_formats)
    # Said once per program, and the implicit compile is the explicit dense variant.
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        program.compile(fuseflow.Schedule(fusion="full"))
    assert not [w for w in again if issubclass(w.category, fuseflow.DenseVariantWarning)]
    assert implicit.mlir("sam") == dense.mlir("sam") != published.mlir("sam")


@pytest.mark.parametrize("name", list(APPLICATIONS))
def test_declared_weights_skip_the_pruned_zeros(name):
    app = get_application(name)
    model, inputs = app.build("tiny")
    plan = app.plan(model)
    expected = model(*inputs)
    sparse = _simulate(model, inputs, plan, "unfused")
    dense = _simulate(model, inputs, plan, "unfused", dense_weights=True)
    for result in (sparse, dense):
        torch.testing.assert_close(result.output, expected, rtol=1e-4, atol=1e-5)
    assert _ops(sparse) < 0.8 * _ops(dense)
    assert sparse.cycles < dense.cycles


def _attention_model(seq=64, block=8, d_model=16, heads=2):
    torch.manual_seed(0)
    config = gpt3.GPT3Config(d_model=d_model, heads=heads, seq=seq, ffn=32, block=block,
                             layers=1)
    model = gpt3.GPT3(config).eval()
    return model, gpt3.plan(model), torch.randn(seq, d_model)


def test_fused_attention_work_follows_the_mask_blocks():
    """Masked blocks cost nothing: the fused attention kernel's operations are a fixed count
    per kept score (the scores themselves included), and its cycles grow with the kept
    blocks."""
    model, plan, x = _attention_model()
    per_score, cycles = set(), []
    for random_blocks in (0, 1, 3):
        mask = gpt3.bigbird_mask(64, 8, random_blocks=random_blocks, seed=0)
        result = _simulate(model, (x, mask), plan, "partial")
        torch.testing.assert_close(result.output, model(x, mask), rtol=1e-4, atol=1e-5)
        per_score.add(_ops(result, "attn.scores") / mask.sum().item())
        cycles.append(next(k.cycles for n, k in result.stats.items() if "attn.scores" in n))
    assert len(per_score) == 1
    assert cycles == sorted(cycles) and cycles[0] < 0.85 * cycles[-1]


def test_block_size_changes_the_cycles_of_every_fused_configuration():
    cycles = {}
    for block in (16, 64):
        model, plan, x = _attention_model(seq=256, block=block)
        mask = gpt3.bigbird_mask(256, block, seed=0)
        for level in ("partial", "full"):
            cycles[block, level] = _simulate(model, (x, mask), plan, level).cycles
    # b16 keeps 7 of 16 block columns per row, b64 all 4 of 4: b16 is the sparser mask.
    for level in ("partial", "full"):
        assert cycles[16, level] < 0.8 * cycles[64, level]


@pytest.mark.parametrize("level", ["unfused", "partial"])
def test_decoder_matches_scaled_dot_product_attention(level):
    """The broadcast-product scores against PyTorch's own masked attention in a decoder whose
    weights are large enough that an error in attention shows in the output."""
    torch.manual_seed(3)
    config = gpt3.GPT3Config(d_model=16, heads=2, seq=32, ffn=32, block=4, layers=1)
    model = gpt3.GPT3(config).eval()
    layer = model.layers[0]
    for param in layer.parameters():
        if param.dim() == 2:
            torch.nn.init.normal_(param, 0.0, 0.5)
    x = torch.randn(32, 16)
    mask = gpt3.bigbird_mask(32, 4, random_blocks=1, global_blocks=1, seed=2)
    attn, ffn = layer.attn, layer.ffn
    q, k, v = (layer.ln1(x) @ attn.qkv_weight + attn.qkv_bias).split(16, dim=-1)
    heads = [t.view(32, 2, 8).transpose(0, 1) for t in (q, k, v)]
    context = torch.nn.functional.scaled_dot_product_attention(*heads, attn_mask=mask.bool())
    h = x + context.transpose(0, 1).reshape(32, 16) @ attn.out_weight + attn.out_bias
    expected = h + torch.relu(layer.ln2(h) @ ffn.weight1 + ffn.bias1) @ ffn.weight2 + ffn.bias2
    with torch.no_grad():
        torch.testing.assert_close(model(x, mask), expected, rtol=1e-4, atol=1e-5)
        result = _simulate(model, (x, mask), gpt3.plan(model), level)
    assert (h - x).abs().mean() > x.abs().mean(), "attention dominates the residual stream"
    torch.testing.assert_close(result.output, expected, rtol=1e-4, atol=1e-4)


def test_published_gpt3_is_extrapolated_from_one_and_two_decoders():
    app = get_application("gpt3")
    published = extrapolation(app, "published")
    assert published == Extrapolation("decoder", 12)
    assert published.formula == "t(12) = t(1) + 11·(t(2) - t(1))"
    assert published.apply(100, 130) == 430
    assert extrapolation(app, "published", all_layers=True) is None
    assert extrapolation(app, "small") is None          # 2 decoders: simulated whole
    assert extrapolation(get_application("gcn"), "published") is None
    with pytest.raises(ValueError, match="stacks no identical units"):
        get_application("sae").build("tiny", layers=2)


def _tied(layers):
    model, inputs = get_application("gpt3").build("tiny", layers=layers)
    for layer in model.layers[1:]:
        layer.load_state_dict(model.layers[0].state_dict())
    return model, inputs


def _extrapolated_and_whole(build, level):
    app = get_application("gpt3")
    t = {}
    for layers in (1, 2, 4):
        model, inputs = build(layers)
        result = _simulate(model, inputs, app.plan(model), level)
        t[layers] = (result.cycles, _ops(result))
    four = Extrapolation("decoder", 4)
    return (four.apply(t[1][0], t[2][0]), four.apply(t[1][1], t[2][1])), t[4]


@pytest.mark.parametrize("level", FUSION_LEVELS)
def test_extrapolation_equals_simulating_every_decoder(level):
    """Identical decoders: t(1) + 3·(t(2) - t(1)) is exactly the 4-decoder simulation."""
    extrapolated, whole = _extrapolated_and_whole(_tied, level)
    assert extrapolated == whole


def test_extrapolation_of_decoders_with_their_own_weights_is_within_a_few_cycles():
    """Each decoder's own pruned weights put its non-zeros elsewhere: a few cycles apart."""
    app = get_application("gpt3")
    (cycles, ops), (whole_cycles, whole_ops) = _extrapolated_and_whole(
        lambda n: app.build("tiny", layers=n), "full")
    assert ops == whole_ops
    assert cycles == pytest.approx(whole_cycles, rel=1e-3)


def test_runs_record_the_extrapolation_and_the_workload():
    app = get_application("gpt3")
    one, two, four = (app.build("tiny", layers=n) for n in (1, 2, 4))
    settings = Settings("fast", fuseflow.Arch(), 0, 1e-4, 1e-5)
    extrapolated, = run_application(app, *one, "b4", "tiny", ("partial",), {}, settings,
                                    _NoSteps(), provenance="synthetic",
                                    extrapolation=Extrapolation("decoder", 4), deeper=two)
    whole, = run_application(app, *four, "b4", "tiny", ("partial",), {}, settings, _NoSteps())
    run = extrapolated.run
    assert run.status == "ok" and run.provenance == "synthetic" and run.dense_weights is False
    assert run.extrapolation["formula"] == "t(4) = t(1) + 3·(t(2) - t(1))"
    assert run.extrapolation["simulated"] == [2]          # t(1): its first 3 kernels
    assert run.extrapolation["first_unit"] == "t(1): the first 3 kernels of the 2-decoder simulation"
    assert len(run.kernels) == 2 * 3                     # the 2-decoder model's kernels
    assert run.cycles == pytest.approx(whole.run.cycles, rel=1e-3)
    assert run.totals["ops"] == whole.run.totals["ops"]
    assert run.schedule["formats"]["mask"] == "csr"


def _compiled(model, inputs, level):
    plan = get_application("gpt3").plan(model)
    return fuseflow.compile(model, inputs, plan.schedule(level), plan=plan)


@pytest.mark.parametrize("level, kernels", [("unfused", 18), ("partial", 3), ("full", None)])
def test_the_one_decoder_model_is_the_first_kernels_of_the_two_decoder_model(level, kernels):
    """Unfused and partial keep every kernel within a decoder: the 1-decoder model compiles to
    the 2-decoder model's first kernels on the same data. Full fusion moves decoder 2's
    LN1 + QKV into decoder 1's last kernel: not a prefix."""
    app = get_application("gpt3")
    (one, one_in), (two, two_in) = (app.build("tiny", layers=n) for n in (1, 2))
    assert first_unit_kernels(_compiled(one, one_in, level), _compiled(two, two_in, level),
                              one_in, two_in) == kernels


def test_a_one_decoder_model_with_other_data_is_no_prefix():
    app = get_application("gpt3")
    (one, one_in), (two, two_in) = (app.build("tiny", layers=n) for n in (1, 2))
    deep = _compiled(two, two_in, "partial")
    other_x = (one_in[0] + 1.0, one_in[1])
    assert first_unit_kernels(_compiled(one, other_x, "partial"), deep, other_x, two_in) is None
    with torch.no_grad():
        one.layers[0].ffn.bias2.add_(1.0)                # a parameter of the prefix differs
    assert first_unit_kernels(_compiled(one, one_in, "partial"), deep, one_in, two_in) is None


@pytest.mark.parametrize("level", FUSION_LEVELS)
def test_t1_read_from_the_two_decoder_run_equals_simulating_the_one_decoder_model(level):
    """The extrapolation with t(1) read from the 2-decoder simulation's first kernels gives
    exactly the totals of simulating the 1-decoder model (full fusion simulates it)."""
    app = get_application("gpt3")
    one, two = (app.build("tiny", layers=n) for n in (1, 2))
    four = Extrapolation("decoder", 4)
    settings = Settings("fast", fuseflow.Arch(), 0, 1e-4, 1e-5)
    run, = (o.run for o in run_application(app, *one, "b4", "tiny", (level,), {}, settings,
                                           _NoSteps(), extrapolation=four, deeper=two))
    t1, t2 = (_simulate(*m, app.plan(m[0]), level) for m in (one, two))
    assert run.extrapolation["simulated"] == ([1, 2] if level == "full" else [2])
    assert run.extrapolation["cycles"] == [t1.cycles, t2.cycles]
    assert run.cycles == four.apply(t1.cycles, t2.cycles)
    assert run.totals["ops"] == four.apply(_ops(t1), _ops(t2))


@pytest.mark.parametrize("numel", [1000, 5000])
def test_pruning_zeroes_exactly_the_count_in_chunks_too(monkeypatch, numel):
    """Large weights are pruned a chunk at a time (SAE's at NIH-CXR: one permutation of 5.4e8
    indices took minutes): still exactly round(sparsity * numel) zeros, the same for a seed,
    spread over every chunk, and a weight small enough keeps the one-permutation draw."""
    from fuseflow.apps import base

    def pruned(seed):
        w = torch.nn.Parameter(torch.arange(numel, dtype=torch.float32) + 1.0)
        base.prune_(w, 0.9, torch.Generator().manual_seed(seed))
        return w.detach()

    small = pruned(3)
    monkeypatch.setattr(base, "PERMUTE_UP_TO", 100)
    monkeypatch.setattr(base, "_PRUNE_CHUNK", 64)
    chunked = pruned(3)
    for w in (small, chunked):
        assert int((w == 0).sum()) == round(0.9 * numel)
        assert bool((w[w != 0] >= 1.0).all())          # the rest untouched
    assert torch.equal(chunked, pruned(3)) and not torch.equal(chunked, pruned(4))
    per_chunk = (chunked[: numel // 64 * 64].view(-1, 64) == 0).float().mean(dim=1)
    assert 0.6 < float(per_chunk.min()) and float(per_chunk.max()) <= 1.0
    assert not torch.equal(small, chunked)              # a different draw, same distribution


@pytest.mark.parametrize("sparsity", [0.3, 0.9])
def test_chunked_pruning_zeroes_the_first_entries_of_each_chunks_permutation(monkeypatch, sparsity):
    """The chunked draw's definition: chunk sizes, then per chunk the first k indices of a
    permutation from the seeded generator are zeroed (whether the chunk is mostly kept or
    mostly zeroed), so published weights stay the same draw."""
    import numpy as np

    from fuseflow.apps import base

    monkeypatch.setattr(base, "PERMUTE_UP_TO", 100)
    monkeypatch.setattr(base, "_PRUNE_CHUNK", 64)
    numel = 1000
    w = torch.nn.Parameter(torch.arange(numel, dtype=torch.float32) + 1.0)
    base.prune_(w, sparsity, torch.Generator().manual_seed(5))
    generator = torch.Generator().manual_seed(5)
    rng = np.random.default_rng(int(torch.randint(1 << 62, (1,), generator=generator)))
    want = np.arange(numel, dtype=np.float32) + 1.0
    starts = np.arange(0, numel, 64)
    sizes = np.minimum(64, numel - starts)
    counts = rng.multivariate_hypergeometric(sizes, int(round(sparsity * numel)), method="marginals")
    for start, size, k in zip(starts, sizes, counts):
        want[start + rng.permutation(size)[:k]] = 0.0
    assert np.array_equal(w.detach().numpy(), want)

"""Pipeline parsing and running: mlir-opt syntax mixing upstream and FuseFlow passes."""

import pytest

from fuseflow import mlir
from fuseflow.passes import registry
from fuseflow.passes.base import PipelineError
from fuseflow.passes.partition import PartitionMode, PartitionPass
from fuseflow.passes.sam_verify import SamVerifyPass
from fuseflow.pipeline import (Pipeline, expand, parse_element, parse_options, parse_pipeline,
                               split_top_level)


def names(elements):
    return [e.name for e in elements]


def test_split_top_level_keeps_nested_commas():
    text = 'func.func(cse,canonicalize),sam-verify,fuseflow-schedule{order=d0,d1},x{s="a,b"}'
    assert split_top_level(text) == [
        "func.func(cse,canonicalize)", "sam-verify", "fuseflow-schedule{order=d0,d1}",
        'x{s="a,b"}']


@pytest.mark.parametrize("text", ["a(b", "a{b", "a)b", 'a{s="b}'])
def test_split_top_level_rejects_unbalanced(text):
    with pytest.raises(PipelineError, match="unbalanced"):
        split_top_level(text)


def test_parse_options():
    assert parse_options("mode=full order=d0,d1 flag") == {
        "mode": "full", "order": "d0,d1", "flag": ""}
    assert parse_options(' s="x y" ') == {"s": "x y"}
    assert parse_options("") == {}


def test_parse_element():
    el = parse_element("fuseflow-partition{mode=full}")
    assert (el.name, el.options, el.text) == ("fuseflow-partition", {"mode": "full"},
                                             "fuseflow-partition{mode=full}")
    nested = parse_element("func.func(canonicalize{max-iterations=2})")
    assert (nested.name, nested.options) == ("func.func", {})
    with pytest.raises(PipelineError, match="expected '}'"):
        parse_element("x{a=1}y")


def test_parse_pipeline_with_and_without_anchor():
    assert names(parse_pipeline("builtin.module(cse,sam-verify)")) == ["cse", "sam-verify"]
    assert names(parse_pipeline(" cse , sam-verify ")) == ["cse", "sam-verify"]
    assert parse_pipeline("") == []
    assert parse_pipeline("builtin.module()") == []


def test_named_pipelines_expand_recursively():
    expanded = names(expand(parse_pipeline("fuseflow-to-dataflow")))
    assert "fuseflow-to-kernels" not in expanded and "fuseflow-normalize" not in expanded
    assert expanded[-1] == "sam-verify"
    assert expanded.index("fuseflow-partition") < expanded.index("fuseflow-verify-kernels") \
        < expanded.index("fuseflow-lower-to-sam")
    assert expanded == names(expand(parse_pipeline(registry.PIPELINES["fuseflow-to-dataflow"])))


def test_parse_builds_pass_objects_and_upstream_text():
    pipeline = Pipeline.parse("builtin.module(canonicalize,fuseflow-partition{mode=full},"
                              "func.func(cse),sam-verify)")
    assert pipeline.steps == ["canonicalize", PartitionPass(mode=PartitionMode.FULL),
                              "func.func(cse)", SamVerifyPass()]


def test_text_round_trips_options_and_drops_defaults():
    text = "builtin.module(cse,fuseflow-partition{mode=full},fuseflow-partition,sam-verify)"
    pipeline = Pipeline.parse(text)
    assert pipeline.text() == text
    assert Pipeline.parse(pipeline.text()).steps == pipeline.steps
    assert Pipeline.parse("fuseflow-partition{mode=unfused}").text() == \
        "builtin.module(fuseflow-partition)"


def test_unknown_pass_lists_registered_passes_and_pipelines():
    with pytest.raises(PipelineError) as err:
        Pipeline.parse("fuseflow-bogus")
    message = str(err.value)
    assert "unknown pass 'fuseflow-bogus'" in message
    for name in [*registry.PASSES, *registry.PIPELINES]:
        assert name in message


def test_bad_option_value_lists_choices():
    with pytest.raises(PipelineError, match="invalid value 'bogus' for option 'mode' of pass "
                                            "'fuseflow-partition'; valid choices: unfused, full"):
        Pipeline.parse("fuseflow-partition{mode=bogus}")


def test_unknown_option_lists_valid_options():
    with pytest.raises(PipelineError, match="unknown option 'level' for pass 'fuseflow-partition'; "
                                            "valid options: mode"):
        Pipeline.parse("fuseflow-partition{level=1}")


def test_named_pipeline_takes_no_options():
    with pytest.raises(PipelineError, match="named pipeline 'fuseflow-to-kernels' takes no options"):
        Pipeline.parse("fuseflow-to-kernels{mode=full}")


def test_fuseflow_pass_must_be_top_level():
    with pytest.raises(PipelineError, match="'sam-verify' must appear at the top level"):
        Pipeline.parse("func.func(sam-verify)")


def test_bad_upstream_element_fails_when_building_the_pass_manager():
    pipeline = Pipeline.parse("no-such-upstream-pass")
    with pytest.raises(PipelineError, match="cannot parse pipeline element 'no-such-upstream-pass'"):
        pipeline.pass_manager(mlir.new_context())


LINALG = """
#id = affine_map<(d0) -> (d0)>
func.func @f(%A: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %one = arith.constant 1.0 : f32
  %two = arith.addf %one, %one : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%A : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %two : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_upstream_and_fuseflow_passes_run_in_one_pipeline():
    ctx = mlir.new_context()
    module = mlir.Module.parse(LINALG, ctx)
    Pipeline.parse("builtin.module(canonicalize,fuseflow-partition,fuseflow-verify-kernels)") \
        .run(module)
    ops = [op.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    assert ops == ["fuse.kernel", "func.return"]  # canonicalize folded addf; partition outlined
    assert "arith.addf" not in str(module)


def test_fuseflow_pass_failure_raises_with_located_diagnostics():
    ctx = mlir.new_context()
    module = mlir.Module.parse(LINALG, ctx)
    with pytest.raises(mlir.MLIRError) as err:
        Pipeline.parse("canonicalize,sam-verify").run(module)
    messages = [d.message for d in err.value.error_diagnostics]
    assert messages == ["'linalg.generic' op is left after lowering to dataflow; every linalg op "
                        "must become a 'sam.graph'"]
    assert str(err.value.error_diagnostics[0].location).startswith('loc("-":')

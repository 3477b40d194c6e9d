"""Arguments of the public entries are checked: a FuseFlowError (ArgumentError, also a
TypeError and ValueError) naming the argument and what it accepts, never a later crash."""

import pytest
import torch

import fuseflow
from fuseflow.errors import ArgumentError, FuseFlowError
from fuseflow.sim.arch import Arch


@pytest.mark.parametrize("fields, message", [
    ({"latency": 1.5}, r"^latency must be an int >= 1, got 1.5$"),
    ({"latency": 0}, r"latency must be an int >= 1"),
    ({"initiation_interval": True}, r"initiation_interval must be an int >= 0"),
    ({"fifo_depth": 2.0}, r"fifo_depth \(None: unbounded\) must be an int >= 1"),
    ({"block_costs": {"alu": (1.5, 1)}}, r"block_costs\['alu'\] latency must be an int"),
    ({"block_costs": {"alu": 3}}, r"block_costs\['alu'\] must be a pair"),
    ({"block_costs": {"scanner": (1, 1)}}, r"unknown block kind 'scanner'.*valid kinds: "),
    ({"memory": 64}, r"memory must be None or a MemoryModel"),
])
def test_arch_fields_are_checked(fields, message):
    with pytest.raises(ArgumentError, match=message) as info:
        Arch(**fields)
    assert isinstance(info.value, FuseFlowError)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_arch_of_accepts_an_arch_or_none_and_names_a_dict():
    assert Arch.of(None) == Arch()
    arch = Arch(latency=2)
    assert Arch.of(arch) is arch
    with pytest.raises(ArgumentError, match=r"fuseflow.Arch\(\*\*fields\)\), got dict"):
        Arch.of({"latency": 2})


def test_arch_is_exported():
    assert fuseflow.Arch is Arch


class Add(torch.nn.Module):
    def forward(self, a, b):
        return a + b


INPUTS = (torch.ones(2, 2), torch.ones(2, 2))


@pytest.mark.parametrize("fields, message", [
    ({"fusion": 3}, r"Schedule.fusion must be 'unfused', 'full', .* got 3"),
    ({"fusion": (("a",), 3)}, r"Schedule.fusion must be"),
    ({"formats": ["csr"]}, r"Schedule.formats must map input names to format names"),
    ({"formats": {"A": 2}}, r"Schedule.formats must map"),
    ({"order": 5}, r"Schedule.order must be loop names"),
])
def test_schedule_fields_are_checked(fields, message):
    with pytest.raises(ArgumentError, match=message):
        fuseflow.Schedule(**fields)


def test_schedule_formats_none_means_none_declared():
    assert fuseflow.Schedule(formats=None) == fuseflow.Schedule()


@pytest.mark.parametrize("args, message", [
    ((Add(), torch.ones(2, 2)), r"example_inputs must be a tuple of the forward arguments, "
                                r"e.g. \(x,\) for one tensor, got Tensor"),
    ((Add(), INPUTS, {"fusion": "full"}), r"schedule must be a fuseflow.Schedule or None "
                                          r"\(build one with fuseflow.Schedule\(\*\*fields\)\)"),
    ((lambda a, b: a + b, INPUTS), r"model must be a torch.nn.Module or MLIR text, got function"),
])
def test_compile_arguments_are_checked(args, message):
    with pytest.raises(ArgumentError, match=message):
        fuseflow.compile(*args)


def test_mlir_text_the_parser_would_crash_on_is_a_frontend_error():
    """A sparse encoding without a map segfaults MLIR's parser: checked before parsing."""
    from fuseflow.frontend import FrontendError

    text = ("#CSR = #sparse_tensor.encoding<{}>\n"
            "func.func @f(%a: tensor<4x4xf32, #CSR>) -> tensor<4x4xf32, #CSR> {\n"
            "  return %a : tensor<4x4xf32, #CSR>\n}\n")
    with pytest.raises(FrontendError, match=r"^<mlir text>:1:8: .*'map'") as info:
        fuseflow.compile(text)
    assert isinstance(info.value, FuseFlowError)


def test_mlir_text_without_a_function_is_a_frontend_error():
    from fuseflow.frontend import FrontendError

    with pytest.raises(FrontendError, match="no func.func to compile"):
        fuseflow.compile("module {}")


def test_simulate_checks_arch_engine_and_input_count():
    compiled = fuseflow.compile(Add(), INPUTS)
    with pytest.raises(ArgumentError, match="arch must be a fuseflow.Arch or None"):
        compiled.simulate(*INPUTS, arch={"latency": 2})
    with pytest.raises(ArgumentError, match="unknown engine 'slow'; valid engines: reference, "
                                            "fast"):
        compiled.simulate(*INPUTS, engine="slow")
    with pytest.raises(ArgumentError, match="expected 2 inputs, got 1"):
        compiled.simulate(INPUTS[0])
    # Engines agree on a non-default architecture (a fractional latency is refused above).
    arch = Arch(latency=2, initiation_interval=0)
    fast, ref = (compiled.simulate(*INPUTS, arch=arch, engine=e) for e in ("fast", "reference"))
    assert fast.cycles == ref.cycles and torch.equal(fast.output, ref.output)

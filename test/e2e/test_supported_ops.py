"""The supported-operations reference (``docs/supported-ops.md``) is the code's: the checked-in
file equals the generated one, every supported example compiles and matches PyTorch (with its
operand dense, and declared CSR where the reference says so), every unsupported one is refused
with a FuseFlow error or a located diagnostic naming why and pointing to the reference."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import fuseflow
from fuseflow import mlir
from fuseflow.errors import FuseFlowError
from fuseflow.supported_ops import DOC, EXAMPLE_INPUTS, REFERENCE, TORCH_OPS, render

warnings.filterwarnings("ignore")


def test_the_reference_is_generated_from_the_code():
    assert DOC.read_text() == render(), \
        f"{REFERENCE} is stale: run python -m fuseflow.supported_ops --write"


def _inputs(names):
    g = torch.Generator().manual_seed(7)
    out = []
    for name in names:
        shape = EXAMPLE_INPUTS[name][0]
        if name == "m":
            m = torch.rand(shape, generator=g) > 0.5
            m[:, 0] = True                         # no row fully masked (softmax of -inf rows)
            out.append(m)
        elif name == "x":
            x = torch.rand(shape, generator=g) + 0.1
            x = x * (torch.rand(shape, generator=g) < 0.6)
            x[:, 0] = 0.5                          # every row and column holds a value
            x[0] = 0.25
            out.append(x)
        else:
            out.append(torch.rand(shape, generator=g) + 0.1)
    return tuple(out)


class Example(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.fn = eval(f"lambda {', '.join(op.arguments)}: {op.example}",  # noqa: S307
                       {"torch": torch, "F": F})

    def forward(self, *args):
        return self.fn(*args)


SUPPORTED = [op for op in TORCH_OPS if op.supported]
UNSUPPORTED = [op for op in TORCH_OPS if not op.supported]


@pytest.mark.parametrize("op", SUPPORTED, ids=[op.example for op in SUPPORTED])
def test_supported_examples_match_pytorch(op):
    model, inputs = Example(op), _inputs(op.arguments)
    expected = model(*inputs)
    assert op.arguments[0] == "x"               # the forward's first argument: arg0
    for formats in ([{}, {"arg0": "csr"}] if op.sparse else [{}]):
        compiled = fuseflow.compile(model, inputs, fuseflow.Schedule(formats=formats))
        torch.testing.assert_close(compiled.simulate(*inputs).output, expected.float(),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", UNSUPPORTED, ids=[op.example for op in UNSUPPORTED])
def test_unsupported_examples_are_refused_saying_where_and_why(op):
    model, inputs = Example(op), _inputs(op.arguments)
    with pytest.raises((FuseFlowError, mlir.MLIRError)) as info:
        fuseflow.compile(model, inputs)
    message = str(info.value)
    assert op.error in message

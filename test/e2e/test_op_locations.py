"""A simulated block's statistics lead to its sam op and the PyTorch line the op came from.

Every sam op is located ``loc("<kind><index>"(<location of its linalg op>))``; the simulator
names each block after it, so a statistic keyed by block name finds its op in the compiled IR,
and the op's location finds the line of the model's ``forward`` that produced it.
"""

import warnings

import pytest
import torch

import fuseflow
from fuseflow import mlir
from fuseflow.dialects.ir import find_ops
from fuseflow.dialects.naming import stable_names
from fuseflow.viz.locations import parse_location

warnings.filterwarnings("ignore", category=UserWarning)


class SpMMReLU(torch.nn.Module):
    def forward(self, a, b):
        c = a @ b                  # line 1 of the body: scans, products, the accumulator
        return torch.relu(c)       # line 2 of the body: the ReLU and the writers


MATMUL_LINE = SpMMReLU.forward.__code__.co_firstlineno + 1
RELU_LINE = MATMUL_LINE + 1


@pytest.fixture(scope="module")
def fused():
    gen = torch.Generator().manual_seed(1)
    a = (torch.rand(6, 5, generator=gen) * (torch.rand(6, 5, generator=gen) > 0.5)).to_sparse_csr()
    b = torch.rand(5, 4, generator=gen)
    compiled = fuseflow.compile(SpMMReLU(), (a, b), fuseflow.Schedule(fusion="full"))
    result = compiled.simulate(a, b)
    assert torch.allclose(result.output, SpMMReLU()(a, b))
    return compiled, result


def _ops_by_name(module) -> dict:
    ops = {}
    for graph in find_ops(module.operation, lambda op: op.name == "sam.graph"):
        for op in list(graph.regions[0].blocks[0].operations)[:-1]:
            op = op.operation if hasattr(op, "operation") else op
            assert isinstance(op.location, mlir.ir.NameLoc), f"{op.name} has no stable name"
            ops[op.location.name_str] = op
    return ops


def _line_of(op) -> int:
    frame = parse_location(str(op.location.child_loc)).source_frame()
    assert frame is not None and frame.file == __file__, str(op.location)
    return frame.line


def test_block_statistics_lead_to_their_op_and_pytorch_line(fused):
    compiled, result = fused
    (kernel,) = result.stats.values()
    ops = _ops_by_name(compiled.module)
    blocks = [name for name in kernel.blocks if not name.startswith("broadcast_")]
    assert blocks and set(blocks) <= set(ops)       # every block's statistics find their op
    kinds = {}
    for name in blocks:
        kinds.setdefault(ops[name].name, []).append(name)
        assert ops[name].location.name_str == name
    # the matmul's operands are scanned and multiplied at its line; the ReLU at the next one
    assert kinds["sam.scan"][0] == "scan0" and _line_of(ops["scan0"]) == MATMUL_LINE
    mul = next(n for n in kinds["sam.alu"] if "mul" in str(ops[n].attributes["op"]))
    relu = next(n for n in kinds["sam.alu"] if "relu" in str(ops[n].attributes["op"]))
    assert _line_of(ops[mul]) == MATMUL_LINE and kernel.blocks[mul].ops > 0
    assert _line_of(ops[relu]) == RELU_LINE and kernel.blocks[relu].ops > 0
    assert _line_of(ops["value_write0"]) == RELU_LINE


def test_ops_are_named_by_kind_and_index_in_emission_order(fused):
    compiled, _ = fused
    for graph in find_ops(compiled.module.operation, lambda op: op.name == "sam.graph"):
        ops = [o.operation for o in graph.regions[0].blocks[0].operations][:-1]
        assert [o.location.name_str for o in ops] == stable_names(o.name for o in ops)
        assert ops[0].location.name_str == "root0"

"""Every row of the primitive table reaches IRDL, verifier, loader, both engines and the docs."""

import subprocess
import sys

import numpy as np
import pytest

from fuseflow import mlir
from fuseflow.dialects import attributes, generate, primitives, verify
from fuseflow.dialects.alu import ALU_OPS, AluError, alu_op, evaluate, scalar_form
from fuseflow.dialects.attributes import UndeclaredAttributeError
from fuseflow.dialects.ir import find_ops
from fuseflow.sim.blocks import IMPLEMENTATIONS
from fuseflow.sim.engines.fast import VECTORIZED
from fuseflow.sim.graph import BLOCK_KINDS
from fuseflow.sim.loader import OP_KINDS, load_graph

ROWS = {p.op_name: p for p in primitives.PRIMITIVES}


def test_generated_sections_match_the_table():
    assert generate.stale() == [], f"run `{generate.COMMAND}`"


@pytest.mark.parametrize("op_name", ROWS)
def test_row_reaches_irdl_verifier_loader_and_engines(op_name):
    prim = ROWS[op_name]
    assert mlir.new_context().is_registered_operation(op_name)
    # A row documents its verifier check exactly when verify.py has one.
    assert bool(prim.verifier) == (op_name in verify.SAM_CHECKS)
    assert OP_KINDS[op_name] == prim.kind and prim.kind in BLOCK_KINDS
    assert prim.kind in IMPLEMENTATIONS                   # reference engine (and fast fallback)
    assert prim.examples, "the reference shows an example"


def test_block_kinds_are_the_table_and_broadcast():
    assert set(BLOCK_KINDS) == {p.kind for p in primitives.PRIMITIVES} | {"broadcast"}
    assert set(IMPLEMENTATIONS) == set(BLOCK_KINDS)
    assert set(VECTORIZED) <= set(BLOCK_KINDS)


def test_docs_list_every_primitive_and_alu_op():
    text = (generate.SOURCE_ROOT / "docs/dialects.md").read_text()
    for op_name in ROWS:
        assert f"### `{op_name}`" in text
    for op in ALU_OPS:
        assert f"| `{op.name}` |" in text


_JOIN_GRAPH = """
func.func @f() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    %l:2 = "sam.fork"(%i) : (!sam.crd) -> (!sam.crd, !sam.crd)
    %j = "sam.join"(%i, %l#0, %l#1) {depth = 0 : i64} : (!sam.crd, !sam.crd, !sam.crd) -> !sam.crd
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}
"""


def test_loader_reads_declared_optional_attributes():
    with mlir.new_context():
        module = mlir.Module.parse(_JOIN_GRAPH)
        graph_op = next(find_ops(module.operation, lambda op: op.name == "sam.graph"))
        blocks = {b.kind: b for b in load_graph(graph_op).blocks}
    assert blocks["join"].attrs == {"depth": 0, "lanes": 2}
    assert blocks["scan"].attrs == {"level": 0, "size": 4, "tensor": None, "format": "dense"}


def test_alu_semantics():
    assert evaluate("scalar_rdiv", 4.0, scalar=2.0) == np.float32(0.5)
    assert evaluate("mask_fill", 0.0, 3.0, scalar=-1.0) == np.float32(-1.0)
    assert evaluate("relu", -2.0) == np.float32(0.0)
    assert (scalar_form("sub", constant_on_left=True), scalar_form("sub", False)) == \
        ("scalar_rsub", "scalar_sub")
    assert scalar_form("exp", False) is None
    arities = [alu_op(name).arity for name in ("add", "exp", "scalar_add", "mask_fill")]
    assert arities == [2, 1, 1, 2]
    with pytest.raises(AluError, match="unknown ALU op 'pow'; valid ops: add, sub, mul"):
        alu_op("pow")
    with pytest.raises(AluError, match="ALU op 'scalar_add' needs a scalar"):
        evaluate("scalar_add", 1.0)


@pytest.mark.parametrize("op", ALU_OPS, ids=lambda op: op.name)
def test_every_alu_op_has_an_array_form_equal_to_its_scalar_form(op):
    """The fast engine applies an op to whole float32 arrays; an op whose function only takes
    scalars ran one element at a time there (mask_fill: 42 of 60 CPU s on GPT-3 small). Each
    op's array result is its element-by-element result, bit for bit (NaN, -0.0, infinities)."""
    special = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0e38, 1e-40],
                       dtype=np.float32)
    rng = np.random.default_rng(7)
    arrays = [np.concatenate([special, rng.standard_normal(23).astype(np.float32)])
              for _ in range(op.arity)]
    arrays[-1] = np.roll(arrays[-1], 4) if op.arity == 2 else arrays[-1]
    scalar = (np.float32(-1.25),) if op.needs_scalar else ()
    with np.errstate(all="ignore"):
        whole = op.fn(*arrays, *scalar)
        each = [op.fn(*xs, *scalar) for xs in zip(*arrays)]
    assert isinstance(whole, np.ndarray) and whole.shape == arrays[0].shape
    assert whole.dtype == np.float32
    assert np.array_equal(whole.view(np.int32), np.array(each, dtype=np.float32).view(np.int32))


def test_simulator_core_imports_no_mlir():
    """The table, ALU and level modules the simulator core uses are plain data."""
    code = ("import sys, fuseflow.sim.graph, fuseflow.sim.formats, fuseflow.sim.blocks, "
            "fuseflow.sim.engines.fast; print('torch_mlir' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_attributes_build_and_read_back_by_the_table():
    with mlir.new_context():
        attrs = attributes.build("sam.alu", op="scalar_mul", scalar=0.125)
        assert {k: str(v) for k, v in attrs.items()} == {
            "op": '"scalar_mul"', "scalar": "1.250000e-01 : f32"}
        assert attributes.build("sam.scan", level=1, size=None) == {"level": attributes.build(
            "sam.scan", level=1)["level"]}
        with pytest.raises(UndeclaredAttributeError,
                           match="^'sam.scan' has no attribute 'lvl'; declared: level, size$"):
            attributes.build("sam.scan", lvl=0)
        module = mlir.Module.parse(_JOIN_GRAPH)
        join = next(find_ops(module.operation, lambda op: op.name == "sam.join"))
        assert attributes.read(join, primitives.primitive("sam.join")) == {"depth": 0}

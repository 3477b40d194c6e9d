"""Planning, then emitting, a kernel's lowering (passes/lowering/plan.py, lower_to_sam.py)."""

from dataclasses import replace

import pytest

from fuseflow import mlir
from fuseflow.dialects.ir import find_ops
from fuseflow.passes.lower_to_sam import (
    KernelAnalysis,
    LoweringError,
    default_order,
    emit_kernel,
    legal_orders,
    lower_module,
    plan_kernel,
)
from fuseflow.passes.lowering.builder import PlanBuilder, Stream
from fuseflow.passes.schedule import read_schedule
from fuseflow.pipeline import Pipeline

DENSE_TIMES_CSR = """
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @f(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%A, %B : tensor<4x5xf32>, tensor<5x3xf32, #CSR>)
      outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
"""

ROW_MAX = """
func.func @f(%A: tensor<4x5xf32>) -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%A : tensor<4x5xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def _kernels(text: str, schedule: bool = False):
    """The module of ``text`` partitioned (and scheduled) and its fuse.kernel ops."""
    ctx = mlir.new_context()
    with ctx:
        module = mlir.Module.parse(text)
        passes = "fuseflow-normalize,fuseflow-partition"
        Pipeline.parse(passes + (",fuseflow-schedule" if schedule else "")).run(module)
        ops = list(find_ops(module.operation, lambda op: op.name == "fuse.kernel"))
    return ctx, module, ops


def test_legal_orders_are_the_orders_that_plan_best_first():
    ctx, _, (kernel,) = _kernels(DENSE_TIMES_CSR)
    with ctx:
        analysis = KernelAnalysis.of(kernel)
        assert analysis.variables == ("d0", "d1", "d2")
        assert list(legal_orders(analysis)) == [("d0", "d2", "d1"), ("d2", "d0", "d1")]
        assert list(legal_orders(analysis, limit=1)) == [("d0", "d2", "d1")]
        assert default_order(analysis) == ("d0", "d2", "d1")


def test_an_order_that_respects_levels_but_does_not_plan_is_not_legal():
    # a max over a non-innermost variable has no primitive: (d1, d0) respects every level
    # order (A is dense, the output 1-d) but does not plan
    ctx, _, (kernel,) = _kernels(ROW_MAX)
    with ctx:
        analysis = KernelAnalysis.of(kernel)
        assert set(analysis.candidates()) == {("d0", "d1"), ("d1", "d0")}
        assert list(legal_orders(analysis)) == [("d0", "d1")]
        with pytest.raises(LoweringError, match=r"max reduction over a non-innermost index "
                           r"variable is not supported; order \(d1, d0\) is not lowerable; "
                           r"legal orders: d0,d1$"):
            plan_kernel(analysis, ("d1", "d0"))


def test_an_illegal_order_names_the_tensor_and_lists_the_legal_orders():
    ctx, _, (kernel,) = _kernels(DENSE_TIMES_CSR)
    with ctx:
        with pytest.raises(LoweringError, match=r"visits the levels of T1\[d2,d1\] out of "
                           r"storage order; legal orders: d0,d2,d1; d2,d0,d1$"):
            plan_kernel(KernelAnalysis.of(kernel), ("d0", "d1", "d2"))


def test_planning_builds_no_ir_and_emitting_builds_the_plan():
    ctx, module, (kernel,) = _kernels(DENSE_TIMES_CSR, schedule=True)
    with ctx:
        before = str(module)
        analysis = KernelAnalysis.of(kernel)
        plans = [plan_kernel(analysis, order) for order in legal_orders(analysis)]
        assert str(module) == before                       # planning built and erased nothing
        outer = plans[1]                                   # d2,d0,d1: A read transposed
        assert [v.kind for v in outer.views] == ["transpose"] and not plans[0].views
        graph = emit_kernel(kernel, outer)
        ops = [o.operation for o in graph.regions[0].blocks[0].operations][:-1]
        assert outer.size == len(ops) == len(outer.ops)
        assert [o.name for o in ops] == [p.name for p in outer.ops]
        assert read_schedule(graph).order == ("d0", "d2", "d1")   # the kernel's schedule
        assert "linalg.transpose" in str(module) and "fuse.kernel" not in str(module)


def test_lower_module_reuses_the_plans_whose_order_matches():
    ctx, module, (kernel,) = _kernels(DENSE_TIMES_CSR, schedule=True)
    with ctx:
        plan = plan_kernel(KernelAnalysis.of(kernel), ("d0", "d2", "d1"))
        marked = replace(plan, einsum="reused")
        used = lower_module(module.operation, {"k0": marked})
        assert used == {"k0": marked} and 'fuseflow.einsum = "reused"' in str(module)
    ctx, module, _ = _kernels(DENSE_TIMES_CSR, schedule=True)
    with ctx:
        stale = replace(marked, order=("d2", "d0", "d1"))     # planned for another order
        used = lower_module(module.operation, {"k0": stale})
        assert used["k0"].einsum != "reused" and "reused" not in str(module)


def test_the_plan_builder_builds_each_stream_once():
    b = PlanBuilder([None])
    root = b.root()
    crd, ref = b.scan(root, 0, 0)
    assert b.scan(root, 0, 0) == (crd, ref) and b.root() == root
    assert b.locate(root, crd, 0, 0) == ref                # the scan's own reference
    other = b.repeat(root, crd)
    assert b.locate(root, other, 0, 0) != ref and isinstance(other, Stream)
    b.value_write(b.array(ref, 0), 0)
    b.value_write(b.array(ref, 0), 0)                      # writers are never shared
    assert [op.name for op in b.ops] == ["sam.root", "sam.scan", "sam.repsiggen", "sam.repeat",
                                         "sam.locate", "sam.array", "sam.value_write",
                                         "sam.value_write"]
    assert b.alu("scalar_add", other, scalar=0.1) == b.alu("scalar_add", other, scalar=0.1)

// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=full},fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s

// Tests that SpMM -> bias -> ReLU fuses into one graph: the product is inlined as a reduction
// of the fused index notation, the sparse accumulator's result travels as a value stream
// through the unioner with the bias (a dense broadcast), and ReLU reads the sum.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#row = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @spmm_bias_relu
func.func @spmm_bias_relu(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = linalg.generic {indexing_maps = [#row, #bias, #row], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ugt, %x, %zero : f32
    %m = arith.select %c, %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK: "sam.graph"
// The bias is added to every row, so rows iterate the dense universe; A's dense row level is
// located at each of them, and A's columns locate B's dense rows (no joins).
// CHECK: %[[ROWS:.*]]:2 = "sam.scan"(%{{.*}}) {level = 0 : i64, size = 4 : i64}
// CHECK-NEXT: "sam.locate"(%[[ROWS]]#0, %{{.*}}, %{{.*}}) {level = 0 : i64}
// CHECK: %[[ACOL:.*]]:2 = "sam.scan"(%{{.*}}, %{{.*}}) {level = 1 : i64}
// CHECK-NEXT: "sam.locate"(%[[ACOL]]#0, %{{.*}}, %{{.*}}) {level = 0 : i64}
// CHECK-NOT: "sam.intersect"
// CHECK: %[[ACC:.*]]:2 = "sam.spacc"(%{{.*}}, %{{.*}}) {order = 1 : i64}
// CHECK: %[[BSCAN:.*]]:2 = "sam.scan"
// CHECK: %[[U:.*]]:3 = "sam.union"(%[[ACC]]#0, %[[BSCAN]]#0, %[[BSCAN]]#1, %[[ACC]]#1) {{.*}}val_groups = array<i64: 1, 0>
// CHECK: %[[BIAS:.*]] = "sam.array"(%[[U]]#1
// CHECK: %[[SUM:.*]] = "sam.alu"(%[[U]]#2, %[[BIAS]]) {op = "add"}
// CHECK: "sam.alu"(%[[SUM]]) {op = "relu"}
// CHECK: fuseflow.einsum = "out0[d0,d1] = max(add(sum_{d2}(mul(T0[d0,d2], T1[d2,d1])), T2[d1]), 0.0)"
// CHECK-SAME: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d1"]
// CHECK-NOT: "fuse.kernel"

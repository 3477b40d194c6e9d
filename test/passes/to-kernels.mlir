// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-to-kernels)' | filecheck %s

// Tests that the to-kernels phase normalizes, partitions, schedules and verifies: one kernel
// per op, each with its default fuseflow.schedule (the best legal order, no parallelization or
// blocking, the formats of its results).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @spmm_relu
func.func @spmm_relu(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
// CHECK: "fuse.kernel"
// CHECK: linalg.generic
// CHECK: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = []}, name = "k0"
// CHECK: "fuse.kernel"
// CHECK: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = []}, name = "k1"
// CHECK-NOT: linalg.matmul

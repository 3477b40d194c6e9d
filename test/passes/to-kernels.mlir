// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-to-kernels)' | filecheck %s

// Tests that the to-kernels phase normalizes, partitions and verifies: one kernel per op.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @spmm
func.func @spmm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK: "fuse.kernel"
// CHECK: linalg.generic
// CHECK-NOT: linalg.matmul

// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-normalize)' | filecheck %s

// Tests that named linalg ops are generalized so every kernel op is a linalg.generic.
// CHECK-LABEL: func.func @matmul
func.func @matmul(%A: tensor<4x5xf32>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%A, %B : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]

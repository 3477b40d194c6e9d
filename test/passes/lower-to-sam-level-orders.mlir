// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition,fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s

// Tests that an element-wise op of a CSC and a dense matrix, which no order visits in every
// tensor's storage order (CSC: columns first; the dense result: rows first), reads CSC in
// storage order and writes the result transposed (a 5x4 graph result), transposed back on the
// host after the graph; the dense operand is read through a host transpose too.
#CSC = #sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @csc_times_dense
func.func @csc_times_dense(%A: tensor<4x5xf32, #CSC>, %B: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : tensor<4x5xf32, #CSC>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
// CHECK: %[[BT:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x5xf32>) outs(%{{.*}} : tensor<5x4xf32>) permutation = [1, 0]
// CHECK: %[[G:.*]] = "sam.graph"(%{{.*}}, %[[BT]])
// CHECK: order = ["d1", "d0"]
// CHECK-SAME: -> tensor<5x4xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[G]] : tensor<5x4xf32>) outs(%{{.*}} : tensor<4x5xf32>) permutation = [1, 0]
// CHECK-NOT: tensor.cast
// CHECK: return %[[R]]

// -----

// Tests that the product of a CSC and a CSR matrix, whose level orders contradict each other,
// reads the CSC operand converted on the host to CSR (a tensor.cast to the same level formats
// over the dimensions in visiting order) and writes the result in storage order.
#CSC = #sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed) }>
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @csc_times_csr
func.func @csc_times_csr(%A: tensor<4x5xf32, #CSC>, %B: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : tensor<4x5xf32, #CSC>, tensor<4x5xf32, #CSR>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
// CHECK: %[[AC:.*]] = tensor.cast %{{.*}} : tensor<4x5xf32, #[[ENC_CSC:.*]]> to tensor<4x5xf32, #[[ENC_CSR:.*]]>
// CHECK: %[[G:.*]] = "sam.graph"(%{{.*}}, %[[AC]])
// CHECK: order = ["d0", "d1"]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[G]]

// -----

// Tests that a standalone transpose of a CSR matrix (as nn.Linear's weight in an unfused
// model) scans the matrix in storage order and writes the dense result transposed.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @csr_transpose
func.func @csr_transpose(%W: tensor<3x4xf32, #CSR>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%W : tensor<3x4xf32, #CSR>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%w: f32, %o: f32):
    linalg.yield %w : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK: %[[G:.*]] = "sam.graph"
// CHECK: order = ["d1", "d0"]
// CHECK-SAME: -> tensor<3x4xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[G]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<4x3xf32>) permutation = [1, 0]
// CHECK: return %[[R]]

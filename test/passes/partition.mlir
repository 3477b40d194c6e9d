// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition)' | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition{mode=full})' | filecheck %s --check-prefix=FULL

// Tests that unfused partitioning outlines each linalg op into its own kernel, clones the
// fill and constants it needs, and chains kernels through their results.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @chain
// FULL-LABEL: func.func @chain
func.func @chain(%A: tensor<4xf32>, %B: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%A, %B : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %one : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %t : tensor<4xf32>
}
// CHECK: %[[K0:.*]] = "fuse.kernel"(%{{.*}}, %{{.*}}) ({
// CHECK: tensor.empty
// CHECK: linalg.generic
// CHECK: gpu.yield
// CHECK: name = "k0"
// CHECK: %[[K1:.*]] = "fuse.kernel"(%[[K0]]) ({
// CHECK: arith.constant 1.0
// CHECK: linalg.generic
// CHECK: name = "k1"
// CHECK: return %[[K1]]
// FULL: %[[K:.*]] = "fuse.kernel"(%{{.*}}, %{{.*}}) ({
// FULL-COUNT-2: linalg.generic
// FULL: name = "k0"
// FULL-NOT: "fuse.kernel"
// FULL: return %[[K]]

// -----

// Tests that a tensor.cast giving a result its sparse type moves into the kernel.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @cast
func.func @cast(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<4x5xf32, #CSR>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %c = tensor.cast %r : tensor<4x5xf32> to tensor<4x5xf32, #CSR>
  return %c : tensor<4x5xf32, #CSR>
}
// CHECK: "fuse.kernel"
// CHECK: %[[CAST:.*]] = tensor.cast
// CHECK: gpu.yield %[[CAST]] : tensor<4x5xf32, #{{.*}}>
// CHECK: -> tensor<4x5xf32, #{{.*}}>

// -----

// Tests that a kernel's inputs and results are ordered by type, values of one type in order of
// first use, so each type is one run of one container slot: inputs M v N w -> M N v w
// (segments [2, 2]), results 4x3 3 4x3 -> 4x3 4x3 3 (segments [2, 1]).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// FULL-LABEL: func.func @by_type
func.func @by_type(%M: tensor<4x3xf32>, %v: tensor<3xf32>, %N: tensor<4x3xf32>, %w: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%M, %v : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v, %w : tensor<3xf32>, tensor<3xf32>) outs(%e1 : tensor<3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %N : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  return %a, %s, %b : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>
}
// FULL: %[[K:.*]]:3 = "fuse.kernel"(%arg0, %arg2, %arg1, %arg3) ({
// FULL: gpu.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>
// FULL: operandSegmentSizes = array<i32: 2, 2, 0,
// FULL-SAME: resultSegmentSizes = array<i32: 2, 1, 0,
// FULL: return %[[K]]#0, %[[K]]#2, %[[K]]#1

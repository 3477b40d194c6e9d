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

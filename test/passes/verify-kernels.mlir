// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --fuseflow-verify-kernels | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --no-fuseflow-verify-on-parse --fuseflow-verify-kernels | filecheck %s

// Tests that linalg ops inside kernels pass unchanged.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @in_kernel
// CHECK: %[[K:.*]] = "fuse.kernel"
// CHECK: linalg.generic
// CHECK: return %[[K]]
func.func @in_kernel(%X: tensor<4xf32>) -> tensor<4xf32> {
  %k = "fuse.kernel"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<4xf32>
    gpu.yield %r : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a linalg op outside every kernel is reported, named ops included.
func.func @outside_kernel(%A: tensor<4x4xf32>, %B: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error @below {{'linalg.matmul' op is outside every 'fuse.kernel' after partitioning}}
  %r = linalg.matmul ins(%A, %B : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Tests that the pass runs the fuse dialect verifiers (a kernel yielding the wrong type).
func.func @bad_kernel(%X: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @below {{'fuse.kernel' op yielded value #0 has type tensor<4xf32> but result #0 has type tensor<4xf64>}}
  %k = "fuse.kernel"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    gpu.yield %x : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf64>
  return %k : tensor<4xf64>
}


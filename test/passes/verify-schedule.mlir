// RUN: fuseflow-opt %s --split-input-file --fuseflow-verify-schedule | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-to-kernels)' | filecheck %s --check-prefix=PHASE

// Tests that the verifier accepts a legal schedule (a non-default legal order, a parallel
// factor, a block shape) and leaves the IR unchanged.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @scheduled
func.func @scheduled(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64: 4, 4>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = [["d0", 4]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}
// CHECK: "fuse.kernel"
// CHECK: fuseflow.schedule = {block = array<i64: 4, 4>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = {{\[\[}}"d0", 4]]}
// PHASE-LABEL: func.func @scheduled
// PHASE: fuseflow.schedule = {block = array<i64: 4, 4>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = {{\[\[}}"d0", 4]]}

// -----

// Tests that the kernel phase closes with the verifier: every kernel it makes is scheduled and
// verified (a CSR result's format is csr).
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
// PHASE-LABEL: func.func @spgemm
func.func @spgemm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32, #CSR> {
  %e = tensor.empty() : tensor<4x3xf32, #CSR>
  %p = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32, #CSR>) outs(%e : tensor<4x3xf32, #CSR>) -> tensor<4x3xf32, #CSR>
  return %p : tensor<4x3xf32, #CSR>
}
// PHASE: "fuse.kernel"
// PHASE: fuseflow.schedule = {block = array<i64>, formats = ["csr"], order = ["d0", "d2", "d1"], parallel = []}

// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition,fuseflow-schedule{kernel=k0 order=d0,d1,d2 parallel=d1:0})'
// RUN: not fuseflow-opt %s --split-input-file --fuseflow-normalize --fuseflow-partition --fuseflow-schedule=kernel=k9 2>&1 | filecheck %s --check-prefix=UNKNOWN

// Tests that an unknown kernel name is an error that lists the kernels (UNKNOWN).
// UNKNOWN: error: fuseflow-schedule: unknown kernel 'k9'; kernels: k0
// UNKNOWN: error: fuseflow-schedule: unknown kernel 'k9'; kernels: k0

// Each case asks fuseflow-schedule for kernel k0 in the inner-product order d0,d1,d2 with a
// parallel factor of 0 for d1; the errors are located at the kernel (its last op) and nothing is
// set.

// Tests that an order reading a compressed operand's levels out of storage order is rejected,
// listing the legal orders, and that a parallel factor below 1 is rejected.
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
func.func @spgemm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32, #CSR> {
  %e = tensor.empty() : tensor<4x3xf32, #CSR>
  // expected-error @below {{schedule of kernel 'k0': order (d0, d1, d2) visits the levels of T1[d2,d1] out of storage order; legal orders: d0,d2,d1}}
  // expected-error @below {{schedule of kernel 'k0': parallel factor 0 of d1 must be >= 1}}
  %p = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32, #CSR>) outs(%e : tensor<4x3xf32, #CSR>) -> tensor<4x3xf32, #CSR>
  return %p : tensor<4x3xf32, #CSR>
}

// -----

// Tests that an order that is not a permutation of the kernel's variables is rejected.
func.func @relu(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @below {{schedule of kernel 'k0': order (d0, d1, d2) must be a permutation of the kernel's index variables (d0, d1); legal orders: d0,d1}}
  // expected-error @below {{schedule of kernel 'k0': parallel factor 0 of d1 must be >= 1}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}


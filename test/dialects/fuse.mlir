// RUN: fuseflow-opt %s --split-input-file | fuseflow-opt --split-input-file | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --mlir-print-op-generic | fuseflow-opt --split-input-file | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// Tests that a kernel with inputs and results of different types round-trips: one operand
// and one result slot per run of equal types, the body's arguments mirroring the inputs.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @mixed_types
// GENERIC-LABEL: sym_name = "mixed_types"
func.func @mixed_types(%A: tensor<4x5xf32, #CSR>, %x: tensor<5xf32>) -> (tensor<5xf32>, tensor<4x5xf32, #CSR>) {
  // CHECK: %[[K:.*]]:2 = "fuse.kernel"(%[[A:.*]], %[[X:.*]]) ({
  // CHECK-NEXT: ^bb0(%[[BA:[^:]+]]: tensor<4x5xf32, #{{.*}}>, %[[BX:[^:]+]]: tensor<5xf32>):
  // CHECK-NEXT: gpu.yield %[[BX]], %[[BA]] : tensor<5xf32>, tensor<4x5xf32, #{{.*}}>
  // CHECK-NEXT: }) {name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, {{.*}}>, resultSegmentSizes = array<i32: 1, 1, 0, {{.*}}>} : (tensor<4x5xf32, #{{.*}}>, tensor<5xf32>) -> (tensor<5xf32>, tensor<4x5xf32, #{{.*}}>)
  // GENERIC: "fuse.kernel"
  // GENERIC: "gpu.yield"(%{{.*}}, %{{.*}}) : (tensor<5xf32>, tensor<4x5xf32, #{{.*}}>) -> ()
  %k:2 = "fuse.kernel"(%A, %x) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %v: tensor<5xf32>):
    gpu.yield %v, %a : tensor<5xf32>, tensor<4x5xf32, #CSR>
  }) {name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<5xf32>) -> (tensor<5xf32>, tensor<4x5xf32, #CSR>)
  // CHECK: return %[[K]]#0, %[[K]]#1
  return %k#0, %k#1 : tensor<5xf32>, tensor<4x5xf32, #CSR>
}

// -----

// Tests that a kernel holding linalg ops, with a fill cloned into it, round-trips and that
// kernels chain through their results.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @chain
// GENERIC-LABEL: sym_name = "chain"
func.func @chain(%A: tensor<4xf32>, %B: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[K0:.*]] = "fuse.kernel"(%{{.*}}, %{{.*}}) ({
  // CHECK: %[[SUM:.*]] = linalg.generic
  // CHECK: arith.addf
  // CHECK: gpu.yield %[[SUM]] : tensor<4xf32>
  // GENERIC: "linalg.generic"
  %k0 = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.addf %x, %y : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    gpu.yield %s : tensor<4xf32>
  }) {name = "k0", operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[K1:.*]] = "fuse.kernel"(%[[K0]]) ({
  // CHECK: linalg.generic
  // CHECK: arith.mulf
  %k1 = "fuse.kernel"(%k0) ({
  ^bb0(%s: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%s, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.mulf %x, %y : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    gpu.yield %p : tensor<4xf32>
  }) {name = "k1", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[K1]]
  return %k1 : tensor<4xf32>
}

// -----

// Tests that a kernel without inputs (all its values made inside) round-trips.
// CHECK-LABEL: func.func @no_inputs
// GENERIC-LABEL: sym_name = "no_inputs"
func.func @no_inputs() -> tensor<2xf32> {
  // CHECK: %[[K:.*]] = "fuse.kernel"() ({
  // CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
  // CHECK-NEXT: gpu.yield %[[C]] : tensor<2xf32>
  // CHECK-NEXT: }) {operandSegmentSizes = array<i32: 0, {{.*}}>, resultSegmentSizes = array<i32: 1, 0, {{.*}}>} : () -> tensor<2xf32>
  // GENERIC: "fuse.kernel"() ({
  %k = "fuse.kernel"() ({
    %c = arith.constant dense<1.0> : tensor<2xf32>
    gpu.yield %c : tensor<2xf32>
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> tensor<2xf32>
  return %k : tensor<2xf32>
}

// -----

// Tests that consecutive inputs and results of one type share a slot (a run), so the segment
// sizes are the run lengths: inputs A A x x x A -> [2, 3, 1], results x x A -> [2, 1].
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @runs
func.func @runs(%A: tensor<4x5xf32, #CSR>, %x: tensor<5xf32>) -> tensor<5xf32> {
  // CHECK: "fuse.kernel"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) ({
  // CHECK: }) {operandSegmentSizes = array<i32: 2, 3, 1, 0, {{.*}}>, resultSegmentSizes = array<i32: 2, 1, 0, {{.*}}>}
  %k:3 = "fuse.kernel"(%A, %A, %x, %x, %x, %A) ({
  ^bb0(%a0: tensor<4x5xf32, #CSR>, %a1: tensor<4x5xf32, #CSR>, %v0: tensor<5xf32>, %v1: tensor<5xf32>, %v2: tensor<5xf32>, %a2: tensor<4x5xf32, #CSR>):
    gpu.yield %v0, %v1, %a2 : tensor<5xf32>, tensor<5xf32>, tensor<4x5xf32, #CSR>
  }) {operandSegmentSizes = array<i32: 2, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32, #CSR>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<4x5xf32, #CSR>) -> (tensor<5xf32>, tensor<5xf32>, tensor<4x5xf32, #CSR>)
  return %k#0 : tensor<5xf32>
}

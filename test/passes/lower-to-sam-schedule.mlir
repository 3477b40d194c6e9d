// RUN: fuseflow-opt %s --split-input-file --fuseflow-kernels-to-dataflow | filecheck %s

// Tests that the lowering follows a fuseflow.schedule edited by hand. Dense A times CSR B has
// two legal orders; this kernel's schedule was edited from the default d0,d2,d1 to the
// outer-product order d2,d0,d1: A is read through a host transpose, the graph scans d2 first
// (A^T's rows, locating B's dense rows), then d0, then B's compressed columns d1, and
// accumulates whole output rows in an order-2 sparse accumulator. The schedule is copied
// onto the graph.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @edited
func.func @edited(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
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
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}
// CHECK: %[[AT:.*]] = linalg.transpose ins(%arg0 : tensor<4x5xf32>) outs(%{{.*}} : tensor<5x4xf32>) permutation = [1, 0]
// CHECK: "sam.graph"(%arg1, %[[AT]])
// CHECK-NEXT: ^bb0(%[[B:.*]]: tensor<5x3xf32, #{{.*}}>, %[[ATA:.*]]: tensor<5x4xf32>):
// CHECK-NEXT: %[[ROOT:.*]] = "sam.root"()
// CHECK-NEXT: %[[K:.*]]:2 = "sam.scan"(%[[ROOT]], %[[ATA]]) {level = 0 : i64}
// CHECK-NEXT: %[[BK:.*]]:2 = "sam.locate"(%[[K]]#0, %[[ROOT]], %[[B]]) {level = 0 : i64}
// CHECK-NEXT: %[[I:.*]]:2 = "sam.scan"(%[[K]]#1, %[[ATA]]) {level = 1 : i64}
// CHECK: "sam.scan"(%{{.*}}, %[[B]]) {level = 1 : i64}
// CHECK: "sam.spacc"({{.*}}) {order = 2 : i64}
// CHECK: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = []}
// CHECK-NOT: "fuse.kernel"

// -----

// Tests that the same kernel with its default schedule (d0,d2,d1) reads A in place, scans its
// rows first and accumulates B's rows in an order-1 sparse accumulator.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @default
func.func @default(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
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
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}
// CHECK-NOT: linalg.transpose
// CHECK: "sam.graph"(%arg0, %arg1)
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x5xf32>, %[[B:.*]]: tensor<5x3xf32, #{{.*}}>):
// CHECK-NEXT: %[[ROOT:.*]] = "sam.root"()
// CHECK-NEXT: "sam.scan"(%[[ROOT]], %[[A]]) {level = 0 : i64}
// CHECK: "sam.spacc"({{.*}}) {order = 1 : i64}
// CHECK: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = []}

// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition,fuseflow-schedule,fuseflow-lower-to-sam)' | filecheck %s

// Tests that CSR SpMV lowers to the SAM graph of the worked example: scan i, repeat the
// vector per row, scan A's row and locate its coordinates in the dense vector (no scan of the
// vector, no intersection), multiply, reduce, write.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mv_a = affine_map<(d0, d1) -> (d0, d1)>
#mv_x = affine_map<(d0, d1) -> (d1)>
#mv_y = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @spmv
func.func @spmv(%A: tensor<3x4xf32, #CSR>, %x: tensor<4xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#mv_a, #mv_x, #mv_y], iterator_types = ["parallel", "reduction"]}
      ins(%A, %x : tensor<3x4xf32, #CSR>, tensor<4xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}
// CHECK: "sam.graph"
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<3x4xf32, #{{.*}}>, %[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT: %[[ROOT:.*]] = "sam.root"()
// CHECK-NEXT: %[[I:.*]]:2 = "sam.scan"(%[[ROOT]], %[[A]]) {level = 0 : i64}
// CHECK-NEXT: %[[SIG:.*]] = "sam.repsiggen"(%[[I]]#0)
// CHECK-NEXT: %[[XREF:.*]] = "sam.repeat"(%[[ROOT]], %[[SIG]])
// CHECK-NEXT: %[[AJ:.*]]:2 = "sam.scan"(%[[I]]#1, %[[A]]) {level = 1 : i64}
// CHECK-NEXT: %[[XJ:.*]]:2 = "sam.locate"(%[[AJ]]#0, %[[XREF]], %[[X]]) {level = 0 : i64}
// CHECK-NEXT: %[[AV:.*]] = "sam.array"(%[[AJ]]#1, %[[A]])
// CHECK-NEXT: %[[XV:.*]] = "sam.array"(%[[XJ]]#0, %[[X]])
// CHECK-NEXT: %[[MUL:.*]] = "sam.alu"(%[[AV]], %[[XV]]) {op = "mul"}
// CHECK-NEXT: %[[SUM:.*]] = "sam.reduce"(%[[MUL]]) {kind = "sum"}
// CHECK-NEXT: "sam.level_write"(%[[I]]#0) {level = 0 : i64, result = 0 : i64}
// CHECK-NEXT: "sam.value_write"(%[[SUM]]) {result = 0 : i64}
// CHECK-NEXT: gpu.yield
// CHECK: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d1"]
// CHECK-NOT: linalg.generic

// -----

// Tests that element-wise addition of two CSR matrices scans A's dense rows, locates B's
// (a dense level holds every row: no join) and unions their column fibers.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add
func.func @add(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<4x5xf32, #CSR>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
// CHECK: %[[ROWS:.*]]:2 = "sam.scan"(%{{.*}}, %[[A:.*]]) {level = 0 : i64}
// CHECK-NEXT: "sam.locate"(%[[ROWS]]#0, %{{.*}}, %[[B:.*]]) {level = 0 : i64}
// CHECK: "sam.union"
// CHECK-SAME: ref_groups = array<i64: 1, 1>
// CHECK-NOT: "sam.intersect"
// CHECK: "sam.alu"({{.*}}) {op = "add"}
// CHECK-NOT: "sam.reduce"

// -----

// Tests that CSR x dense SpMM picks the row-wise order (i, k, j) and reduces k with an
// order-1 sparse accumulator.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @spmm
func.func @spmm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK: %[[ACC:.*]]:2 = "sam.spacc"
// CHECK-SAME: {order = 1 : i64}
// CHECK: "sam.level_write"(%[[ACC]]#0) {level = 1 : i64, result = 0 : i64}
// CHECK: "sam.value_write"(%[[ACC]]#1)
// CHECK: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d1"]

// -----

// Tests that a CSC operand forces the outer-product order (k, i, j) and an order-2 accumulator.
#CSC = #sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @spmm_csc
func.func @spmm_csc(%A: tensor<4x5xf32, #CSC>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<4x5xf32, #CSC>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK: "sam.spacc"
// CHECK-SAME: {order = 2 : i64}
// CHECK: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d2", "d0", "d1"]

// -----

// Tests that adding a scalar to a sparse matrix iterates the dense universe of each index
// (the result is dense), unioned with the sparse operand.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_scalar
func.func @add_scalar(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<4x5xf32, #CSR>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
// CHECK: "sam.scan"({{.*}}) {level = 0 : i64, size = 5 : i64}
// CHECK: "sam.union"
// CHECK: "sam.alu"({{.*}}) {op = "scalar_add", scalar = 1.000000e+00 : f32}

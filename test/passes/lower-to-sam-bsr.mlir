// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition,fuseflow-schedule,fuseflow-lower-to-sam)' | filecheck %s

// Tests that BSR x dense (SpMM) splits i and k into block and offset variables: the BSR
// operand is scanned at its four levels (block row, block column, in-block row, in-block
// column), the dense operand is read through a host-side tensor.expand_shape over k, and the
// dense result is written expanded ([i/2, 2, j]) and collapsed on the host after the graph.
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @spmm
// CHECK-SAME: (%[[A:.*]]: tensor<4x6xf32, #{{.*}}>, %[[B:.*]]: tensor<6x3xf32>)
func.func @spmm(%A: tensor<4x6xf32, #BSR>, %B: tensor<6x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<4x6xf32, #BSR>, tensor<6x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// CHECK: %[[BX:.*]] = tensor.expand_shape %[[B]] {{\[}}[0, 1], [2]] output_shape [3, 2, 3] : tensor<6x3xf32> into tensor<3x2x3xf32>
// CHECK-NEXT: %[[G:.*]] = "sam.graph"(%[[A]], %[[BX]])
// CHECK-NEXT: ^bb0(%[[GA:.*]]: tensor<4x6xf32, #{{.*}}>, %[[GB:.*]]: tensor<3x2x3xf32>):
// CHECK: %[[IB:.*]]:2 = "sam.scan"(%{{.*}}, %[[GA]]) {level = 0 : i64}
// CHECK: %[[KB:.*]]:2 = "sam.scan"(%[[IB]]#1, %[[GA]]) {level = 1 : i64}
// CHECK: %[[IO:.*]]:2 = "sam.scan"(%[[KB]]#1, %[[GA]]) {level = 2 : i64}
// CHECK: %[[KO:.*]]:2 = "sam.scan"(%[[IO]]#1, %[[GA]]) {level = 3 : i64}
// CHECK: "sam.array"(%{{.*}}, %[[GA]])
// CHECK: "sam.array"(%{{.*}}, %[[GB]])
// CHECK: "sam.alu"(%{{.*}}, %{{.*}}) {op = "mul"}
// CHECK: "sam.level_write"(%[[IB]]#0) {level = 0 : i64, result = 0 : i64}
// CHECK: fuseflow.einsum = "out0[d0,d3,d1] = sum_{d2,d4}(mul(T0[d0,d2,d3,d4], T1[d2,d4,d1]))"
// CHECK-SAME: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d3", "d4", "d1"]
// CHECK-SAME: -> tensor<2x2x3xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
// CHECK-NEXT: return %[[C]] : tensor<4x3xf32>

// -----

// Tests that BSR + dense with a dense result writes the result block-major ([i/2, j/2, 2, 2],
// the only layout the BSR level order allows) and transposes and collapses it on the host;
// the dense operand is expanded, then transposed to the same block-major layout.
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_dense
func.func @add_dense(%A: tensor<4x6xf32, #BSR>, %D: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %D : tensor<4x6xf32, #BSR>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %s = arith.addf %a, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
// CHECK: %[[DX:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]] output_shape [2, 2, 3, 2] : tensor<4x6xf32> into tensor<2x2x3x2xf32>
// CHECK: %[[DT:.*]] = linalg.transpose ins(%[[DX]] : tensor<2x2x3x2xf32>) outs(%{{.*}} : tensor<2x3x2x2xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[G:.*]] = "sam.graph"(%{{.*}}, %[[DT]])
// CHECK: "sam.union"
// CHECK: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d1", "d2", "d3"]
// CHECK-SAME: -> tensor<2x3x2x2xf32>
// CHECK: %[[GT:.*]] = linalg.transpose ins(%[[G]] : tensor<2x3x2x2xf32>) outs(%{{.*}} : tensor<2x2x3x2xf32>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[GT]] {{\[}}[0, 1], [2, 3]] : tensor<2x2x3x2xf32> into tensor<4x6xf32>
// CHECK-NEXT: return %[[C]]

// -----

// Tests that a BSR result with the operands' blocking is written natively at its four levels
// (no host view), and that BSR (*) BSR intersects the block columns.
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @mul_bsr_result
func.func @mul_bsr_result(%A: tensor<4x4xf32, #BSR>, %B: tensor<4x4xf32, #BSR>) -> tensor<4x4xf32, #BSR> {
  %e = tensor.empty() : tensor<4x4xf32, #BSR>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : tensor<4x4xf32, #BSR>, tensor<4x4xf32, #BSR>) outs(%e : tensor<4x4xf32, #BSR>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32, #BSR>
  return %r : tensor<4x4xf32, #BSR>
}
// CHECK-NOT: tensor.expand_shape
// CHECK: "sam.graph"
// CHECK: "sam.intersect"
// CHECK-DAG: "sam.level_write"(%{{.*}}) {level = 0 : i64, result = 0 : i64}
// CHECK-DAG: "sam.level_write"(%{{.*}}) {level = 1 : i64, result = 0 : i64}
// CHECK-DAG: "sam.level_write"(%{{.*}}) {level = 2 : i64, result = 0 : i64}
// CHECK-DAG: "sam.level_write"(%{{.*}}) {level = 3 : i64, result = 0 : i64}
// CHECK: fuseflow.einsum = "out0[d0,d1,d2,d3] = mul(T0[d0,d1,d2,d3], T1[d0,d1,d2,d3])"
// CHECK-SAME: -> tensor<4x4xf32, #{{.*}}>
// CHECK-NOT: tensor.collapse_shape
// CHECK: return

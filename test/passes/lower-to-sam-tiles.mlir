// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition,fuseflow-schedule{block=2,2},fuseflow-lower-to-sam)' | filecheck %s

// Tests that a schedule block lowers BSR x BSR (SpMM) with tiles as values: only the block
// levels are scanned (no level 2 or 3), tiles are loaded from the last block level's
// references, multiplied as a tile product ("ab,bc->ac"), accumulated over k's blocks, and
// the dense result is written block-major with its tiles as the innermost levels, transposed
// and collapsed on the host.
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @spmm
// CHECK-SAME: (%[[A:.*]]: tensor<4x6xf32, #{{.*}}>, %[[B:.*]]: tensor<6x4xf32, #{{.*}}>)
func.func @spmm(%A: tensor<4x6xf32, #BSR>, %B: tensor<6x4xf32, #BSR>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<4x6xf32, #BSR>, tensor<6x4xf32, #BSR>) outs(%f : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
// CHECK: %[[G:.*]] = "sam.graph"(%[[A]], %[[B]])
// CHECK-NEXT: ^bb0(%[[GA:.*]]: tensor<4x6xf32, #{{.*}}>, %[[GB:.*]]: tensor<6x4xf32, #{{.*}}>):
// CHECK-NOT: level = 2
// CHECK-NOT: level = 3
// CHECK: %[[TA:.*]] = "sam.array"(%{{.*}}, %[[GA]]) : (!sam.ref, tensor<4x6xf32, #{{.*}}>) -> !sam.val<f32, array<i64: 2, 2>>
// CHECK-NEXT: %[[TB:.*]] = "sam.array"(%{{.*}}, %[[GB]]) : (!sam.ref, tensor<6x4xf32, #{{.*}}>) -> !sam.val<f32, array<i64: 2, 2>>
// CHECK-NEXT: %[[P:.*]] = "sam.alu"(%[[TA]], %[[TB]]) {op = "mul", tile = "ab,bc->ac"}
// CHECK-NEXT: %[[ACC:.*]]:2 = "sam.spacc"(%{{.*}}, %[[P]]) {order = 1 : i64} : (!sam.crd, !sam.val<f32, array<i64: 2, 2>>)
// CHECK: "sam.value_write"(%[[ACC]]#1) {result = 0 : i64} : (!sam.val<f32, array<i64: 2, 2>>) -> ()
// CHECK: fuseflow.schedule = {block = array<i64: 2, 2>
// CHECK-SAME: -> tensor<2x2x2x2xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[G]] : tensor<2x2x2x2xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK-NEXT: tensor.collapse_shape %[[T]] {{\[}}[0, 1], [2, 3]] : tensor<2x2x2x2xf32> into tensor<4x4xf32>

// -----

// Tests that a row sum of a BSR matrix with tiles reduces each tile's rows in the reducer
// ("ab->a") while the block columns are summed in the stream: the result's values are
// vectors of the block's rows.
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @rowsum
func.func @rowsum(%A: tensor<4x6xf32, #BSR>) -> tensor<4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%A : tensor<4x6xf32, #BSR>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[T:.*]] = "sam.array"(%{{.*}}, %{{.*}}) : (!sam.ref, tensor<4x6xf32, #{{.*}}>) -> !sam.val<f32, array<i64: 2, 2>>
// CHECK-NEXT: %[[R:.*]] = "sam.reduce"(%[[T]]{{.*}}) {kind = "sum", tile = "ab->a"} : {{.*}} -> !sam.val<f32, array<i64: 2>>
// CHECK: "sam.value_write"(%[[R]]) {result = 0 : i64} : (!sam.val<f32, array<i64: 2>>) -> ()

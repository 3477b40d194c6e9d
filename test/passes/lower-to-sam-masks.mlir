// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition{mode=full},fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s

// Tests that a boolean mask is a 0/1 value stream: `x.masked_fill(~m, 0.0)` (torch-mlir's
// xori with true, then a select that fills where the condition holds) keeps x where m holds:
// a mask_fill by m, the two negations cancelled.
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @fill_not
func.func @fill_not(%x: tensor<3x4xf32>, %m: tensor<3x4xi1>) -> tensor<3x4xf32> {
  %true = arith.constant true
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %e1 = tensor.empty() : tensor<3x4xi1>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<3x4xi1>) outs(%e1 : tensor<3x4xi1>) {
  ^bb0(%in: i1, %out: i1):
    %x1 = arith.xori %in, %true : i1
    linalg.yield %x1 : i1
  } -> tensor<3x4xi1>
  %e2 = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #scalar, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n, %zero, %x : tensor<3x4xi1>, tensor<f32>, tensor<3x4xf32>) outs(%e2 : tensor<3x4xf32>) {
  ^bb0(%c: i1, %z: f32, %v: f32, %out: f32):
    %s = arith.select %c, %z, %v : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
// CHECK: "sam.graph"
// CHECK-DAG: %[[M:.*]] = "sam.array"(%{{.*}}, %{{.*}}) : (!sam.ref, tensor<3x4xi1>)
// CHECK-DAG: %[[X:.*]] = "sam.array"(%{{.*}}, %{{.*}}) : (!sam.ref, tensor<3x4xf32>)
// CHECK-NOT: scalar_rsub
// CHECK: "sam.alu"(%[[M]], %[[X]]) {op = "mask_fill", scalar = 0.000000e+00 : f32}

// -----

// Tests that `x.masked_fill(m, -1.0)` fills where m holds: a mask_fill by `1 - m`.
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @fill
func.func @fill(%x: tensor<3x4xf32>, %m: tensor<3x4xi1>) -> tensor<3x4xf32> {
  %fill = arith.constant dense<-1.000000e+00> : tensor<f32>
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #scalar, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %fill, %x : tensor<3x4xi1>, tensor<f32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%c: i1, %f: f32, %v: f32, %out: f32):
    %s = arith.select %c, %f, %v : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
// CHECK: "sam.graph"
// CHECK: %[[M:.*]] = "sam.array"(%{{.*}}, %{{.*}}) : (!sam.ref, tensor<3x4xi1>)
// CHECK: %[[NOT:.*]] = "sam.alu"(%[[M]]) {op = "scalar_rsub", scalar = 1.000000e+00 : f32}
// CHECK: %[[X:.*]] = "sam.array"(%{{.*}}, %{{.*}}) : (!sam.ref, tensor<3x4xf32>)
// CHECK: "sam.alu"(%[[NOT]], %[[X]]) {op = "mask_fill", scalar = -1.000000e+00 : f32}

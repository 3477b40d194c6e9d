// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=full},fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s

// Tests that masked attention, SDDMM -> softmax -> SpMM, fuses into one graph. The IR is what
// torch-mlir imports for
//   scores = (q @ k.transpose(0, 1)).masked_fill(mask == 0, float("-inf"))
//   return torch.softmax(scores, dim=-1) @ v
// with a CSR mask (only the value names and the function name are changed). The transpose of k
// runs on the host; in the graph, every copy of the masked scores comes from an intersection
// with the mask's compressed level, so masked entries are never filled, exponentiated or
// multiplied with v. Softmax becomes a max reduction and a sum reduction of exp, both per row
// of the mask, and the rows (d0) are the outermost variable so a whole row is one scope.
#map = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#rowvec = affine_map<(d0, d1) -> (d0)>
#rowcol = affine_map<(d0, d1) -> (d0, 0)>
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
// CHECK-LABEL: func.func @masked_attention
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<4x3xf32>) {{.*}} permutation = [1, 0]
// CHECK: "sam.graph"(%arg0, %arg2, %arg3, %[[KT]])
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x3xf32>, %[[MASK:[a-z0-9]+]]: tensor<4x4xf32, #{{.*}}>,
// The mask's columns intersect the row of q @ k^T accumulated by a sparse accumulator ...
// CHECK: %[[QK:.*]]:2 = "sam.spacc"
// CHECK: %[[MCOL:.*]]:2 = "sam.scan"(%{{.*}}, %[[MASK]]) {level = 1 : i64}
// CHECK: %[[SCORE:.*]]:2 = "sam.union"(%{{.*}}, %[[QK]]#0, %[[QK]]#1)
// CHECK: %[[MASKED:.*]]:3 = "sam.intersect"(%[[MCOL]]#0, %[[SCORE]]#0, %[[MCOL]]#1, %[[SCORE]]#1)
// CHECK: %[[MVAL:.*]] = "sam.array"(%[[MASKED]]#1, %[[MASK]])
// CHECK: "sam.alu"(%[[MVAL]], %[[MASKED]]#2) {op = "mask_fill", scalar = 0xFF800000 : f32}
// ... and reduce to the row maximum and the row sum of exp(score - max).
// CHECK: "sam.reduce"(%{{.*}}) {kind = "max"}
// CHECK: %[[SHIFT:.*]] = "sam.alu"(%{{.*}}, %{{.*}}) {op = "sub"}
// CHECK: %[[EXP:.*]] = "sam.alu"(%[[SHIFT]]) {op = "exp"}
// CHECK: "sam.reduce"(%[[EXP]]) {kind = "sum"}
// The probabilities, exp / sum, are multiplied with v and summed over the mask's columns.
// CHECK: %[[P:.*]] = "sam.alu"(%{{.*}}, %{{.*}}) {op = "div"}
// CHECK: %[[PV:.*]] = "sam.alu"(%[[P]], %{{.*}}) {op = "mul"}
// CHECK: %[[OUT:.*]]:2 = "sam.spacc"(%{{.*}}, %[[PV]]) {order = 1 : i64}
// CHECK: "sam.value_write"(%[[OUT]]#1)
// CHECK: fuseflow.einsum = "out0[d0,d1] = sum_{d2}(mul(div(exp(sub(
// CHECK-SAME: mask_fill(T2[d0,d2], sum_{d3}(mul(T0[d0,d3], T3[d3,d2])), fill=-inf),
// CHECK-SAME: max_{d4}(mask_fill(T2[d0,d4], sum_{d5}(mul(T0[d0,d5], T3[d5,d4])), fill=-inf)))),
// CHECK-SAME: sum_{d6}(exp(sub(
// CHECK-SAME: T1[d2,d1]))"
// CHECK-SAME: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", {{.*}}, "d2", "d1"]
// CHECK-NOT: "sam.graph"
// CHECK-NOT: "fuse.kernel"
func.func @masked_attention(%q: tensor<4x3xf32>, %k: tensor<4x3xf32>, %v: tensor<4x3xf32>, %mask: tensor<4x4xf32, #CSR>) -> tensor<4x3xf32> {
  %c0_i64 = arith.constant 0 : i64
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = arith.constant dense<0xFF800000> : tensor<f32>
  %kt_init = tensor.empty() : tensor<3x4xf32>
  %kt = linalg.transpose ins(%k : tensor<4x3xf32>) outs(%kt_init : tensor<3x4xf32>) permutation = [1, 0]
  %e44 = tensor.empty() : tensor<4x4xf32>
  %z44 = linalg.fill ins(%zero : f32) outs(%e44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %qk = linalg.matmul ins(%q, %kt : tensor<4x3xf32>, tensor<3x4xf32>) outs(%z44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %ei1 = tensor.empty() : tensor<4x4xi1>
  %is0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%mask : tensor<4x4xf32, #CSR>) outs(%ei1 : tensor<4x4xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf oeq, %in, %zero : f32
    linalg.yield %c : i1
  } -> tensor<4x4xi1>
  %scores = linalg.generic {indexing_maps = [#map, #scalar, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%is0, %ninf_t, %qk : tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%in: i1, %in_f: f32, %in_s: f32, %out: f32):
    %s = arith.select %in, %in_f, %in_s : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %ei64 = tensor.empty() : tensor<4xi64>
  %z64 = linalg.fill ins(%c0_i64 : i64) outs(%ei64 : tensor<4xi64>) -> tensor<4xi64>
  %e4 = tensor.empty() : tensor<4xf32>
  %ninf4 = linalg.fill ins(%ninf : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %max:2 = linalg.generic {indexing_maps = [#map, #rowvec, #rowvec], iterator_types = ["parallel", "reduction"]} ins(%scores : tensor<4x4xf32>) outs(%ninf4, %z64 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %out: f32, %out_i: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %am = arith.select %gt, %i64, %out_i : i64
    linalg.yield %m, %am : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %max2 = tensor.expand_shape %max#0 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %shifted = linalg.generic {indexing_maps = [#map, #rowcol, #map], iterator_types = ["parallel", "parallel"]} ins(%scores, %max2 : tensor<4x4xf32>, tensor<4x1xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %d = arith.subf %in, %in_m : f32
    linalg.yield %d : f32
  } -> tensor<4x4xf32>
  %exp = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%shifted : tensor<4x4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %e41 = tensor.empty() : tensor<4x1xf32>
  %z41 = linalg.fill ins(%zero : f32) outs(%e41 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#map, #rowcol], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x4xf32>) outs(%z41 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<4x1xf32>
  %probs = linalg.generic {indexing_maps = [#map, #rowcol, #map], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x4xf32>, tensor<4x1xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %in_s: f32, %out: f32):
    %p = arith.divf %in, %in_s : f32
    linalg.yield %p : f32
  } -> tensor<4x4xf32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %out = linalg.matmul ins(%probs, %v : tensor<4x4xf32>, tensor<4x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %out : tensor<4x3xf32>
}

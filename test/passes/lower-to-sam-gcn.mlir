// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=groups},fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s --check-prefix=PARTIAL
// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=full},fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s --check-prefix=FULL

// Tests the two-layer GCN softmax(A @ (relu(A @ (X @ W1) + b1) @ W2) + b2) with a CSR adjacency
// A, in partial fusion (one graph per layer, from the ops' 'fuseflow.group' attributes) and in
// full fusion (one graph; the groups are ignored). The IR is what torch-mlir imports for the
// PyTorch model (value names and function name changed, group attributes added).
//
// Partial fusion: layer 1 writes H = relu(A @ (X @ W1) + b1) to memory and layer 2 reads it.
// PARTIAL-LABEL: func.func @gcn
// PARTIAL: %[[H:.*]] = "sam.graph"(%arg1, %arg2, %arg0, %arg3)
// PARTIAL-COUNT-2: "sam.spacc"
// PARTIAL: "sam.alu"(%{{.*}}) {op = "relu"}
// PARTIAL: fuseflow.einsum = "out0[d0,d1] = max(add(sum_{d2}(mul(T2[d0,d2], sum_{d3}(mul(T0[d2,d3], T1[d3,d1])))), T3[d1]), 0.0)"
// PARTIAL-SAME: name = "layer1"
// PARTIAL: "sam.graph"(%[[H]], %arg4, %arg0, %arg5)
// PARTIAL-NOT: op = "relu"
// PARTIAL: "sam.reduce"(%{{.*}}) {kind = "max"}
// PARTIAL: "sam.reduce"(%{{.*}}) {kind = "sum"}
// PARTIAL: fuseflow.einsum = "out0[d0,d1] = div(exp(sub(add(sum_{d2}(mul(T2[d0,d2], sum_{d3}(mul(T0[d2,d3], T1[d3,d1])))), T3[d1]),
// PARTIAL-SAME: name = "layer2"
// PARTIAL-NOT: "sam.graph"
//
// Full fusion: H is never written; the row H[d2] is recomputed inside the graph for every
// nonzero A[d0, d2] of the output row d0. In the einsum, layer 1 appears under layer 2's
// sum_{d2} with its own A row T2[d2,d4]. In the graph, A's dense row level is located twice:
// at each output row d0 (from the root), and at each column d2 of that row (from the root's
// reference repeated over d0: the rows layer 1 visits, per output row); both layers' products
// (four sparse accumulators) and the ReLU sit in the one graph, ahead of the softmax
// reductions.
// FULL-LABEL: func.func @gcn
// FULL: "sam.graph"(%arg1, %arg2, %arg0, %arg3, %arg4, %arg5)
// FULL-NEXT: ^bb0(%{{.*}}: tensor<6x5xf32>, %{{.*}}: tensor<5x4xf32>, %[[A:[a-z0-9]+]]: tensor<6x6xf32, #{{.*}}>,
// FULL: %[[ROOT:.*]] = "sam.root"
// FULL: %[[ROWS:.*]]:2 = "sam.scan"(%[[ROOT]]) {level = 0 : i64, size = 6 : i64}
// FULL-NEXT: %[[AROW:.*]]:2 = "sam.locate"(%[[ROWS]]#0, %[[ROOT]], %[[A]]) {level = 0 : i64}
// FULL: %[[PERROW:.*]] = "sam.repeat"(%[[ROOT]], %{{.*}})
// FULL: %[[ACOL:.*]]:2 = "sam.scan"(%[[AROW]]#0, %[[A]]) {level = 1 : i64}
// FULL-NEXT: "sam.locate"(%[[ACOL]]#0, %[[PERROW]], %[[A]]) {level = 0 : i64}
// FULL-COUNT-2: "sam.spacc"
// FULL: "sam.alu"(%{{.*}}) {op = "relu"}
// FULL-COUNT-2: "sam.spacc"
// FULL: "sam.reduce"(%{{.*}}) {kind = "max"}
// FULL: "sam.reduce"(%{{.*}}) {kind = "sum"}
// FULL: fuseflow.einsum = "out0[d0,d1] = div(exp(sub(add(sum_{d2}(mul(T2[d0,d2],
// FULL-SAME: sum_{d3}(mul(max(add(sum_{d4}(mul(T2[d2,d4], sum_{d5}(mul(T0[d4,d5], T1[d5,d3])))), T3[d3]), 0.0), T4[d3,d1])))), T5[d1]),
// FULL-SAME: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0",
// FULL-NOT: "sam.graph"
// FULL-NOT: "fuse.kernel"
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#sparse = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
func.func @gcn(%a: tensor<6x6xf32, #sparse>, %x: tensor<6x5xf32>, %w1: tensor<5x4xf32>, %b1: tensor<4xf32>, %w2: tensor<4x3xf32>, %b2: tensor<3xf32>) -> tensor<6x3xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0_i64 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<6x4xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %2 = linalg.matmul {fuseflow.group = "layer1"} ins(%x, %w1 : tensor<6x5xf32>, tensor<5x4xf32>) outs(%1 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %3 = linalg.matmul {fuseflow.group = "layer1"} ins(%a, %2 : tensor<6x6xf32, #sparse>, tensor<6x4xf32>) outs(%1 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"], fuseflow.group = "layer1"} ins(%3, %b1 : tensor<6x4xf32>, tensor<4xf32>) outs(%0 : tensor<6x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %22 = arith.addf %in, %in_1 : f32
    linalg.yield %22 : f32
  } -> tensor<6x4xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"], fuseflow.group = "layer1"} ins(%4 : tensor<6x4xf32>) outs(%0 : tensor<6x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %22 = arith.cmpf ugt, %in, %zero : f32
    %23 = arith.select %22, %in, %zero : f32
    linalg.yield %23 : f32
  } -> tensor<6x4xf32>
  %6 = tensor.empty() : tensor<6x3xf32>
  %7 = linalg.fill ins(%zero : f32) outs(%6 : tensor<6x3xf32>) -> tensor<6x3xf32>
  %8 = linalg.matmul {fuseflow.group = "layer2"} ins(%5, %w2 : tensor<6x4xf32>, tensor<4x3xf32>) outs(%7 : tensor<6x3xf32>) -> tensor<6x3xf32>
  %9 = linalg.matmul {fuseflow.group = "layer2"} ins(%a, %8 : tensor<6x6xf32, #sparse>, tensor<6x3xf32>) outs(%7 : tensor<6x3xf32>) -> tensor<6x3xf32>
  %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"], fuseflow.group = "layer2"} ins(%9, %b2 : tensor<6x3xf32>, tensor<3xf32>) outs(%6 : tensor<6x3xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %22 = arith.addf %in, %in_1 : f32
    linalg.yield %22 : f32
  } -> tensor<6x3xf32>
  %11 = tensor.empty() : tensor<6xi64>
  %12 = linalg.fill ins(%c0_i64 : i64) outs(%11 : tensor<6xi64>) -> tensor<6xi64>
  %13 = tensor.empty() : tensor<6xf32>
  %14 = linalg.fill ins(%ninf : f32) outs(%13 : tensor<6xf32>) -> tensor<6xf32>
  %15:2 = linalg.generic {indexing_maps = [#map, #map2, #map2], iterator_types = ["parallel", "reduction"], fuseflow.group = "layer2"} ins(%10 : tensor<6x3xf32>) outs(%14, %12 : tensor<6xf32>, tensor<6xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %22 = linalg.index 1 : index
    %23 = arith.index_cast %22 : index to i64
    %24 = arith.maximumf %in, %out : f32
    %25 = arith.cmpf ogt, %in, %out : f32
    %26 = arith.select %25, %23, %out_1 : i64
    linalg.yield %24, %26 : f32, i64
  } -> (tensor<6xf32>, tensor<6xi64>)
  %expanded = tensor.expand_shape %15#0 [[0, 1]] output_shape [6, 1] : tensor<6xf32> into tensor<6x1xf32>
  %16 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"], fuseflow.group = "layer2"} ins(%10, %expanded : tensor<6x3xf32>, tensor<6x1xf32>) outs(%6 : tensor<6x3xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %22 = arith.subf %in, %in_1 : f32
    linalg.yield %22 : f32
  } -> tensor<6x3xf32>
  %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"], fuseflow.group = "layer2"} ins(%16 : tensor<6x3xf32>) outs(%6 : tensor<6x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %22 = math.exp %in : f32
    linalg.yield %22 : f32
  } -> tensor<6x3xf32>
  %18 = tensor.empty() : tensor<6x1xf32>
  %19 = linalg.fill ins(%zero : f32) outs(%18 : tensor<6x1xf32>) -> tensor<6x1xf32>
  %20 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["parallel", "reduction"], fuseflow.group = "layer2"} ins(%17 : tensor<6x3xf32>) outs(%19 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %22 = arith.addf %in, %out : f32
    linalg.yield %22 : f32
  } -> tensor<6x1xf32>
  %21 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"], fuseflow.group = "layer2"} ins(%17, %20 : tensor<6x3xf32>, tensor<6x1xf32>) outs(%6 : tensor<6x3xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %22 = arith.divf %in, %in_1 : f32
    linalg.yield %22 : f32
  } -> tensor<6x3xf32>
  return %21 : tensor<6x3xf32>
}

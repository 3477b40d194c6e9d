// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=full},fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s

// Tests that a layernorm fuses into one graph. The IR is what torch-mlir imports for
// torch.nn.LayerNorm(8) on a 4x8 input (only the value names and the function name are
// changed): the variance is computed in f64 (extf/truncf, seen through by the lowering) from its
// own mean, the output uses a second mean computed in f32. In the graph each row (d0) sums x
// once for the means, sums (x - mean)^2 for the variance, and scales x - mean by
// rsqrt(variance / 8 + eps) before the affine weight and bias.
#map = affine_map<(d0, d1) -> (d0, d1)>
#rowcol = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layernorm
// CHECK: "sam.graph"(%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>):
// The means: one sum of x over a row. The IR computes it twice (f64 for the variance, f32 for
// the output); both copies are the same reduction after copy unification, so one stream
// serves the variance and the output.
// CHECK: %[[XV:.*]] = "sam.array"(%{{.*}}, %[[X]])
// CHECK: %[[SUM:.*]] = "sam.reduce"(%[[XV]]) {kind = "sum"}
// CHECK-NOT: "sam.reduce"(%{{.*}}) {kind = "sum"}
// The variance: the sum over the row of (x - sum / 8)^2.
// CHECK: %[[SUMR:.*]] = "sam.repeat"(%[[SUM]], %{{.*}})
// CHECK: %[[MEAN:.*]] = "sam.alu"(%[[SUMR]]) {op = "scalar_div", scalar = 8.000000e+00 : f32}
// CHECK: %[[DEV:.*]] = "sam.alu"(%{{.*}}, %[[MEAN]]) {op = "sub"}
// CHECK: %[[SQ:.*]] = "sam.alu"(%[[DEV]], %[[DEV]]) {op = "mul"}
// CHECK: %[[VAR:.*]] = "sam.reduce"(%[[SQ]]) {kind = "sum"}
// CHECK-NOT: "sam.reduce"
// The normalization, repeated over the row's columns: rsqrt(var / 8 + eps), then weight and bias.
// CHECK: %[[VARR:.*]] = "sam.repeat"(%[[VAR]], %{{.*}})
// CHECK: %[[VARD:.*]] = "sam.alu"(%[[VARR]]) {op = "scalar_div", scalar = 8.000000e+00 : f32}
// CHECK: %[[VARE:.*]] = "sam.alu"(%[[VARD]]) {op = "scalar_add", scalar = 9.99999974E-6 : f32}
// CHECK: %[[RSTD:.*]] = "sam.alu"(%[[VARE]]) {op = "rsqrt"}
// CHECK: %[[NORM:.*]] = "sam.alu"(%{{.*}}, %[[RSTD]]) {op = "mul"}
// CHECK: %[[WV:.*]] = "sam.array"(%{{.*}}, %[[W]])
// CHECK: %[[SCALED:.*]] = "sam.alu"(%[[NORM]], %[[WV]]) {op = "mul"}
// CHECK: %[[BV:.*]] = "sam.array"(%{{.*}}, %[[B]])
// CHECK: %[[OUT:.*]] = "sam.alu"(%[[SCALED]], %[[BV]]) {op = "add"}
// CHECK: "sam.value_write"(%[[OUT]])
// The keepdim means' size-1 column is broadcast, not a loop of its own:
// CHECK: fuseflow.einsum = "out0[d0,d1] = add(mul(mul(sub(T0[d0,d1], div(sum_{d2}(T0[d0,d2]), 8.0)),
// The three copies of the row sum share their loop variable d2 (fuseflow's copy unification):
// CHECK-SAME: rsqrt(add(div(sum_{d3}(mul(sub(T0[d0,d3], div(sum_{d2}(T0[d0,d2]), 8.0)), sub(T0[d0,d3], div(sum_{d2}(T0[d0,d2]), 8.0)))), 8.0), 1e-05))),
// CHECK-SAME: T1[d1]), T2[d1])"
// CHECK-SAME: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d3", "d1"]
// CHECK-NOT: "sam.graph"
// CHECK-NOT: "fuse.kernel"
func.func @layernorm(%x: tensor<4x8xf32>, %weight: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero64 = arith.constant 0.000000e+00 : f64
  %zero = arith.constant 0.000000e+00 : f32
  %eps = arith.constant 1.000000e-05 : f64
  %n64 = arith.constant 8.000000e+00 : f64
  %n = arith.constant 8.000000e+00 : f32
  %e48_64 = tensor.empty() : tensor<4x8xf64>
  %x64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e48_64 : tensor<4x8xf64>) {
  ^bb0(%in: f32, %out: f64):
    %r = arith.extf %in : f32 to f64
    linalg.yield %r : f64
  } -> tensor<4x8xf64>
  %e41_64 = tensor.empty() : tensor<4x1xf64>
  %z41_64 = linalg.fill ins(%zero64 : f64) outs(%e41_64 : tensor<4x1xf64>) -> tensor<4x1xf64>
  %sum64 = linalg.generic {indexing_maps = [#map, #rowcol], iterator_types = ["parallel", "reduction"]} ins(%x64 : tensor<4x8xf64>) outs(%z41_64 : tensor<4x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %r = arith.addf %in, %out : f64
    linalg.yield %r : f64
  } -> tensor<4x1xf64>
  %mean64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%sum64 : tensor<4x1xf64>) outs(%e41_64 : tensor<4x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %r = arith.divf %in, %n64 : f64
    linalg.yield %r : f64
  } -> tensor<4x1xf64>
  %dev64 = linalg.generic {indexing_maps = [#map, #rowcol, #map], iterator_types = ["parallel", "parallel"]} ins(%x64, %mean64 : tensor<4x8xf64>, tensor<4x1xf64>) outs(%e48_64 : tensor<4x8xf64>) {
  ^bb0(%in: f64, %in_m: f64, %out: f64):
    %r = arith.subf %in, %in_m : f64
    linalg.yield %r : f64
  } -> tensor<4x8xf64>
  %sq64 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%dev64, %dev64 : tensor<4x8xf64>, tensor<4x8xf64>) outs(%e48_64 : tensor<4x8xf64>) {
  ^bb0(%in: f64, %in_2: f64, %out: f64):
    %r = arith.mulf %in, %in_2 : f64
    linalg.yield %r : f64
  } -> tensor<4x8xf64>
  %sqsum64 = linalg.generic {indexing_maps = [#map, #rowcol], iterator_types = ["parallel", "reduction"]} ins(%sq64 : tensor<4x8xf64>) outs(%z41_64 : tensor<4x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %r = arith.addf %in, %out : f64
    linalg.yield %r : f64
  } -> tensor<4x1xf64>
  %var64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%sqsum64 : tensor<4x1xf64>) outs(%e41_64 : tensor<4x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %r = arith.divf %in, %n64 : f64
    linalg.yield %r : f64
  } -> tensor<4x1xf64>
  %e41 = tensor.empty() : tensor<4x1xf32>
  %var = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%var64 : tensor<4x1xf64>) outs(%e41 : tensor<4x1xf32>) {
  ^bb0(%in: f64, %out: f32):
    %r = arith.truncf %in : f64 to f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %z41 = linalg.fill ins(%zero : f32) outs(%e41 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#map, #rowcol], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%z41 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %mean = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<4x1xf32>) outs(%e41 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %n : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %var_eps = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%var : tensor<4x1xf32>) outs(%e41 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %r = arith.addf %in, %eps32 : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %rstd = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%var_eps : tensor<4x1xf32>) outs(%e41 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.rsqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %dev = linalg.generic {indexing_maps = [#map, #rowcol, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %r = arith.subf %in, %in_m : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %norm = linalg.generic {indexing_maps = [#map, #rowcol, #map], iterator_types = ["parallel", "parallel"]} ins(%dev, %rstd : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_r: f32, %out: f32):
    %r = arith.mulf %in, %in_r : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#map, #col, #map], iterator_types = ["parallel", "parallel"]} ins(%norm, %weight : tensor<4x8xf32>, tensor<8xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_w: f32, %out: f32):
    %r = arith.mulf %in, %in_w : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %out = linalg.generic {indexing_maps = [#map, #col, #map], iterator_types = ["parallel", "parallel"]} ins(%scaled, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_b: f32, %out: f32):
    %r = arith.addf %in, %in_b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}

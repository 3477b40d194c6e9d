// RUN: fuseflow-opt %s --fuseflow-normalize --fuseflow-partition --fuseflow-schedule | filecheck %s --check-prefix=DEFAULT
// RUN: fuseflow-opt %s --fuseflow-normalize --fuseflow-partition --fuseflow-schedule --fuseflow-schedule='kernel=k0 order=d2,d0,d1 parallel=d0:4,d1:2 block=4,4' | filecheck %s --check-prefix=KERNEL
// RUN: fuseflow-opt %s --fuseflow-normalize --fuseflow-partition --fuseflow-schedule='parallel=d0:2' | filecheck %s --check-prefix=ALL
// RUN: fuseflow-opt %s --fuseflow-normalize --fuseflow-partition --fuseflow-schedule='kernel=k0 order=d2,d0,d1' | fuseflow-opt --fuseflow-schedule | filecheck %s --check-prefix=KEEP

// Tests the schedule of a dense A times CSR B followed by a ReLU, one kernel each (k0, k1).
// Without options every kernel gets the default rules: the best legal order, no parallelization
// or blocking, the formats of its results (DEFAULT). Options with kernel=k0 replace k0's fields
// only, k1 keeps its defaults (KERNEL). Options without a kernel apply to every kernel (ALL). A
// kernel that has a schedule keeps it: through a round trip in fuseflow-opt, k0's non-default
// order survives a second fuseflow-schedule and k1, scheduled by the first run, is unchanged
// (KEEP).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// DEFAULT-LABEL: func.func @spmm_relu
// KERNEL-LABEL: func.func @spmm_relu
// ALL-LABEL: func.func @spmm_relu
// KEEP-LABEL: func.func @spmm_relu
func.func @spmm_relu(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%A, %B : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
// DEFAULT: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = []}, name = "k0"
// DEFAULT: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = []}, name = "k1"
// KERNEL: fuseflow.schedule = {block = array<i64: 4, 4>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = {{\[\[}}"d0", 4], ["d1", 2]]}, name = "k0"
// KERNEL: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = []}, name = "k1"
// ALL: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = {{\[\[}}"d0", 2]]}, name = "k0"
// ALL: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = {{\[\[}}"d0", 2]]}, name = "k1"
// KEEP: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d2", "d0", "d1"], parallel = []}, name = "k0"
// KEEP: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = []}, name = "k1"

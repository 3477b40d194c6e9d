// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-kernels-to-dataflow)' | filecheck %s

// Tests that the dataflow phase takes scheduled fuse.kernel regions (here written by hand) to
// verified sam.graphs: the schedule is verified, read by the lowering and copied onto the graph
// (parallel factors included: the dataflow passes that apply them read them there).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @spmm
func.func @spmm(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
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
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = [["d0", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}
// CHECK: %[[G:.*]] = "sam.graph"(%arg0, %arg1)
// CHECK: "sam.spacc"({{.*}}) {order = 1 : i64}
// CHECK: fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = {{\[\[}}"d0", 2]]}
// CHECK-NOT: "fuse.kernel"
// CHECK: return %[[G]]

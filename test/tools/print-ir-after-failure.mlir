// RUN: not fuseflow-opt %s --mlir-print-ir-after-failure --fuseflow-partition=mode=full --sam-verify 2>&1 | filecheck %s

// Tests that --mlir-print-ir-after-failure dumps the IR once, after the pass that failed
// (sam-verify rejects the kernel left unlowered), and not after the passes that succeeded.
// CHECK-NOT: IR Dump After FuseFlowPartition
// CHECK: IR Dump After SamVerifyPass Failed
// CHECK: "fuse.kernel"
// CHECK: error: 'fuse.kernel' op was not lowered to a 'sam.graph'
#id = affine_map<(d0) -> (d0)>
func.func @add(%A: tensor<4xf32>, %B: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%A, %B : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// RUN: not fuseflow-opt %s --fuseflow-partition=mode=full --sam-verify --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | filecheck %s --check-prefix=ERR
// RUN: filecheck %s --check-prefix=REPRO < %t.repro.mlir
// RUN: not fuseflow-opt --run-reproducer %t.repro.mlir 2>&1 | filecheck %s --check-prefix=REPLAY

// Tests that a failing pipeline writes a reproducer (the IR before the pipeline, with its
// locations, and the pipeline with its options), says how to replay it, and that replaying
// it fails the same way at the same source location.
// REPRO: // Replay with: fuseflow-opt --run-reproducer {{.*}}.repro.mlir
// REPRO: "linalg.generic"
// REPRO: loc("{{.*}}reproducer.mlir":
// REPRO: mlir_reproducer: {
// REPRO-NEXT: pipeline: "builtin.module(fuseflow-partition{mode=full},sam-verify)",
// REPRO: verify_each: true
#id = affine_map<(d0) -> (d0)>
func.func @add(%A: tensor<4xf32>, %B: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // ERR: reproducer.mlir:[[# @LINE + 2]]:8: error: 'fuse.kernel' op was not lowered to a 'sam.graph'
  // REPLAY: reproducer.mlir:[[# @LINE + 1]]:8: error: 'fuse.kernel' op was not lowered to a 'sam.graph'
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%A, %B : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
// ERR: fuseflow-opt: reproducer written to '{{.*}}.repro.mlir'; replay with: fuseflow-opt --run-reproducer {{.*}}.repro.mlir

// RUN: fuseflow-opt %s --fuseflow-partition=mode=full | filecheck %s --check-prefix=FULL
// RUN: fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-partition{mode=full})' | filecheck %s --check-prefix=FULL
// RUN: fuseflow-opt %s --fuseflow-partition | filecheck %s --check-prefix=UNFUSED
// RUN: fuseflow-opt %s -canonicalize --fuseflow-to-kernels | filecheck %s --check-prefix=MIXED

// Tests that every FuseFlow pass and named pipeline is a flag taking mlir-opt's
// --pass='options' form, equivalent to --pass-pipeline, and that upstream passes are flags
// too (single or double dash), running in command-line order in one pipeline.
#id = affine_map<(d0) -> (d0)>
// FULL-LABEL: func.func @two_ops
// FULL: "fuse.kernel"
// FULL-NOT: "fuse.kernel"
// FULL: return
// UNFUSED-LABEL: func.func @two_ops
// UNFUSED: "fuse.kernel"
// UNFUSED: "fuse.kernel"
// MIXED-LABEL: func.func @two_ops
// MIXED-NOT: arith.subf
// MIXED: "fuse.kernel"
func.func @two_ops(%A: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %folded = arith.subf %one, %zero : f32
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%A : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %folded : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %t : tensor<4xf32>
}

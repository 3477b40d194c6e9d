// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-partition,fuseflow-schedule,fuseflow-lower-to-sam)'

// Tests that an op the lowering does not know is reported at its location, naming it.
#id = affine_map<(d0) -> (d0)>
func.func @unsupported_body(%A: tensor<4xf32>, %B: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%A, %B : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    // expected-error @below {{unsupported op 'arith.remf' in linalg.generic body}}
    %s = arith.remf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// RUN: fuseflow-opt %s --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-partition{mode=groups})'

// Tests that a grouping whose kernels would depend on each other cyclically is rejected with
// the cycle named: group "a" feeds "b", which feeds "a" again.
#id = affine_map<(d0) -> (d0)>
func.func @cyclic(%A: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"], "fuseflow.group" = "a"}
      ins(%A : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"], "fuseflow.group" = "b"}
      ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  // expected-error @below {{partition makes the kernel graph cyclic}}
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"], "fuseflow.group" = "a"}
      ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %u : tensor<4xf32>
}

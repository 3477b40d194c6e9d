// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-partition{mode=groups})' | filecheck %s

// Tests that ops sharing a 'fuseflow.group' become one kernel named after the group, that an
// untagged op gets a kernel of its own, and that kernels are placed in dependence order.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @groups
func.func @groups(%A: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%A : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"], "fuseflow.group" = "pair"}
      ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"], "fuseflow.group" = "pair"}
      ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %u : tensor<4xf32>
}
// CHECK: %[[K0:.*]] = "fuse.kernel"(%{{.*}}) ({
// CHECK: arith.addf
// CHECK: name = "k0"
// CHECK: %[[K1:.*]] = "fuse.kernel"(%[[K0]]) ({
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: name = "pair"
// CHECK: return %[[K1]]

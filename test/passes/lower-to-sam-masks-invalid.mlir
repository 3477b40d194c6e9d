// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-partition{mode=full},fuseflow-schedule,fuseflow-lower-to-sam)'

// Tests that integer arithmetic that is not on masks is refused, saying why.
#id = affine_map<(d0) -> (d0)>
func.func @int_add(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4xi32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    // expected-error @below {{integer arithmetic ('arith.addi') is not supported: FuseFlow computes in float32, and boolean masks are the only non-float values it reads; convert integer tensors with .float()}}
    %s = arith.addi %x, %y : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-lower-to-sam,sam-parallelize)'

// Tests that parallelizing a reduced variable is an error at the reduction: its lanes would
// hold partial sums, which a join does not add.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mv_a = affine_map<(d0, d1) -> (d0, d1)>
#mv_x = affine_map<(d0, d1) -> (d1)>
#mv_y = affine_map<(d0, d1) -> (d0)>
func.func @reduced(%A: tensor<3x4xf32, #CSR>, %x: tensor<4xf32>) -> tensor<3xf32> {
  %k = "fuse.kernel"(%A, %x) ({
  ^bb0(%a: tensor<3x4xf32, #CSR>, %v: tensor<4xf32>):
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3xf32>
    %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
    // expected-error @below {{parallel variable d1 is reduced here: lanes would hold partial results, which a join does not add}}
    %r = linalg.generic {indexing_maps = [#mv_a, #mv_x, #mv_y], iterator_types = ["parallel", "reduction"]}
        ins(%a, %v : tensor<3x4xf32, #CSR>, tensor<4xf32>) outs(%f : tensor<3xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>
    "gpu.yield"(%r) : (tensor<3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = [["d1", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x4xf32, #CSR>, tensor<4xf32>) -> tensor<3xf32>
  return %k : tensor<3xf32>
}

// -----

// Tests that a variable the graph does not iterate is an error at the graph.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mv_a = affine_map<(d0, d1) -> (d0, d1)>
#mv_x = affine_map<(d0, d1) -> (d1)>
#mv_y = affine_map<(d0, d1) -> (d0)>
func.func @unknown(%A: tensor<3x4xf32, #CSR>, %x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @below {{parallel variable d5 is not an index variable of the graph (d0, d1)}}
  %k = "fuse.kernel"(%A, %x) ({
  ^bb0(%a: tensor<3x4xf32, #CSR>, %v: tensor<4xf32>):
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3xf32>
    %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
    %r = linalg.generic {indexing_maps = [#mv_a, #mv_x, #mv_y], iterator_types = ["parallel", "reduction"]}
        ins(%a, %v : tensor<3x4xf32, #CSR>, tensor<4xf32>) outs(%f : tensor<3xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>
    "gpu.yield"(%r) : (tensor<3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = [["d5", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x4xf32, #CSR>, tensor<4xf32>) -> tensor<3xf32>
  return %k : tensor<3xf32>
}

// -----

// Tests that a factor below 1 is an error at the graph.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mv_a = affine_map<(d0, d1) -> (d0, d1)>
#mv_x = affine_map<(d0, d1) -> (d1)>
#mv_y = affine_map<(d0, d1) -> (d0)>
func.func @factor(%A: tensor<3x4xf32, #CSR>, %x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @below {{parallel factor 0 of d0 must be >= 1}}
  %k = "fuse.kernel"(%A, %x) ({
  ^bb0(%a: tensor<3x4xf32, #CSR>, %v: tensor<4xf32>):
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3xf32>
    %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
    %r = linalg.generic {indexing_maps = [#mv_a, #mv_x, #mv_y], iterator_types = ["parallel", "reduction"]}
        ins(%a, %v : tensor<3x4xf32, #CSR>, tensor<4xf32>) outs(%f : tensor<3xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>
    "gpu.yield"(%r) : (tensor<3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = [["d0", 0]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x4xf32, #CSR>, tensor<4xf32>) -> tensor<3xf32>
  return %k : tensor<3xf32>
}

// -----

// Tests that a graph asking for lanes whose scanners do not name their index variable (a
// graph written by hand, not lowered with its schedule) is an error at the scanner.
func.func @unnamed(%X: tensor<4xf32>) -> tensor<4xf32> {
  %g = "sam.graph"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.scan' op has no 'fuseflow.index' attribute naming its index variable}}
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%ri, %x) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0"], parallel = [["d0", 2]]}, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that a level whose only work is loading and writing it (a copy) leaves nothing to
// run in lanes: an error at the graph.
func.func @nothing(%X: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{parallel variable d0: nothing at or below its level can run in lanes}}
  %g = "sam.graph"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {fuseflow.index = "d0", level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%ri, %x) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0"], parallel = [["d0", 2]]}, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

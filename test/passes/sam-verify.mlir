// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --sam-verify | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --no-fuseflow-verify-on-parse --sam-verify | filecheck %s

// Tests that a module of verified sam.graph ops passes unchanged.
// CHECK-LABEL: func.func @graph
// CHECK: %[[G:.*]] = "sam.graph"
// CHECK: "sam.value_write"
// CHECK: return %[[G]]
func.func @graph(%X: tensor<4xf32>) -> tensor<4xf32> {
  %g = "sam.graph"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%ri, %x) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that a kernel left after lowering is reported.
func.func @kernel_left(%X: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op was not lowered to a 'sam.graph'}}
  %k = "fuse.kernel"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    gpu.yield %x : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a linalg op left after lowering is reported once, not once per nested op.
#id = affine_map<(d0) -> (d0)>
func.func @linalg_left(%X: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{'linalg.generic' op is left after lowering to dataflow; every linalg op must become a 'sam.graph'}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%X : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that the pass runs the sam dialect verifiers (a graph missing its value writer).
func.func @graph_without_values(%X: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'sam.graph' op result #0 needs exactly one 'sam.value_write', has 0}}
  %g = "sam.graph"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics

// Tests that a kernel needs its operand segment sizes (IRDL: container slots).
func.func @segments_missing(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'operandSegmentSizes' attribute is expected but not provided}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield %a : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that the segment sizes have one entry per slot (IRDL: 64 input slots).
func.func @segments_length(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'operandSegmentSizes' attribute for specifying operand segments must have 64 elements, but got 1}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a kernel has exactly one region (IRDL).
func.func @no_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op unexpected number of regions: expected 1 but got 0}}
  %k = "fuse.kernel"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a slot holds values of one type (IRDL: one constraint variable per slot).
func.func @slot_mixes_types(%x: tensor<4xf32>, %y: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @below {{expected 'tensor<4xf32>' but got 'tensor<3xf32>'}}
  %k = "fuse.kernel"(%x, %y) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<3xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that the result slots are filled in order, a run of equal types each.
func.func @slot_order(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op 'resultSegmentSizes' must hold the lengths of the runs of equal consecutive result types, [1] then zeros; got [0, 1] then zeros}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a run of equal input types fills one slot: the segment sizes are a function of
// the types (one spelling per kernel).
func.func @runs_are_maximal(%x: tensor<4xf32>, %y: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op 'operandSegmentSizes' must hold the lengths of the runs of equal consecutive input types, [2, 1] then zeros; got [1, 1, 1] then zeros}}
  %k = "fuse.kernel"(%x, %x, %y) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<3xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that the body has one argument per kernel input.
func.func @argument_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op body has 2 arguments but the op has 1 inputs}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that body arguments have the types of the kernel inputs.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @argument_type(%x: tensor<4x4xf32, #CSR>) -> tensor<4x4xf32> {
  // expected-error @below {{'fuse.kernel' op body argument #0 has type tensor<4x4xf32> but input #0 has type tensor<4x4xf32, #sparse_tensor.encoding}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    gpu.yield %a : tensor<4x4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32, #CSR>) -> tensor<4x4xf32>
  return %k : tensor<4x4xf32>
}

// -----

// Tests that a kernel body ends in the shared terminator, gpu.yield.
func.func @terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op body must end in 'gpu.yield', found 'tosa.yield'}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    tosa.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a kernel yields one value per result.
func.func @yield_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'fuse.kernel' op body yields 2 values but the op has 1 results}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// Tests that a kernel yields values of its result types.
func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @below {{'fuse.kernel' op yielded value #0 has type tensor<4xf32> but result #0 has type tensor<4xf64>}}
  %k = "fuse.kernel"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf64>
  return %k : tensor<4xf64>
}

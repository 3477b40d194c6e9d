// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics

// Tests that a graph needs its operand segment sizes (IRDL: container slots).
func.func @graph_segments() {
  // expected-error @below {{'operandSegmentSizes' attribute is expected but not provided}}
  "sam.graph"() ({
    gpu.yield
  }) : () -> ()
  return
}

// -----

// Tests that a graph's slots are filled in order, a run of equal types each.
func.func @graph_slot_order(%x: tensor<4xf32>) {
  // expected-error @below {{'sam.graph' op 'operandSegmentSizes' must hold the lengths of the runs of equal consecutive input types, [1] then zeros; got [0, 1] then zeros}}
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a graph's block arguments must have its operands' types.
func.func @graph_arguments(%x: tensor<4xf32>) {
  // expected-error @below {{'sam.graph' op body argument #0 has type tensor<8xf32> but input #0 has type tensor<4xf32>}}
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<8xf32>):
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a graph's terminator yields nothing: its results come from the writers.
func.func @graph_yield(%x: tensor<4xf32>) {
  // expected-error @below {{'sam.graph' op 'gpu.yield' of a graph takes no operands}}
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    gpu.yield %a : tensor<4xf32>
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that every result level needs exactly one level writer and the values exactly one
// value writer.
func.func @graph_writers(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @below {{'sam.graph' op result #0 needs exactly one 'sam.value_write', has 2}}
  // expected-error @below {{'sam.graph' op level 0 of result #0 needs exactly one 'sam.level_write', has 2}}
  // expected-error @below {{'sam.graph' op level 1 of result #0 needs exactly one 'sam.level_write', has 0}}
  %g = "sam.graph"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%ri, %a) : (!sam.ref, tensor<4x4xf32>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

// -----

// Tests that a graph result must be a ranked tensor.
func.func @graph_result_type() -> f32 {
  // expected-error @below {{'sam.graph' op result #0 must be a ranked tensor, got f32}}
  %g = "sam.graph"() ({
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> f32
  return %g : f32
}

// -----

// Tests that graphs do not nest.
func.func @graph_nested() {
  "sam.graph"() ({
    // expected-error @below {{'sam.graph' op must not be nested in another 'sam.graph'}}
    "sam.graph"() ({
      gpu.yield
    }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a root emits references (IRDL: result type).
func.func @root_type() {
  "sam.graph"() ({
    // expected-error @below {{expected base type 'sam.ref' but got '!sam.crd'}}
    %r = "sam.root"() : () -> !sam.crd
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that sam primitives live directly in a graph.
func.func @root_outside_graph() {
  // expected-error @below {{'sam.root' op must be directly inside a 'sam.graph'}}
  %r = "sam.root"() : () -> !sam.ref
  return
}

// -----

// Tests that a scanner needs its level (IRDL: attribute).
func.func @scan_level_missing(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.scan' op attribute "level" is expected but not provided}}
    %i, %ri = "sam.scan"(%root, %a) : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a scanner's level must be a storage level of its tensor (two for CSR).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @scan_level_range(%x: tensor<4x4xf32, #CSR>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4x4xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.scan' op level 2 is out of range for a tensor with 2 levels}}
    %i, %ri = "sam.scan"(%root, %a) {level = 2 : i64} : (!sam.ref, tensor<4x4xf32, #CSR>) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32, #CSR>) -> ()
  return
}

// -----

// Tests that the levels of a blocked (BSR) tensor are its encoding's four levels, not its rank.
#BSR = #sparse_tensor.encoding<{ map = (i, j) -> (i floordiv 2 : dense, j floordiv 2 : compressed, i mod 2 : dense, j mod 2 : dense) }>
func.func @scan_level_blocked(%x: tensor<4x4xf32, #BSR>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4x4xf32, #BSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 3 : i64} : (!sam.ref, tensor<4x4xf32, #BSR>) -> (!sam.crd, !sam.ref)
    // expected-error @below {{'sam.scan' op level 4 is out of range for a tensor with 4 levels}}
    %j, %rj = "sam.scan"(%root, %a) {level = 4 : i64} : (!sam.ref, tensor<4x4xf32, #BSR>) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32, #BSR>) -> ()
  return
}

// -----

// Tests that a scanner without a tensor needs the size of its dense range.
func.func @scan_range_size() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.scan' op without a tensor operand needs an integer 'size' attribute}}
    %i, %ri = "sam.scan"(%root) {level = 0 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a locate's level must be a level of its tensor.
func.func @locate_level_range(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    // expected-error @below {{'sam.locate' op level -1 is out of range for a tensor with 1 levels}}
    %r, %c = "sam.locate"(%i, %root, %a) {level = -1 : i64} : (!sam.crd, !sam.ref, tensor<4xf32>) -> (!sam.ref, !sam.crd)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a repeat-signal generator reads coordinates (IRDL: operand type).
func.func @repsiggen_operand() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{expected base type 'sam.crd' but got '!sam.ref'}}
    %s = "sam.repsiggen"(%root) : (!sam.ref) -> !sam.repsig
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a repeater repeats references or values, not coordinates (IRDL: any_of).
func.func @repeat_coordinates() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    %s = "sam.repsiggen"(%i) : (!sam.crd) -> !sam.repsig
    // expected-error @below {{'!sam.crd' does not satisfy the constraint}}
    %r = "sam.repeat"(%i, %s) : (!sam.crd, !sam.repsig) -> !sam.crd
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that an intersecter needs its segment sizes (IRDL: three variadic operand groups).
func.func @intersect_segments() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{'operandSegmentSizes' attribute is expected but not provided}}
    %c, %r1, %r2 = "sam.intersect"(%i, %i, %ri, %ri) {ref_groups = array<i64: 1, 1>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that an intersecter joins at least two coordinate streams and that its reference
// groups cover its reference operands.
func.func @intersect_groups() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{'sam.intersect' op needs at least 2 coordinate inputs, got 1}}
    // expected-error @below {{'sam.intersect' op 'ref_groups' has 2 entries but there are 1 coordinate inputs}}
    // expected-error @below {{'sam.intersect' op 'ref_groups' [1, 2] must be non-negative and sum to the 1 reference inputs}}
    %c, %r1 = "sam.intersect"(%i, %ri) {ref_groups = array<i64: 1, 2>, operandSegmentSizes = array<i32: 1, 1, 0>, resultSegmentSizes = array<i32: 1, 1, 0>} : (!sam.crd, !sam.ref) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a unioner emits one reference per reference operand.
func.func @union_results() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{'sam.union' op has 1 stream results but 2 reference and value inputs}}
    %c, %r1 = "sam.union"(%i, %i, %ri, %ri) {ref_groups = array<i64: 1, 1>, operandSegmentSizes = array<i32: 2, 2, 0>, resultSegmentSizes = array<i32: 1, 1, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that an array load emits values (IRDL: result type).
func.func @array_result(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{expected base type 'sam.val' but got '!sam.ref'}}
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4xf32>) -> !sam.ref
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that the ALU knows only its listed operations (IRDL: attribute value).
func.func @alu_unknown_op(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'"pow"' does not satisfy the constraint}}
    %p = "sam.alu"(%v, %v) {op = "pow"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that binary ALU ops take two values, unary and scalar ops one, and that scalar ops
// need their float constant.
func.func @alu_arity(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.alu' op 'mul' takes 2 operands, got 1}}
    %m = "sam.alu"(%v) {op = "mul"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.alu' op 'exp' takes 1 operand, got 2}}
    %e = "sam.alu"(%v, %v) {op = "exp"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.alu' op attribute 'scalar' must be a float, got 1 : i64}}
    %s = "sam.alu"(%v) {op = "scalar_add", scalar = 1 : i64} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a reducer sums or maxes, nothing else (IRDL: attribute value).
func.func @reduce_kind(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'"min"' does not satisfy the constraint}}
    %r = "sam.reduce"(%v) {kind = "min"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a sparse accumulator's order counts its coordinate operands and results.
func.func @spacc_order(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%ri, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.spacc' op 'order' 2 must equal the number of coordinate inputs (1) and outputs (1)}}
    %c, %w = "sam.spacc"(%i, %v) {order = 2 : i64} : (!sam.crd, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.val<f32, array<i64>>)
    // expected-error @below {{'sam.spacc' op 'order' must be at least 1, got 0}}
    %u = "sam.spacc"(%v) {order = 0 : i64} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a coordinate dropper takes an inner and an outer stream (IRDL: operand count).
func.func @crddrop_operands() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{op expects exactly 2 operands, but got 1}}
    %a, %b = "sam.crddrop"(%i) : (!sam.crd) -> (!sam.crd, !sam.crd)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a coordinate hold reads coordinates (IRDL: operand type).
func.func @crdhold_operands() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{expected '!sam.crd' but got '!sam.ref'}}
    %a, %b = "sam.crdhold"(%i, %ri) : (!sam.crd, !sam.ref) -> (!sam.crd, !sam.crd)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that level writers name an existing result and one of its levels.
func.func @level_write_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%ri, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    // expected-error @below {{'sam.level_write' op result 1 is out of range for a graph with 1 results}}
    "sam.level_write"(%i) {result = 1 : i64, level = 0 : i64} : (!sam.crd) -> ()
    // expected-error @below {{'sam.level_write' op level 1 is out of range for result #0 with 1 levels}}
    "sam.level_write"(%i) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that a value writer needs the result it writes (IRDL: attribute).
func.func @value_write_result(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.value_write' op attribute "result" is expected but not provided}}
    "sam.value_write"(%v) : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a value writer's result must exist.
func.func @value_write_range(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.value_write' op result 0 is out of range for a graph with 0 results}}
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that fork and join have at least two lanes.
func.func @lanes() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.fork' op needs at least 2 lanes, got 1}}
    %r = "sam.fork"(%root) : (!sam.ref) -> !sam.ref
    %c, %rc = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{'sam.join' op needs at least 2 lanes, got 1}}
    %j = "sam.join"(%c, %r) : (!sam.crd, !sam.ref) -> !sam.ref
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a fork's lanes carry its input's stream type (IRDL: one constraint variable).
func.func @fork_lane_type() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{expected '!sam.ref' but got '!sam.crd'}}
    %a, %b = "sam.fork"(%root) : (!sam.ref) -> (!sam.ref, !sam.crd)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that a stream cannot come from outside the graph that uses it.
func.func @stream_from_outside(%c: !sam.crd) {
  "sam.graph"() ({
    // expected-error @below {{'sam.repsiggen' op stream operand #0 is not defined in this 'sam.graph'}}
    %s = "sam.repsiggen"(%c) : (!sam.crd) -> !sam.repsig
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that only sam ops consume streams.
func.func @stream_to_non_sam_op(%c: !sam.crd) -> !sam.crd {
  // expected-error @below {{'func.return' op uses stream operand #0; only sam ops consume streams}}
  return %c : !sam.crd
}

// -----

// Tests that a value stream's tile shape is a dense array (IRDL: type parameter).
// expected-error @below {{expected base attribute 'builtin.dense_array' but got 'builtin.integer'}}
func.func @val_tile(%v: !sam.val<f32, 3>) {
  return
}

// -----

// Tests that a primitive carries only the attributes the primitive table declares (dialect-
// prefixed discardable attributes aside).
func.func @undeclared_attribute() {
  "sam.graph"() ({
    // expected-error @below {{'sam.root' op has undeclared attribute 'lanes'; declared: none}}
    %root = "sam.root"() {lanes = 2 : i64, fuseflow.note = "kept"} : () -> !sam.ref
    // expected-error @below {{'sam.scan' op has undeclared attribute 'sizes'; declared: level, size}}
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64, sizes = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

// -----

// Tests that optional attributes, which IRDL cannot declare, have their declared types.
func.func @optional_attribute_types(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.scan' op attribute 'size' must be an integer, got 4.000000e+00 : f32}}
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4.0 : f32} : (!sam.ref) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.union' op attribute 'val_groups' must be a dense i64 array, got 1 : i64}}
    %u:3 = "sam.union"(%j, %j, %rj, %v) {ref_groups = array<i64: 1, 0>, val_groups = 1 : i64, operandSegmentSizes = array<i32: 2, 1, 1>, resultSegmentSizes = array<i32: 1, 1, 1>} : (!sam.crd, !sam.crd, !sam.ref, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.ref, !sam.val<f32, array<i64>>)
    %l:2 = "sam.fork"(%v) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
    // expected-error @below {{'sam.join' op attribute 'depth' must be an integer, got "deep"}}
    %m = "sam.join"(%j, %l#0, %l#1) {depth = "deep"} : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.join' op 'depth' must be non-negative, got -1}}
    %n = "sam.join"(%j, %l#0, %l#1) {depth = -1 : i64} : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that a scan of a tensor takes its size from the tensor and that only the scalar ALU
// ops take a scalar.
func.func @attributes_that_do_not_apply(%x: tensor<4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    // expected-error @below {{'sam.scan' op with a tensor operand takes its size from the tensor; remove 'size'}}
    %j, %rj = "sam.scan"(%root, %a) {level = 0 : i64, size = 8 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // expected-error @below {{'sam.alu' op 'exp' takes no 'scalar' attribute}}
    %e = "sam.alu"(%v) {op = "exp", scalar = 2.0 : f32} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

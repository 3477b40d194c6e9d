// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics

// Tests that ALUs and reducers on tiles of different shapes need a 'tile' attribute naming
// their axes, that the shapes must agree with it, and that only a 'mul' sums axes.
!t = !sam.val<f32, array<i64: 2, 2>>
!v = !sam.val<f32, array<i64: 2>>
func.func @tile_shapes(%x: tensor<4x4xf32>) {
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %t = "sam.array"(%root, %a) : (!sam.ref, tensor<4x4xf32>) -> !t
    %v = "sam.array"(%root, %a) : (!sam.ref, tensor<4x4xf32>) -> !v
    %w = "sam.array"(%root, %a) : (!sam.ref, tensor<4x4xf32>) -> !sam.val<f32, array<i64: 3>>
    // expected-error @below {{'sam.alu' op operands and result must have one type without a 'tile' attribute naming their axes}}
    %s = "sam.alu"(%t, %v) {op = "sub"} : (!t, !v) -> !t
    // expected-error @below {{'sam.alu' op 'tile' ab,b->ab: axis 'b' has sizes 2 and 3}}
    %b = "sam.alu"(%t, %w) {op = "sub", tile = "ab,b->ab"} : (!t, !sam.val<f32, array<i64: 3>>) -> !t
    // expected-error @below {{'sam.alu' op 'add' cannot sum tile axes 'b'}}
    %p = "sam.alu"(%t, %t) {op = "add", tile = "ab,bc->ac"} : (!t, !t) -> !t
    // expected-error @below {{'sam.reduce' op 'tile' ab->ab: 'ab' names 2 axes of a tile of shape [2]}}
    %r = "sam.reduce"(%t) {kind = "sum", tile = "ab->ab"} : (!t) -> !v
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32>) -> ()
  return
}

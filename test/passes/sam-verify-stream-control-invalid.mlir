// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --sam-verify

// Tests that an ALU combining a matrix's values with its row maxima, not repeated over the rows
// (an extra stop level on one side), is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @alu_depths(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %m = "sam.reduce"(%v) {kind = "max"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
  // expected-error @below {{'sam.alu' op stream control: lhs and rhs have different control structure; lhs: 2 stop levels (level 0 of input #0, level 1 of input #0); rhs: 1 stop level (level 0 of input #0)}}
    %d = "sam.alu"(%v, %m) {op = "sub"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%d) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that an ALU combining the values of two CSR matrices scanned separately (same depth,
// different coordinates: no intersecter) is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @alu_unjoined(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %k, %rk = "sam.locate"(%i, %root, %b) {level = 0 : i64} : (!sam.crd, !sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.ref, !sam.crd)
    %ja, %rja = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %jb, %rjb = "sam.scan"(%k, %b) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %va = "sam.array"(%rja, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %vb = "sam.array"(%rjb, %b) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
  // expected-error @below {{'sam.alu' op stream control: lhs and rhs have different control structure; lhs: 2 stop levels (level 0 of input #0, level 1 of input #0); rhs: 2 stop levels (level 0 of input #0, level 1 of input #1)}}
    %p = "sam.alu"(%va, %vb) {op = "mul"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%ja) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%p) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a repeater whose input is not one level above its signal is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @repeat_depth(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %sig = "sam.repsiggen"(%j) : (!sam.crd) -> !sam.repsig
  // expected-error @below {{'sam.repeat' op stream control: the repeated input must carry the levels of the repeat signal but the innermost; the repeated input: 2 stop levels (level 0 of input #0, level 1 of input #0); the repeat signal: 2 stop levels (level 0 of input #0, level 1 of input #0)}}
    %r = "sam.repeat"(%v, %sig) : (!sam.val<f32, array<i64>>, !sam.repsig) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%r) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a locator given parent references of its own coordinates' depth is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @locate_parent(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<4x5xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
  // expected-error @below {{'sam.locate' op stream control: the parent references must carry the levels of the coordinates but the innermost; the parent references: 2 stop levels (level 0 of input #0, level 1 of input #0); the coordinates: 2 stop levels (level 0 of input #0, level 1 of input #0)}}
    %l, %lj = "sam.locate"(%j, %rj, %b) {level = 1 : i64} : (!sam.crd, !sam.ref, tensor<4x5xf32>) -> (!sam.ref, !sam.crd)
    %v = "sam.array"(%l, %b) : (!sam.ref, tensor<4x5xf32>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that an intersecter of coordinates under different outer levels is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#DCSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : compressed, d1 : compressed) }>
func.func @intersect_outer(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32, #DCSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<4x5xf32, #DCSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %bi, %rbi = "sam.scan"(%root, %b) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %ja, %rja = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %jb, %rjb = "sam.scan"(%rbi, %b) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
  // expected-error @below {{'sam.intersect' op stream control: coordinate inputs #0 and #1 must share their outer levels; #0: 2 stop levels (level 0 of input #0, level 1 of input #0); #1: 2 stop levels (level 0 of input #1, level 1 of input #1)}}
    %j:3 = "sam.intersect"(%ja, %jb, %rja, %rjb) {operandSegmentSizes = array<i32: 2, 2, 0>, ref_groups = array<i64: 1, 1>, resultSegmentSizes = array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref)
    %va = "sam.array"(%j#1, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j#0) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%va) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32, #DCSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a reducer of fibers whose enclosing level can be empty (DCSR rows) needs the outer
// coordinates.
#DCSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : compressed, d1 : compressed) }>
func.func @reduce_without_outer(%A: tensor<4x5xf32, #DCSR>) -> tensor<4xf32> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #DCSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #DCSR>) -> !sam.val<f32, array<i64>>
  // expected-error @below {{'sam.reduce' op stream control: reduces 2 stop levels (level 0 of input #0, level 1 of input #0) without the outer coordinates, but the fibers of level 0 of input #0 can be empty (an empty outer fiber would be reduced as an empty fiber)}}
    %s = "sam.reduce"(%v) {kind = "sum"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%s) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #DCSR>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that a reducer given outer coordinates of another structure is reported.
#DCSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : compressed, d1 : compressed) }>
func.func @reduce_outer(%A: tensor<4x5xf32, #DCSR>) -> tensor<4xf32> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #DCSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #DCSR>) -> !sam.val<f32, array<i64>>
  // expected-error @below {{'sam.reduce' op stream control: the outer coordinates must carry the levels of the input but the innermost; the outer coordinates: 2 stop levels (level 0 of input #0, level 1 of input #0); the input: 2 stop levels (level 0 of input #0, level 1 of input #0)}}
    %s = "sam.reduce"(%v, %j) {kind = "sum"} : (!sam.val<f32, array<i64>>, !sam.crd) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%s) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #DCSR>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that a level writer given coordinates of the wrong depth is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @level_write_depth(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
  // expected-error @below {{'sam.level_write' op stream control: level 0 of result #0 needs coordinates of 1 stop levels; the coordinates: 2 stop levels (level 0 of input #0, level 1 of input #0)}}
    "sam.level_write"(%j) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that values of fewer levels than the result has are reported at the value writer.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @value_write_depth(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %s = "sam.reduce"(%v) {kind = "sum"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
  // expected-error @below {{'sam.value_write' op stream control: result #0 has 2 storage levels; its values: 1 stop level (level 0 of input #0)}}
    "sam.value_write"(%s) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a join whose depth does not match what the lanes grew into is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @join_depth(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %lanes:2 = "sam.fork"(%v) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
  // expected-error @below {{'sam.join' op stream control: lane #0 grew 0 stop levels after the fork, but the join's depth is 1}}
    %x = "sam.join"(%j, %lanes#0, %lanes#1) : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%x) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a join of the same lane of two forks is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @join_lanes(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %f:2 = "sam.fork"(%v) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
    %g:2 = "sam.fork"(%v) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
  // expected-error @below {{'sam.join' op stream control: lane #1 is lane 0 of a fork of 2 lanes}}
    %x = "sam.join"(%j, %f#0, %g#0) {depth = 0 : i64} : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%x) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a sparse accumulator whose coordinates do not iterate with its values is reported.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @spacc_coordinates(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %k, %rk = "sam.scan"(%rj) {level = 0 : i64, size = 3 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    %sig = "sam.repsiggen"(%k) : (!sam.crd) -> !sam.repsig
    %w = "sam.repeat"(%v, %sig) : (!sam.val<f32, array<i64>>, !sam.repsig) -> !sam.val<f32, array<i64>>
  // expected-error @below {{'sam.spacc' op stream control: coordinate input #0 and the values' first 3 levels have different control structure; coordinate input #0: 2 stop levels (level 0 of input #0, level 1 of input #0); the values' first 3 levels: 3 stop levels (level 0 of input #0, level 1 of input #0, dense range of 3)}}
    %acc:2 = "sam.spacc"(%j, %w) {order = 1 : i64} : (!sam.crd, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.val<f32, array<i64>>)
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%acc#0) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%acc#1) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

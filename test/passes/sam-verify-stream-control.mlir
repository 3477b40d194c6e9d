// RUN: fuseflow-opt %s --split-input-file --sam-verify | filecheck %s

// Tests that row sums of a CSR matrix reduce without the outer coordinates (the dense rows are
// never empty) and pass.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @row_sums
// CHECK: "sam.graph"
func.func @row_sums(%A: tensor<4x5xf32, #CSR>) -> tensor<4xf32> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %s = "sam.reduce"(%v) {kind = "sum"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%s) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that row sums of a DCSR matrix, whose rows can be empty, pass with the outer
// coordinates.
#DCSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : compressed, d1 : compressed) }>
// CHECK-LABEL: func.func @dcsr_row_sums
// CHECK: "sam.graph"
func.func @dcsr_row_sums(%A: tensor<4x5xf32, #DCSR>) -> tensor<4xf32> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #DCSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #DCSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #DCSR>) -> !sam.val<f32, array<i64>>
    %s = "sam.reduce"(%v, %i) {kind = "sum"} : (!sam.val<f32, array<i64>>, !sam.crd) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%s) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #DCSR>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Tests that a row maximum repeated over the row's coordinates combines with the row's values
// (x - max(x), as in softmax).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @broadcast_row_max
// CHECK: "sam.graph"
func.func @broadcast_row_max(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %m = "sam.reduce"(%v) {kind = "max"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %sig = "sam.repsiggen"(%j) : (!sam.crd) -> !sam.repsig
    %mj = "sam.repeat"(%m, %sig) : (!sam.val<f32, array<i64>>, !sam.repsig) -> !sam.val<f32, array<i64>>
    %d = "sam.alu"(%v, %mj) {op = "sub"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%d) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that the element-wise product of two CSR matrices combines the values their
// intersection gives and writes through a coordinate dropper.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @intersect_product
// CHECK: "sam.graph"
func.func @intersect_product(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %k, %rk = "sam.locate"(%i, %root, %b) {level = 0 : i64} : (!sam.crd, !sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.ref, !sam.crd)
    %ja, %rja = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %jb, %rjb = "sam.scan"(%k, %b) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j:3 = "sam.intersect"(%ja, %jb, %rja, %rjb) {operandSegmentSizes = array<i32: 2, 2, 0>, ref_groups = array<i64: 1, 1>, resultSegmentSizes = array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref)
    %va = "sam.array"(%j#1, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %vb = "sam.array"(%j#2, %b) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %p = "sam.alu"(%va, %vb) {op = "mul"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %dj, %di = "sam.crddrop"(%j#0, %i) : (!sam.crd, !sam.crd) -> (!sam.crd, !sam.crd)
    "sam.level_write"(%di) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%dj) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%p) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that values forked over two lanes, scaled in each and joined pass.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @fork_join
// CHECK: "sam.graph"
func.func @fork_join(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %lanes:2 = "sam.fork"(%v) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
    %x0 = "sam.alu"(%lanes#0) {op = "exp"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %x1 = "sam.alu"(%lanes#1) {op = "exp"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %x = "sam.join"(%j, %x0, %x1) {depth = 0 : i64} : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%x) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that a sparse accumulator of order 1 reduces the level above its coordinates (here the
// columns of a CSR matrix, each value repeated over a dense range) and its results write a CSR
// result.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @spacc_over_rows
// CHECK: "sam.graph"
func.func @spacc_over_rows(%A: tensor<4x5xf32, #CSR>) -> tensor<4x3xf32, #CSR> {
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %k, %rk = "sam.scan"(%rj) {level = 0 : i64, size = 3 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    %sig = "sam.repsiggen"(%k) : (!sam.crd) -> !sam.repsig
    %w = "sam.repeat"(%v, %sig) : (!sam.val<f32, array<i64>>, !sam.repsig) -> !sam.val<f32, array<i64>>
    %acc:2 = "sam.spacc"(%k, %w) {order = 1 : i64} : (!sam.crd, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.val<f32, array<i64>>)
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%acc#0) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%acc#1) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x3xf32, #CSR>
  return %g : tensor<4x3xf32, #CSR>
}

// -----

// Tests that the element-wise sum of two CSR matrices combines the values their union gives
// (absent ones read as zero).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @union_sum
// CHECK: "sam.graph"
func.func @union_sum(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  %g = "sam.graph"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %k, %rk = "sam.locate"(%i, %root, %b) {level = 0 : i64} : (!sam.crd, !sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.ref, !sam.crd)
    %ja, %rja = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %jb, %rjb = "sam.scan"(%k, %b) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j:3 = "sam.union"(%ja, %jb, %rja, %rjb) {operandSegmentSizes = array<i32: 2, 2, 0>, ref_groups = array<i64: 1, 1>, resultSegmentSizes = array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref)
    %va = "sam.array"(%j#1, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %vb = "sam.array"(%j#2, %b) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    %p = "sam.alu"(%va, %vb) {op = "add"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j#0) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%p) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  return %g : tensor<4x5xf32, #CSR>
}

// RUN: fuseflow-opt %s --split-input-file | fuseflow-opt --split-input-file | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --mlir-print-op-generic | fuseflow-opt --split-input-file | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// Tests that the stream types and the scanning primitives (root, scan over a tensor level and
// over a dense range, locate, array) round-trip.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @scanners
// GENERIC-LABEL: sym_name = "scanners"
func.func @scanners(%A: tensor<4x5xf32, #CSR>, %B: tensor<4x5xf32>) {
  // CHECK: "sam.graph"(%{{.*}}, %{{.*}}) ({
  // CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<4x5xf32, #{{.*}}>, %[[B:[^:]+]]: tensor<4x5xf32>):
  // GENERIC: "sam.graph"
  "sam.graph"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<4x5xf32>):
    // CHECK-NEXT: %[[ROOT:.*]] = "sam.root"() : () -> !sam.ref
    %root = "sam.root"() : () -> !sam.ref
    // CHECK-NEXT: %[[I:.*]]:2 = "sam.scan"(%[[ROOT]], %[[A]]) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #{{.*}}>) -> (!sam.crd, !sam.ref)
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    // CHECK-NEXT: %[[J:.*]]:2 = "sam.scan"(%[[I]]#1, %[[A]]) {level = 1 : i64}
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    // CHECK-NEXT: %[[K:.*]]:2 = "sam.scan"(%[[ROOT]]) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    %k, %rk = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // CHECK-NEXT: %[[L:.*]]:2 = "sam.locate"(%[[J]]#0, %[[K]]#1, %[[B]]) {level = 1 : i64} : (!sam.crd, !sam.ref, tensor<4x5xf32>) -> (!sam.ref, !sam.crd)
    %rb, %jb = "sam.locate"(%j, %rk, %b) {level = 1 : i64} : (!sam.crd, !sam.ref, tensor<4x5xf32>) -> (!sam.ref, !sam.crd)
    // CHECK-NEXT: "sam.array"(%[[J]]#1, %[[A]]) : (!sam.ref, tensor<4x5xf32, #{{.*}}>) -> !sam.val<f32, array<i64>>
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    // CHECK-NEXT: gpu.yield
    // GENERIC: "gpu.yield"() : () -> ()
    gpu.yield
  // CHECK-NEXT: }) {operandSegmentSizes = array<i32: 1, 1, 0, {{.*}}>, resultSegmentSizes = array<i32: 0, {{.*}}>} : (tensor<4x5xf32, #{{.*}}>, tensor<4x5xf32>) -> ()
  }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<4x5xf32>) -> ()
  return
}

// -----

// Tests that the level and value writers fill the results of a graph, whose values replace
// the graph op's uses.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
// CHECK-LABEL: func.func @writers
// GENERIC-LABEL: sym_name = "writers"
func.func @writers(%A: tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR> {
  // CHECK: %[[G:.*]] = "sam.graph"
  %g = "sam.graph"(%A) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %a) {level = 0 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %a) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #CSR>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %a) : (!sam.ref, tensor<4x5xf32, #CSR>) -> !sam.val<f32, array<i64>>
    // CHECK: "sam.level_write"(%[[I:.*]]#0) {level = 0 : i64, result = 0 : i64} : (!sam.crd) -> ()
    // CHECK-NEXT: "sam.level_write"(%[[J:.*]]#0) {level = 1 : i64, result = 0 : i64} : (!sam.crd) -> ()
    // CHECK-NEXT: "sam.value_write"(%[[V:.*]]) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    // GENERIC: "sam.value_write"
    "sam.level_write"(%i) {result = 0 : i64, level = 0 : i64} : (!sam.crd) -> ()
    "sam.level_write"(%j) {result = 0 : i64, level = 1 : i64} : (!sam.crd) -> ()
    "sam.value_write"(%v) {result = 0 : i64} : (!sam.val<f32, array<i64>>) -> ()
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>) -> tensor<4x5xf32, #CSR>
  // CHECK: return %[[G]]
  return %g : tensor<4x5xf32, #CSR>
}

// -----

// Tests that the repeat-signal generator and the repeater, over references and values,
// round-trip with the repsig stream type.
// CHECK-LABEL: func.func @repeaters
// GENERIC-LABEL: sym_name = "repeaters"
func.func @repeaters(%X: tensor<4xf32>) {
  "sam.graph"(%X) ({
  ^bb0(%x: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // CHECK: %[[SIG:.*]] = "sam.repsiggen"(%{{.*}}#0) : (!sam.crd) -> !sam.repsig
    %sig = "sam.repsiggen"(%i) : (!sam.crd) -> !sam.repsig
    // CHECK-NEXT: %[[REF:.*]] = "sam.repeat"(%{{.*}}, %[[SIG]]) : (!sam.ref, !sam.repsig) -> !sam.ref
    %rep = "sam.repeat"(%root, %sig) : (!sam.ref, !sam.repsig) -> !sam.ref
    // CHECK-NEXT: %[[VAL:.*]] = "sam.array"(%[[REF]], %{{.*}})
    %v = "sam.array"(%rep, %x) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // CHECK-NEXT: "sam.repeat"(%[[VAL]], %[[SIG]]) : (!sam.val<f32, array<i64>>, !sam.repsig) -> !sam.val<f32, array<i64>>
    // GENERIC: "sam.repeat"
    %vr = "sam.repeat"(%v, %sig) : (!sam.val<f32, array<i64>>, !sam.repsig) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that n-ary intersecters and unioners round-trip with their reference groups and
// operand segment sizes.
// CHECK-LABEL: func.func @joiners
// GENERIC-LABEL: sym_name = "joiners"
func.func @joiners(%X: tensor<4xf32>, %Y: tensor<4xf32>) {
  "sam.graph"(%X, %Y) ({
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%root, %y) {level = 0 : i64} : (!sam.ref, tensor<4xf32>) -> (!sam.crd, !sam.ref)
    // CHECK: %[[AND:.*]]:3 = "sam.intersect"(%[[I:.*]]#0, %[[J:.*]]#0, %[[I]]#1, %[[J]]#1) {operandSegmentSizes = array<i32: 2, 2, 0>, ref_groups = array<i64: 1, 1>, resultSegmentSizes = array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref)
    %c, %r1, %r2 = "sam.intersect"(%i, %j, %ri, %rj) {ref_groups = array<i64: 1, 1>, operandSegmentSizes = array<i32: 2, 2, 0>, resultSegmentSizes = array<i32: 1, 2, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref)
    // CHECK-NEXT: %[[OR:.*]]:4 = "sam.union"(%[[I]]#0, %[[J]]#0, %[[I]]#1, %[[I]]#1, %[[J]]#1) {operandSegmentSizes = array<i32: 2, 3, 0>, ref_groups = array<i64: 2, 1>, resultSegmentSizes = array<i32: 1, 3, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref, !sam.ref)
    // GENERIC: "sam.union"
    %u, %s1, %s2, %s3 = "sam.union"(%i, %j, %ri, %ri, %rj) {ref_groups = array<i64: 2, 1>, operandSegmentSizes = array<i32: 2, 3, 0>, resultSegmentSizes = array<i32: 1, 3, 0>} : (!sam.crd, !sam.crd, !sam.ref, !sam.ref, !sam.ref) -> (!sam.crd, !sam.ref, !sam.ref, !sam.ref)
    // A fused intermediate's value stream travels with its coordinates (val_groups).
    // CHECK: "sam.union"(%[[I]]#0, %[[J]]#0, %[[I]]#1, %[[V:.*]]) {operandSegmentSizes = array<i32: 2, 1, 1>, ref_groups = array<i64: 1, 0>, resultSegmentSizes = array<i32: 1, 1, 1>, val_groups = array<i64: 0, 1>} : (!sam.crd, !sam.crd, !sam.ref, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.ref, !sam.val<f32, array<i64>>)
    %v = "sam.array"(%rj, %y) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    %w, %wr, %wv = "sam.union"(%i, %j, %ri, %v) {ref_groups = array<i64: 1, 0>, val_groups = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1, 1>, resultSegmentSizes = array<i32: 1, 1, 1>} : (!sam.crd, !sam.crd, !sam.ref, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.ref, !sam.val<f32, array<i64>>)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// Tests that binary, unary and scalar ALU ops round-trip, on scalar values and on 2x2 tiles.
// CHECK-LABEL: func.func @alus
// GENERIC-LABEL: sym_name = "alus"
func.func @alus(%X: tensor<4xf32>, %T: tensor<8x8xf32>) {
  "sam.graph"(%X, %T) ({
  ^bb0(%x: tensor<4xf32>, %t: tensor<8x8xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %a = "sam.array"(%root, %x) : (!sam.ref, tensor<4xf32>) -> !sam.val<f32, array<i64>>
    // CHECK: %[[SUM:.*]] = "sam.alu"(%[[A:.*]], %[[A]]) {op = "add"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %sum = "sam.alu"(%a, %a) {op = "add"} : (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // CHECK-NEXT: %[[EXP:.*]] = "sam.alu"(%[[SUM]]) {op = "exp"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %exp = "sam.alu"(%sum) {op = "exp"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // CHECK-NEXT: "sam.alu"(%[[EXP]]) {op = "scalar_mul", scalar = 1.250000e-01 : f32}
    %scaled = "sam.alu"(%exp) {op = "scalar_mul", scalar = 0.125 : f32} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // CHECK: %[[TILE:.*]] = "sam.array"(%{{.*}}, %{{.*}}) : (!sam.ref, tensor<8x8xf32>) -> !sam.val<f32, array<i64: 2, 2>>
    %tile = "sam.array"(%root, %t) : (!sam.ref, tensor<8x8xf32>) -> !sam.val<f32, array<i64: 2, 2>>
    // CHECK-NEXT: "sam.alu"(%[[TILE]], %[[TILE]]) {op = "mul"} : (!sam.val<f32, array<i64: 2, 2>>, !sam.val<f32, array<i64: 2, 2>>) -> !sam.val<f32, array<i64: 2, 2>>
    // GENERIC: "sam.alu"
    %prod = "sam.alu"(%tile, %tile) {op = "mul"} : (!sam.val<f32, array<i64: 2, 2>>, !sam.val<f32, array<i64: 2, 2>>) -> !sam.val<f32, array<i64: 2, 2>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<8x8xf32>) -> ()
  return
}

// -----

// Tests that reducers (sum and max) and a sparse accumulator of order 1 round-trip.
// CHECK-LABEL: func.func @reducers
// GENERIC-LABEL: sym_name = "reducers"
func.func @reducers(%X: tensor<4x4xf32>) {
  "sam.graph"(%X) ({
  ^bb0(%x: tensor<4x4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<4x4xf32>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %x) {level = 1 : i64} : (!sam.ref, tensor<4x4xf32>) -> (!sam.crd, !sam.ref)
    %v = "sam.array"(%rj, %x) : (!sam.ref, tensor<4x4xf32>) -> !sam.val<f32, array<i64>>
    // CHECK: %[[V:.*]] = "sam.array"
    // CHECK-NEXT: "sam.reduce"(%[[V]]) {kind = "sum"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    %sum = "sam.reduce"(%v) {kind = "sum"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // CHECK-NEXT: "sam.reduce"(%[[V]]) {kind = "max"}
    %max = "sam.reduce"(%v) {kind = "max"} : (!sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // A reducer with the coordinates of the level above (an outer fiber may be empty).
    // CHECK-NEXT: "sam.reduce"(%[[V]], %{{.*}}#0) {kind = "sum"} : (!sam.val<f32, array<i64>>, !sam.crd) -> !sam.val<f32, array<i64>>
    %osum = "sam.reduce"(%v, %i) {kind = "sum"} : (!sam.val<f32, array<i64>>, !sam.crd) -> !sam.val<f32, array<i64>>
    // CHECK-NEXT: %[[ACC:.*]]:2 = "sam.spacc"(%[[J:.*]]#0, %[[V]]) {order = 1 : i64} : (!sam.crd, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.val<f32, array<i64>>)
    // GENERIC: "sam.spacc"
    %jc, %acc = "sam.spacc"(%j, %v) {order = 1 : i64} : (!sam.crd, !sam.val<f32, array<i64>>) -> (!sam.crd, !sam.val<f32, array<i64>>)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32>) -> ()
  return
}

// -----

// Tests that the coordinate dropper and the coordinate hold round-trip.
// CHECK-LABEL: func.func @coordinates
// GENERIC-LABEL: sym_name = "coordinates"
func.func @coordinates(%X: tensor<4x4xf32>) {
  "sam.graph"(%X) ({
  ^bb0(%x: tensor<4x4xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<4x4xf32>) -> (!sam.crd, !sam.ref)
    %j, %rj = "sam.scan"(%ri, %x) {level = 1 : i64} : (!sam.ref, tensor<4x4xf32>) -> (!sam.crd, !sam.ref)
    // CHECK: %[[DROP:.*]]:2 = "sam.crddrop"(%[[J:.*]]#0, %[[I:.*]]#0) : (!sam.crd, !sam.crd) -> (!sam.crd, !sam.crd)
    %in, %out = "sam.crddrop"(%j, %i) : (!sam.crd, !sam.crd) -> (!sam.crd, !sam.crd)
    // CHECK-NEXT: "sam.crdhold"(%[[DROP]]#0, %[[DROP]]#1) : (!sam.crd, !sam.crd) -> (!sam.crd, !sam.crd)
    // GENERIC: "sam.crdhold"
    %hin, %hout = "sam.crdhold"(%in, %out) : (!sam.crd, !sam.crd) -> (!sam.crd, !sam.crd)
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4xf32>) -> ()
  return
}

// -----

// Tests that fork and join round-trip over coordinate, reference and value streams.
// CHECK-LABEL: func.func @parallel
// GENERIC-LABEL: sym_name = "parallel"
func.func @parallel(%X: tensor<8xf32>) {
  "sam.graph"(%X) ({
  ^bb0(%x: tensor<8xf32>):
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root, %x) {level = 0 : i64} : (!sam.ref, tensor<8xf32>) -> (!sam.crd, !sam.ref)
    // CHECK: %[[CRDS:.*]]:2 = "sam.fork"(%[[I:.*]]#0) : (!sam.crd) -> (!sam.crd, !sam.crd)
    %c0, %c1 = "sam.fork"(%i) : (!sam.crd) -> (!sam.crd, !sam.crd)
    // CHECK-NEXT: %[[REFS:.*]]:4 = "sam.fork"(%[[I]]#1) : (!sam.ref) -> (!sam.ref, !sam.ref, !sam.ref, !sam.ref)
    %r0, %r1, %r2, %r3 = "sam.fork"(%ri) : (!sam.ref) -> (!sam.ref, !sam.ref, !sam.ref, !sam.ref)
    // CHECK-NEXT: "sam.join"(%[[I]]#0, %[[CRDS]]#0, %[[CRDS]]#1) {depth = 0 : i64} : (!sam.crd, !sam.crd, !sam.crd) -> !sam.crd
    %c = "sam.join"(%i, %c0, %c1) {depth = 0 : i64} : (!sam.crd, !sam.crd, !sam.crd) -> !sam.crd
    // CHECK-NEXT: "sam.join"(%[[I]]#0, %[[REFS]]#0, %[[REFS]]#1, %[[REFS]]#2, %[[REFS]]#3) {depth = 0 : i64} : (!sam.crd, !sam.ref, !sam.ref, !sam.ref, !sam.ref) -> !sam.ref
    %r = "sam.join"(%i, %r0, %r1, %r2, %r3) {depth = 0 : i64} : (!sam.crd, !sam.ref, !sam.ref, !sam.ref, !sam.ref) -> !sam.ref
    %v = "sam.array"(%r, %x) : (!sam.ref, tensor<8xf32>) -> !sam.val<f32, array<i64>>
    // CHECK: %[[VALS:.*]]:2 = "sam.fork"(%{{.*}}) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
    %v0, %v1 = "sam.fork"(%v) : (!sam.val<f32, array<i64>>) -> (!sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>)
    // CHECK-NEXT: "sam.join"(%[[I]]#0, %[[VALS]]#0, %[[VALS]]#1) {depth = 0 : i64} : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    // GENERIC: "sam.join"
    %vj = "sam.join"(%i, %v0, %v1) {depth = 0 : i64} : (!sam.crd, !sam.val<f32, array<i64>>, !sam.val<f32, array<i64>>) -> !sam.val<f32, array<i64>>
    gpu.yield
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8xf32>) -> ()
  return
}

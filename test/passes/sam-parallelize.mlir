// RUN: fuseflow-opt %s --split-input-file --fuseflow-kernels-to-dataflow | filecheck %s

// Tests that SpMV over two lanes of its rows forks the rows' references, scans, multiplies and
// reduces each lane's rows, and joins the row sums (depth 0) in the order of the row
// coordinates, which the level writer reads unforked.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mv_a = affine_map<(d0, d1) -> (d0, d1)>
#mv_x = affine_map<(d0, d1) -> (d1)>
#mv_y = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @spmv
func.func @spmv(%A: tensor<3x4xf32, #CSR>, %x: tensor<4xf32>) -> tensor<3xf32> {
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
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = [["d0", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x4xf32, #CSR>, tensor<4xf32>) -> tensor<3xf32>
  return %k : tensor<3xf32>
}
// CHECK: %[[ROOT:.*]] = "sam.root"()
// CHECK-NEXT: %[[I:.*]]:2 = "sam.scan"(%[[ROOT]], %{{.*}}) {fuseflow.index = "d0", level = 0 : i64}
// CHECK-NEXT: %[[IC:.*]]:2 = "sam.fork"(%[[I]]#0) : (!sam.crd) -> (!sam.crd, !sam.crd)
// CHECK: "sam.repeat"(%[[ROOT]], %{{.*}})
// CHECK: %[[IR:.*]]:2 = "sam.fork"(%[[I]]#1) : (!sam.ref) -> (!sam.ref, !sam.ref)
// CHECK-NEXT: "sam.scan"(%[[IR]]#0, %{{.*}}) {fuseflow.index = "d1", level = 1 : i64}
// CHECK-NEXT: "sam.scan"(%[[IR]]#1, %{{.*}}) {fuseflow.index = "d1", level = 1 : i64}
// CHECK: %[[Y0:.*]] = "sam.reduce"(%{{[^,]*}}) {kind = "sum"}
// CHECK-NEXT: %[[Y1:.*]] = "sam.reduce"(%{{[^,]*}}) {kind = "sum"}
// CHECK-NEXT: "sam.level_write"(%[[I]]#0) {level = 0 : i64, result = 0 : i64}
// CHECK-NEXT: %[[Y:.*]] = "sam.join"(%[[I]]#0, %[[Y0]], %[[Y1]]) {depth = 0 : i64}
// CHECK-NEXT: "sam.value_write"(%[[Y]]) {result = 0 : i64}
// CHECK: parallel = {{\[}}["d0", 2]]

// -----

// Tests that a CSR times dense product, parallel over its rows in 3 lanes, joins the output's
// column coordinates and its values one level below the rows (depth 1).
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @spmm
func.func @spmm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32, #CSR>, %b: tensor<5x3xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32, #CSR>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = [["d0", 3]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32, #CSR>, tensor<5x3xf32>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}
// CHECK: %[[I:.*]]:2 = "sam.scan"(%{{.*}}) {fuseflow.index = "d0", level = 0 : i64}
// CHECK-NEXT: "sam.fork"(%[[I]]#0) : (!sam.crd) -> (!sam.crd, !sam.crd, !sam.crd)
// CHECK: %[[ACC0:.*]]:2 = "sam.spacc"
// CHECK-NEXT: %[[ACC1:.*]]:2 = "sam.spacc"
// CHECK-NEXT: %[[ACC2:.*]]:2 = "sam.spacc"
// CHECK-NEXT: "sam.level_write"(%[[I]]#0) {level = 0 : i64, result = 0 : i64}
// CHECK-NEXT: %[[J:.*]] = "sam.join"(%[[I]]#0, %[[ACC0]]#0, %[[ACC1]]#0, %[[ACC2]]#0) {depth = 1 : i64}
// CHECK-NEXT: "sam.level_write"(%[[J]]) {level = 1 : i64, result = 0 : i64}
// CHECK-NEXT: %[[V:.*]] = "sam.join"(%[[I]]#0, %[[ACC0]]#1, %[[ACC1]]#1, %[[ACC2]]#1) {depth = 1 : i64}
// CHECK-NEXT: "sam.value_write"(%[[V]]) {result = 0 : i64}

// -----

// Tests that 2 x 2 lanes nest: the rows d0 are forked in two, each lane forks its columns d1
// in two; each outer lane joins its inner lanes (depth 1: the sums lie one level below d1),
// then the outer join merges the outer lanes (depth 2).
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @nested
func.func @nested(%X: tensor<4x4x3xf32>) -> tensor<4x4xf32> {
  %k = "fuse.kernel"(%X) ({
  ^bb0(%x: tensor<4x4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %r = linalg.generic {indexing_maps = [#id3, #out], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<4x4x3xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    "gpu.yield"(%r) : (tensor<4x4xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1", "d2"], parallel = [["d1", 2], ["d0", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x4x3xf32>) -> tensor<4x4xf32>
  return %k : tensor<4x4xf32>
}
// CHECK: %[[I:.*]]:2 = "sam.scan"(%{{.*}}) {fuseflow.index = "d0", level = 0 : i64}
// CHECK-NEXT: %[[IR:.*]]:2 = "sam.fork"(%[[I]]#1) : (!sam.ref) -> (!sam.ref, !sam.ref)
// CHECK-NEXT: %[[J0:.*]]:2 = "sam.scan"(%[[IR]]#0, %{{.*}}) {fuseflow.index = "d1", level = 1 : i64}
// CHECK-NEXT: %[[J1:.*]]:2 = "sam.scan"(%[[IR]]#1, %{{.*}}) {fuseflow.index = "d1", level = 1 : i64}
// CHECK: "sam.fork"(%[[J0]]#0) : (!sam.crd) -> (!sam.crd, !sam.crd)
// CHECK: "sam.fork"(%[[J1]]#0) : (!sam.crd) -> (!sam.crd, !sam.crd)
// CHECK: %[[S00:.*]] = "sam.reduce"
// CHECK-NEXT: %[[S01:.*]] = "sam.reduce"
// CHECK-NEXT: %[[S10:.*]] = "sam.reduce"
// CHECK-NEXT: %[[S11:.*]] = "sam.reduce"
// CHECK-NEXT: "sam.level_write"(%[[I]]#0) {level = 0 : i64, result = 0 : i64}
// CHECK-NEXT: %[[J:.*]] = "sam.join"(%[[I]]#0, %[[J0]]#0, %[[J1]]#0) {depth = 1 : i64}
// CHECK-NEXT: "sam.level_write"(%[[J]]) {level = 1 : i64, result = 0 : i64}
// CHECK-NEXT: %[[V0:.*]] = "sam.join"(%[[J0]]#0, %[[S00]], %[[S01]]) {depth = 0 : i64}
// CHECK-NEXT: %[[V1:.*]] = "sam.join"(%[[J1]]#0, %[[S10]], %[[S11]]) {depth = 0 : i64}
// CHECK-NEXT: %[[V:.*]] = "sam.join"(%[[I]]#0, %[[V0]], %[[V1]]) {depth = 1 : i64}
// CHECK-NEXT: "sam.value_write"(%[[V]]) {result = 0 : i64}

// -----

// Tests that a compressed row level (DCSR), whose lanes can get no row at all, gives each
// lane's reducer the lane's row coordinates.
#DCSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : compressed, d1 : compressed) }>
#mv_a = affine_map<(d0, d1) -> (d0, d1)>
#mv_y = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @rowsum
func.func @rowsum(%A: tensor<6x4xf32, #DCSR>) -> tensor<6xf32> {
  %k = "fuse.kernel"(%A) ({
  ^bb0(%a: tensor<6x4xf32, #DCSR>):
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<6xf32>
    %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
    %r = linalg.generic {indexing_maps = [#mv_a, #mv_y], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<6x4xf32, #DCSR>) outs(%f : tensor<6xf32>) {
    ^bb0(%p: f32, %acc: f32):
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<6xf32>
    "gpu.yield"(%r) : (tensor<6xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = [["d0", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<6x4xf32, #DCSR>) -> tensor<6xf32>
  return %k : tensor<6xf32>
}
// CHECK: %[[I:.*]]:2 = "sam.scan"(%{{.*}}) {fuseflow.index = "d0", level = 0 : i64}
// CHECK-NEXT: %[[IC:.*]]:2 = "sam.fork"(%[[I]]#0) : (!sam.crd) -> (!sam.crd, !sam.crd)
// CHECK: "sam.reduce"(%{{.*}}, %[[IC]]#0) {kind = "sum"} : (!sam.val<f32, array<i64>>, !sam.crd)
// CHECK-NEXT: "sam.reduce"(%{{.*}}, %[[IC]]#1) {kind = "sum"} : (!sam.val<f32, array<i64>>, !sam.crd)

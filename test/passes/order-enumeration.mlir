// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition,fuseflow-schedule{order=d0,d2,d1},fuseflow-lower-to-sam,sam-verify)' | filecheck %s --check-prefix=ROW
// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition,fuseflow-schedule{order=d0,d1,d2},fuseflow-lower-to-sam,sam-verify)' | filecheck %s --check-prefix=INNER

// The schedule's order on out[d0,d1] = sum_{d2} A[d0,d2] * B[d2,d1]. ROW runs the row-wise
// (Gustavson) order d0,d2,d1, legal for every case here; INNER asks for the inner-product order
// d0,d1,d2, which needs B's levels in the order d1, d2: legal when B is dense (it is read through
// a transpose), an error listing the enumerated legal orders when B is compressed.

// Tests that SpGEMM (CSR x CSR) takes the order d0,d2,d1 (its only legal order) and
// accumulates the rows of B scaled by A's entries in a sparse accumulator; with d0,d1,d2 it is an
// error naming B, whose levels that order visits out of storage order.
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
// ROW-LABEL: func.func @spgemm
// ROW-NOT: linalg.transpose
// ROW: "sam.graph"(%arg0, %arg1)
// ROW: %[[ACC:.*]]:2 = "sam.spacc"(%{{.*}}, %{{.*}}) {order = 1 : i64}
// ROW: "sam.level_write"(%[[ACC]]#0) {level = 1 : i64, result = 0 : i64}
// ROW: fuseflow.einsum = "out0[d0,d1] = sum_{d2}(mul(T0[d0,d2], T1[d2,d1]))", fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d1"]
// INNER-NOT: func.func @spgemm
func.func @spgemm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32, #CSR> {
  %e = tensor.empty() : tensor<4x3xf32, #CSR>
  // expected-error @below {{order (d0, d1, d2) visits the levels of T1[d2,d1] out of storage order; legal orders: d0,d2,d1}}
  %p = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32, #CSR>) outs(%e : tensor<4x3xf32, #CSR>) -> tensor<4x3xf32, #CSR>
  return %p : tensor<4x3xf32, #CSR>
}

// -----

// Tests that SpMM (CSR x dense) takes both orders. With d0,d1,d2 the dense B is transposed on the
// host (a linalg.transpose placed before the graph) and read as B^T[d1,d2]: the coordinates of
// A's row locate the entries of each dense row of B^T (no scan of it, no intersection) and each
// dot product is a plain reduction, no sparse accumulator.
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
// ROW-LABEL: func.func @spmm
// ROW-NOT: linalg.transpose
// ROW: "sam.graph"(%arg0, %arg1)
// ROW: "sam.spacc"
// ROW: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d1"]
// INNER-LABEL: func.func @spmm
// INNER: %[[BT:.*]] = linalg.transpose ins(%arg1 : tensor<5x3xf32>) outs(%{{.*}} : tensor<3x5xf32>) permutation = [1, 0]
// INNER: "sam.graph"(%arg0, %[[BT]])
// INNER-NEXT: ^bb0({{.*}}, %[[BTA:[a-z0-9]+]]: tensor<3x5xf32>):
// INNER: %[[ACOL:.*]]:2 = "sam.scan"(%{{.*}}, %{{.*}}) {level = 1 : i64} : (!sam.ref, tensor<4x5xf32, #{{.*}}>)
// INNER-NEXT: "sam.locate"(%[[ACOL]]#0, %{{.*}}, %[[BTA]]) {level = 1 : i64}
// INNER-NOT: "sam.intersect"
// INNER-NOT: "sam.spacc"
// INNER: "sam.reduce"(%{{.*}}) {kind = "sum"}
// INNER: fuseflow.einsum = "out0[d0,d1] = sum_{d2}(mul(T0[d0,d2], T1[d1,d2]))", fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d1", "d2"]
func.func @spmm(%A: tensor<4x5xf32, #CSR>, %B: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.matmul ins(%A, %B : tensor<4x5xf32, #CSR>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}

// -----

// Tests that the error lists every legal order: with a dense A and a CSR B, the row-wise order
// d0,d2,d1 and the outer-product order d2,d0,d1 both read B in storage order.
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
// ROW-LABEL: func.func @dense_times_csr
// ROW: "sam.graph"(%arg0, %arg1)
// ROW: fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d0", "d2", "d1"]
// INNER-NOT: func.func @dense_times_csr
func.func @dense_times_csr(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @below {{order (d0, d1, d2) visits the levels of T1[d2,d1] out of storage order; legal orders: d0,d2,d1; d2,d0,d1}}
  %p = linalg.matmul ins(%A, %B : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}

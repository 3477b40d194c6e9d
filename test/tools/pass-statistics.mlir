// RUN: fuseflow-opt %s --mlir-pass-statistics --canonicalize --sam-verify -o %t 2>&1 | filecheck %s

// Tests that --mlir-pass-statistics reports, for each pass in order, the operation counts
// before and after it and the change per operation name.
// CHECK: Pass statistics report
// CHECK: canonicalize
// CHECK-NEXT: (S) 5 ops-before
// CHECK-NEXT: (S) 4 ops-after
// CHECK-NEXT: (S) -1 arith.addi
// CHECK-NEXT: sam-verify
// CHECK-NEXT: (S) 4 ops-before
// CHECK-NEXT: (S) 4 ops-after
// CHECK-NOT: (S)
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.addi %a, %a : i32
  return %b : i32
}

// RUN: fuseflow-opt %s --mlir-print-ir-before-all --canonicalize --sam-verify -o %t 2>&1 | filecheck %s

// Tests that --mlir-print-ir-before-all dumps the IR before every pass, upstream and FuseFlow
// passes alike: the addition is still there before canonicalize and gone before sam-verify.
// CHECK: IR Dump Before {{.*}}canonicalize
// CHECK: arith.addi
// CHECK: IR Dump Before SamVerifyPass{{.*}}sam-verify
// CHECK-NOT: arith.addi
// CHECK-NOT: IR Dump After
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.addi %a, %a : i32
  return %b : i32
}

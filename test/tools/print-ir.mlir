// RUN: fuseflow-opt %s --mlir-print-ir-after-all --canonicalize --sam-verify -o %t 2>&1 | filecheck %s
// RUN: fuseflow-opt %s --mlir-print-ir-after-all --mlir-print-op-generic --sam-verify -o %t 2>&1 | filecheck %s --check-prefix=GENERIC

// Tests that --mlir-print-ir-after-all dumps the IR after every pass, upstream and FuseFlow
// passes alike, in generic form with --mlir-print-op-generic.
// CHECK: IR Dump After {{.*}}canonicalize
// CHECK: func.func @f
// CHECK-NOT: arith.addi
// CHECK: IR Dump After SamVerifyPass{{.*}}sam-verify
// CHECK: func.func @f
// GENERIC: IR Dump After SamVerifyPass{{.*}}sam-verify
// GENERIC: "func.func"() <{function_type = () -> i32, sym_name = "f"}>
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.addi %a, %a : i32
  return %b : i32
}

// RUN: fuseflow-opt %s --mlir-print-ir-after-change --canonicalize --sam-verify --cse -o %t 2>&1 | filecheck %s
// RUN: fuseflow-opt %s --mlir-print-ir-after-all --mlir-print-ir-after-change --canonicalize --sam-verify --cse -o %t 2>&1 | filecheck %s

// Tests that --mlir-print-ir-after-change dumps the IR only after the passes that changed it
// (canonicalize folds the addition; sam-verify and cse change nothing), alone or as a filter
// on --mlir-print-ir-after-all.
// CHECK: IR Dump After {{.*}}canonicalize
// CHECK-NOT: arith.addi
// CHECK-NOT: IR Dump After
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.addi %a, %a : i32
  return %b : i32
}

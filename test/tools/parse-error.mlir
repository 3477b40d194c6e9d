// RUN: not fuseflow-opt %s 2>&1 | filecheck %s --strict-whitespace

// Tests that a parse error is printed at its location, followed by the source line and a
// caret under the column, and that nothing is printed on stdout.
// CHECK-NOT: module
func.func @f() {
  // CHECK: parse-error.mlir:[[# @LINE + 3]]:18: error: expected SSA operand
  // CHECK-NEXT: {{^}}  %x = arith.addi{{$}}
  // CHECK-NEXT: {{^}}                 ^{{$}}
  %x = arith.addi
}

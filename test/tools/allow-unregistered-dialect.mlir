// RUN: not fuseflow-opt %s 2>&1 | filecheck %s --check-prefix=REJECT
// RUN: fuseflow-opt %s --allow-unregistered-dialect --canonicalize | filecheck %s

// Tests that operations of unregistered dialects are a parse error unless
// --allow-unregistered-dialect, which keeps them through a pipeline.
// CHECK-LABEL: func.func @f
// CHECK: "mydialect.op"
func.func @f() -> i32 {
  // REJECT: allow-unregistered-dialect.mlir:[[# @LINE + 1]]:22: error: operation being parsed with an unregistered dialect
  %x = "mydialect.op"() : () -> i32
  return %x : i32
}

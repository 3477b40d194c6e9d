// RUN: fuseflow-opt < %s | filecheck %s
// RUN: fuseflow-opt - < %s | filecheck %s
// RUN: fuseflow-opt %s -o %t && filecheck %s < %t
// RUN: fuseflow-opt --mlir-print-debuginfo < %s | filecheck %s --check-prefix=STDIN-LOC
// RUN: fuseflow-opt --mlir-print-debuginfo %s | filecheck %s --check-prefix=FILE-LOC

// Tests that fuseflow-opt reads a file or stdin, writes stdout or -o, wraps top-level ops in
// a module, and names the input in locations (<stdin> when read from stdin).
// CHECK: module {
// CHECK-LABEL: func.func @first
// CHECK-NEXT: return
// STDIN-LOC: loc("<stdin>":[[# @LINE + 2]]:1)
// FILE-LOC: loc("{{.*}}stdin-output.mlir":[[# @LINE + 1]]:1)
func.func @first() {
  return
}
// CHECK-LABEL: func.func @second
func.func @second() {
  return
}

// RUN: not fuseflow-opt %s --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err
// RUN: fuseflow-opt %S/Inputs/custom-split-marker.mlir -split-input-file='// =====' | filecheck %s --check-prefix=MARKER

// Tests that each chunk is processed on its own and that outputs are joined with the marker.
// CHECK-LABEL: func.func @first
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: // -----
func.func @first() {
  return
}

// -----

// Tests that a chunk with a parse error prints nothing and is reported at its line in the
// whole input file.
// CHECK-NEXT: // -----
func.func @second() {
  // ERR: split-input-file.mlir:[[# @LINE + 1]]:18: error: expected SSA operand
  %x = arith.addi
}

// -----

// Tests that the chunk after a failing one is processed.
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @third
func.func @third() {
  return
}

// MARKER-LABEL: func.func @one
// MARKER: // =====
// MARKER-NEXT: module {
// MARKER-NEXT: func.func @two

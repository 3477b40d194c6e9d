// RUN: fuseflow-opt %s -o=%t.eq && filecheck %s < %t.eq
// RUN: fuseflow-opt %s -o %t.space && filecheck %s < %t.space
// RUN: fuseflow-opt %S/Inputs/custom-split-marker.mlir --split-input-file '// =====' | filecheck %s --check-prefix=MARKER
// RUN: fuseflow-opt --split-input-file '// =====' %S/Inputs/custom-split-marker.mlir | filecheck %s --check-prefix=MARKER
// RUN: fuseflow-opt --split-input-file %S/Inputs/custom-split-marker.mlir | filecheck %s --check-prefix=DEFAULT

// Tests mlir-opt's spellings of the output and split flags: -o=FILE as -o FILE, and
// --split-input-file MARKER (a following argument that starts with '//' and is no file) as
// --split-input-file=MARKER; a bare --split-input-file uses '// -----'.
// CHECK-LABEL: func.func @f
// MARKER-LABEL: func.func @one
// MARKER: // =====
// MARKER-LABEL: func.func @two
// DEFAULT-LABEL: func.func @one
// DEFAULT-NOT: // -----
// DEFAULT-LABEL: func.func @two
func.func @f() {
  return
}

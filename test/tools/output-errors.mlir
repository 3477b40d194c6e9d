// RUN: not fuseflow-opt %s -o %t.missing/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not fuseflow-opt %s -o=%t.missing/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not fuseflow-opt %s --sam-verify --mlir-pass-pipeline-crash-reproducer=%t.missing/r.mlir 2>&1 | filecheck %s --check-prefix=REPRO
// RUN: mkdir -p %t.folder
// RUN: not fuseflow-opt %s -o %t.folder 2>&1 | filecheck %s --check-prefix=FOLDER

// Tests that an output or reproducer path in a folder that does not exist (or naming a folder)
// is a one-line error with a non-zero exit, before any input is processed.
// OUTPUT: fuseflow-opt: error: cannot write -o file '{{.*}}.missing/out.mlir': folder '{{.*}}.missing' does not exist
// OUTPUT-NOT: Traceback
// REPRO: fuseflow-opt: error: cannot write --mlir-pass-pipeline-crash-reproducer file '{{.*}}.missing/r.mlir': folder '{{.*}}.missing' does not exist
// FOLDER: fuseflow-opt: error: cannot write -o file '{{.*}}.folder': it is a folder
func.func @f() {
  return
}

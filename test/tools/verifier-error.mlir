// RUN: not fuseflow-opt %s --split-input-file 2>&1 | filecheck %s

// Tests that every parsed module also goes through FuseFlow's dialect verifiers, whose
// errors are located at the offending op.
func.func @outside() {
  // CHECK: verifier-error.mlir:[[# @LINE + 1]]:8: error: 'sam.root' op must be directly inside a 'sam.graph'
  %r = "sam.root"() : () -> !sam.ref
  return
}

// -----

// Tests that an IRDL error is printed with the note MLIR attaches to it.
func.func @wrong_type() {
  // CHECK: verifier-error.mlir:[[# @LINE + 2]]:8: error: expected base type 'sam.ref' but got '!sam.crd'
  // CHECK: verifier-error.mlir:[[# @LINE + 1]]:8: note: see current operation: %{{.*}} = "sam.root"() : () -> !sam.crd
  %r = "sam.root"() : () -> !sam.crd
  return
}

// RUN: not fuseflow-opt %s --canonicalize 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not fuseflow-opt %s --no-fuseflow-verify-on-parse --canonicalize 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: fuseflow-opt %s --no-fuseflow-verify-on-parse --verify-each=false --canonicalize | filecheck %s --check-prefix=OFF

// Tests that the dialect verifiers run after parsing, and after the pipeline unless
// --verify-each=false.
// OFF-LABEL: func.func @outside
// OFF: "sam.root"
func.func @outside() {
  // PARSE: verify-each.mlir:[[# @LINE + 2]]:8: error: 'sam.root' op must be directly inside a 'sam.graph'
  // AFTER: verify-each.mlir:[[# @LINE + 1]]:8: error: 'sam.root' op must be directly inside a 'sam.graph'
  %r = "sam.root"() : () -> !sam.ref
  return
}

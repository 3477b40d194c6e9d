// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics
// RUN: not fuseflow-opt %S/Inputs/verify-diagnostics-mismatch.mlir --verify-diagnostics 2>&1 | filecheck %s

// Tests that expectations designate lines with @below, @above, @+N, @-N or their own line.
func.func @designators() {
  // expected-error @below {{'sam.root' op must be directly inside a 'sam.graph'}}
  %a = "sam.root"() : () -> !sam.ref
  %b = "sam.root"() : () -> !sam.ref
  // expected-error @above {{'sam.root' op must be directly inside a 'sam.graph'}}
  // expected-error @+2 {{'sam.root' op must be directly inside a 'sam.graph'}}

  %c = "sam.root"() : () -> !sam.ref
  %d = "sam.root"() : () -> !sam.ref // expected-error {{'sam.root' op must be directly inside a 'sam.graph'}}
  %e = "sam.root"() : () -> !sam.ref

  // expected-error @-2 {{'sam.root' op must be directly inside a 'sam.graph'}}
  return
}

// -----

// Tests that consecutive @below expectations all refer to the next line without one.
func.func @stacked(%x: tensor<4xf32>) {
  // expected-error @below {{'sam.graph' op body argument #0 has type tensor<8xf32>}}
  // expected-error @below {{'sam.graph' op 'operandSegmentSizes' must hold the lengths of the runs of equal consecutive input types, [1] then zeros; got [0, 1] then zeros}}
  "sam.graph"(%x) ({
  ^bb0(%a: tensor<8xf32>):
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return
}

// -----

// Tests that expected-error-re takes {{regex}} parts, FileCheck style.
func.func @regex() {
  // expected-error-re @below {{'sam.{{[a-z]+}}' op must be directly inside a {{'sam\.graph'$}}}}
  %a = "sam.root"() : () -> !sam.ref
  return
}

// -----

// Tests that notes are checked: a redefined symbol is an error with a note at the first
// definition.
// expected-note @below {{see existing symbol definition here}}
func.func @twice() {
  return
}
// expected-error @below {{redefinition of symbol named 'twice'}}
func.func @twice() {
  return
}

// -----

// Tests that warnings are checked: the parser warns about external resources it ignores.
func.func @resources() {
  return
}
{-#
  external_resources: {
    // expected-warning @below {{ignoring unknown external resources for 'no_such_resource'}}
    no_such_resource: {}
  }
#-}

// -----

// Tests that @unknown matches a diagnostic without a source location.
func.func @unknown_location() {
  // expected-error @unknown {{'sam.root' op must be directly inside a 'sam.graph'}}
  %a = "sam.root"() : () -> !sam.ref loc(unknown)
  return
}

// Tests that a missing and an unexpected diagnostic both fail the run, each reported at its
// location (the input is Inputs/verify-diagnostics-mismatch.mlir).
// CHECK: verify-diagnostics-mismatch.mlir:4:3: error: unexpected error: 'sam.root' op must be directly inside a 'sam.graph'
// CHECK: verify-diagnostics-mismatch.mlir:8:6: error: expected error "no such error" was not produced

// An unexpected error (line 4) and an expectation nothing meets (line 8), for
// test/tools/verify-diagnostics.mlir.
func.func @mismatch() {
  "sam.root"() : () -> !sam.ref
  return
}
func.func @expected() {
  // expected-error @below {{no such error}}
  return
}

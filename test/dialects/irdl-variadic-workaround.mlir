// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics
//
// The workaround this file guards: IRDL binds a constraint variable to a single type per op,
// also across the elements of a variadic operand, so a `variadic` list of `irdl.any` would
// force every input of a `fuse.kernel` or `sam.graph` to one type. Their operands and results
// are therefore 64 + 16 variadic slots, one per run of equal consecutive types, with
// `operandSegmentSizes`/`resultSegmentSizes` (dialects/containers.py). The case below expects
// that binding. Once IRDL checks variadic elements independently it fails: then declare the
// container operands and results as one variadic each, drop the slots and segment sizes,
// check fork/join lane types in dialects/verify.py, and delete this file.

// Tests that the lanes of a join, one variadic operand bound to one stream type, cannot mix
// stream types.
func.func @join_lanes_bind_one_type() {
  "sam.graph"() ({
    %root = "sam.root"() : () -> !sam.ref
    %i, %ri = "sam.scan"(%root) {level = 0 : i64, size = 4 : i64} : (!sam.ref) -> (!sam.crd, !sam.ref)
    // expected-error @below {{expected '!sam.crd' but got '!sam.ref'}}
    %a = "sam.join"(%i, %i, %ri) : (!sam.crd, !sam.crd, !sam.ref) -> !sam.crd
    gpu.yield
  }) {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
  return
}

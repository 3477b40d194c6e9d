// The `fuse` dialect: kernels of linalg ops that are fused into one dataflow graph.
//
// IRDL in the bundled MLIR cannot give an op the terminator trait, so a kernel body ends in
// the upstream `tosa.yield` (a parent-agnostic, return-like terminator). The Python verifier
// in dialects/verify.py checks that it yields exactly the kernel's result types.
irdl.dialect @fuse {
  // A kernel: inputs are tensors captured from outside, results are the tensors its body
  // yields. The body is one block whose arguments match the inputs.
  irdl.operation @kernel {
    %in = irdl.any
    %out = irdl.any
    irdl.operands(inputs: variadic %in)
    irdl.results(outputs: variadic %out)
    %body = irdl.region with size 1
    irdl.regions(body: %body)
  }
}

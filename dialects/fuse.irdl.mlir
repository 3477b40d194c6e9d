// The `fuse` dialect: kernels of linalg ops that are fused into one dataflow graph.
//
// IRDL in the bundled MLIR cannot give an op the terminator trait, so a kernel body ends in
// the upstream `gpu.yield` (a parent-agnostic, return-like terminator whose
// operand list may be empty and still round-trips). The Python verifier
// in dialects/verify.py checks that it yields exactly the kernel's result types.
irdl.dialect @fuse {
  // A kernel: inputs are tensors captured from outside, results are the tensors its body
  // yields. The body is one block whose arguments match the inputs.
  irdl.operation @kernel {
    // Operands and results of differing tensor types: IRDL binds a constraint variable to one
    // type, so a variadic list would force all inputs to one type. Each slot has its own
    // variable instead (32 inputs, 8 results; dialects/verify.py checks they are filled
    // in order, dialects/builders.py computes the segment sizes).
    %in0 = irdl.any
    %in1 = irdl.any
    %in2 = irdl.any
    %in3 = irdl.any
    %in4 = irdl.any
    %in5 = irdl.any
    %in6 = irdl.any
    %in7 = irdl.any
    %in8 = irdl.any
    %in9 = irdl.any
    %in10 = irdl.any
    %in11 = irdl.any
    %in12 = irdl.any
    %in13 = irdl.any
    %in14 = irdl.any
    %in15 = irdl.any
    %in16 = irdl.any
    %in17 = irdl.any
    %in18 = irdl.any
    %in19 = irdl.any
    %in20 = irdl.any
    %in21 = irdl.any
    %in22 = irdl.any
    %in23 = irdl.any
    %in24 = irdl.any
    %in25 = irdl.any
    %in26 = irdl.any
    %in27 = irdl.any
    %in28 = irdl.any
    %in29 = irdl.any
    %in30 = irdl.any
    %in31 = irdl.any
    %out0 = irdl.any
    %out1 = irdl.any
    %out2 = irdl.any
    %out3 = irdl.any
    %out4 = irdl.any
    %out5 = irdl.any
    %out6 = irdl.any
    %out7 = irdl.any
    irdl.operands(in0: optional %in0, in1: optional %in1, in2: optional %in2, in3: optional %in3, in4: optional %in4, in5: optional %in5, in6: optional %in6, in7: optional %in7, in8: optional %in8, in9: optional %in9, in10: optional %in10, in11: optional %in11, in12: optional %in12, in13: optional %in13, in14: optional %in14, in15: optional %in15, in16: optional %in16, in17: optional %in17, in18: optional %in18, in19: optional %in19, in20: optional %in20, in21: optional %in21, in22: optional %in22, in23: optional %in23, in24: optional %in24, in25: optional %in25, in26: optional %in26, in27: optional %in27, in28: optional %in28, in29: optional %in29, in30: optional %in30, in31: optional %in31)
    irdl.results(out0: optional %out0, out1: optional %out1, out2: optional %out2, out3: optional %out3, out4: optional %out4, out5: optional %out5, out6: optional %out6, out7: optional %out7)
    %body = irdl.region with size 1
    irdl.regions(body: %body)
  }
}

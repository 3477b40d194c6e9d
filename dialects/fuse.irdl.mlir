// The `fuse` dialect: kernels of linalg ops that are fused into one dataflow graph.
//
// IRDL in the bundled MLIR cannot give an op the terminator trait, so a kernel body ends in
// the upstream `gpu.yield` (a parent-agnostic, return-like terminator whose
// operand list may be empty and still round-trips). The Python verifier
// in dialects/verify.py checks that it yields exactly the kernel's result types. The kernel op
// is declared in dialects/containers.py; its section below is generated from that table (a
// test fails when it differs).
irdl.dialect @fuse {
  // BEGIN generated from dialects/containers.py by `python -m fuseflow.dialects.generate --write`
  // A kernel: inputs are tensors captured from outside, results are the tensors its body yields.
  // The body is one block whose arguments match the inputs.
  // Any number of inputs and results of any types: slot k holds the k-th run of equal
  // consecutive types (IRDL binds a variable to one type per op, across a variadic's elements
  // too), so 64 input and 16 result slots cap the runs, not the values (dialects/containers.py).
  irdl.operation @kernel {
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
    %in32 = irdl.any
    %in33 = irdl.any
    %in34 = irdl.any
    %in35 = irdl.any
    %in36 = irdl.any
    %in37 = irdl.any
    %in38 = irdl.any
    %in39 = irdl.any
    %in40 = irdl.any
    %in41 = irdl.any
    %in42 = irdl.any
    %in43 = irdl.any
    %in44 = irdl.any
    %in45 = irdl.any
    %in46 = irdl.any
    %in47 = irdl.any
    %in48 = irdl.any
    %in49 = irdl.any
    %in50 = irdl.any
    %in51 = irdl.any
    %in52 = irdl.any
    %in53 = irdl.any
    %in54 = irdl.any
    %in55 = irdl.any
    %in56 = irdl.any
    %in57 = irdl.any
    %in58 = irdl.any
    %in59 = irdl.any
    %in60 = irdl.any
    %in61 = irdl.any
    %in62 = irdl.any
    %in63 = irdl.any
    %out0 = irdl.any
    %out1 = irdl.any
    %out2 = irdl.any
    %out3 = irdl.any
    %out4 = irdl.any
    %out5 = irdl.any
    %out6 = irdl.any
    %out7 = irdl.any
    %out8 = irdl.any
    %out9 = irdl.any
    %out10 = irdl.any
    %out11 = irdl.any
    %out12 = irdl.any
    %out13 = irdl.any
    %out14 = irdl.any
    %out15 = irdl.any
    irdl.operands(in0: variadic %in0, in1: variadic %in1, in2: variadic %in2, in3: variadic %in3,
        in4: variadic %in4, in5: variadic %in5, in6: variadic %in6, in7: variadic %in7,
        in8: variadic %in8, in9: variadic %in9, in10: variadic %in10, in11: variadic %in11,
        in12: variadic %in12, in13: variadic %in13, in14: variadic %in14, in15: variadic %in15,
        in16: variadic %in16, in17: variadic %in17, in18: variadic %in18, in19: variadic %in19,
        in20: variadic %in20, in21: variadic %in21, in22: variadic %in22, in23: variadic %in23,
        in24: variadic %in24, in25: variadic %in25, in26: variadic %in26, in27: variadic %in27,
        in28: variadic %in28, in29: variadic %in29, in30: variadic %in30, in31: variadic %in31,
        in32: variadic %in32, in33: variadic %in33, in34: variadic %in34, in35: variadic %in35,
        in36: variadic %in36, in37: variadic %in37, in38: variadic %in38, in39: variadic %in39,
        in40: variadic %in40, in41: variadic %in41, in42: variadic %in42, in43: variadic %in43,
        in44: variadic %in44, in45: variadic %in45, in46: variadic %in46, in47: variadic %in47,
        in48: variadic %in48, in49: variadic %in49, in50: variadic %in50, in51: variadic %in51,
        in52: variadic %in52, in53: variadic %in53, in54: variadic %in54, in55: variadic %in55,
        in56: variadic %in56, in57: variadic %in57, in58: variadic %in58, in59: variadic %in59,
        in60: variadic %in60, in61: variadic %in61, in62: variadic %in62, in63: variadic %in63)
    irdl.results(out0: variadic %out0, out1: variadic %out1, out2: variadic %out2,
        out3: variadic %out3, out4: variadic %out4, out5: variadic %out5, out6: variadic %out6,
        out7: variadic %out7, out8: variadic %out8, out9: variadic %out9, out10: variadic %out10,
        out11: variadic %out11, out12: variadic %out12, out13: variadic %out13,
        out14: variadic %out14, out15: variadic %out15)
    %body = irdl.region with size 1
    irdl.regions(body: %body)
  }
  // END generated from dialects/containers.py
}

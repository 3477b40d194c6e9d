// The `sam` dialect: streaming sparse dataflow primitives (Sparse Abstract Machine).
//
// Streams are SSA values of the stream types below; a stream with several uses is
// broadcast to every consumer. A `sam.graph` holds one kernel's dataflow graph: its block
// arguments are the kernel's input tensors and its results are filled by the level and
// value writers (attribute `result`). Like `fuse.kernel`, the body ends in `gpu.yield`
// (IRDL cannot declare terminators); dialects/verify.py checks what IRDL cannot say.
// The primitives are declared once, in dialects/primitives.py; their section below is
// generated from that table (a test fails when it differs).
irdl.dialect @sam {
  // Stream of references (positions into a tensor level).
  irdl.type @ref { }
  // Stream of coordinates.
  irdl.type @crd { }
  // Stream of repeat signals (R, S, D).
  irdl.type @repsig { }
  // Stream of values: element type and tile shape (empty array for scalars).
  irdl.type @val {
    %elem = irdl.any
    %tile = irdl.base "#builtin.dense_array"
    irdl.parameters(elem: %elem, tile: %tile)
  }

  irdl.operation @graph {
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

  // BEGIN generated from dialects/primitives.py by `python -m fuseflow.dialects.generate --write`
  // Emits reference 0, then done: the parent reference of every outermost scanner.
  irdl.operation @root {
    %ref = irdl.parametric @sam::@ref<>
    irdl.results(ref: %ref)
  }

  // Level scanner: for each input reference, the fiber's coordinates and child references.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "size"
  // (int).
  irdl.operation @scan {
    %ref = irdl.parametric @sam::@ref<>
    %tensor = irdl.any
    %crd = irdl.parametric @sam::@crd<>
    %level = irdl.base "#builtin.integer"
    irdl.operands(parent: %ref, tensor: optional %tensor)
    irdl.results(crd: %crd, ref: %ref)
    irdl.attributes { "level" = %level }
  }

  // Random access into a dense level by coordinate.
  irdl.operation @locate {
    %crd = irdl.parametric @sam::@crd<>
    %ref = irdl.parametric @sam::@ref<>
    %tensor = irdl.any
    %level = irdl.base "#builtin.integer"
    irdl.operands(crd: %crd, parent: %ref, tensor: %tensor)
    irdl.results(ref: %ref, out_crd: %crd)
    irdl.attributes { "level" = %level }
  }

  // Repeat-signal generator: a data or `N` coordinate gives `R`, a stop `S`, done `D`.
  irdl.operation @repsiggen {
    %crd = irdl.parametric @sam::@crd<>
    %repsig = irdl.parametric @sam::@repsig<>
    irdl.operands(crd: %crd)
    irdl.results(signal: %repsig)
  }

  // Repeater: re-emits the current reference or value once per `R`.
  irdl.operation @repeat {
    %ref = irdl.parametric @sam::@ref<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %stream = irdl.any_of(%ref, %val)
    %repsig = irdl.parametric @sam::@repsig<>
    irdl.operands(input: %stream, signal: %repsig)
    irdl.results(output: %stream)
  }

  // n-ary intersecter: the coordinates present in every input.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "val_groups"
  // (i64_array).
  irdl.operation @intersect {
    %crd = irdl.parametric @sam::@crd<>
    %ref = irdl.parametric @sam::@ref<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %ref_groups = irdl.base "#builtin.dense_array"
    irdl.operands(crds: variadic %crd, refs: variadic %ref, vals: variadic %val)
    irdl.results(crd: %crd, out_refs: variadic %ref, out_vals: variadic %val)
    irdl.attributes { "ref_groups" = %ref_groups }
  }

  // n-ary unioner: the coordinates present in any input; `N` for the references and values of an
  // input that lacks one.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "val_groups"
  // (i64_array).
  irdl.operation @union {
    %crd = irdl.parametric @sam::@crd<>
    %ref = irdl.parametric @sam::@ref<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %ref_groups = irdl.base "#builtin.dense_array"
    irdl.operands(crds: variadic %crd, refs: variadic %ref, vals: variadic %val)
    irdl.results(crd: %crd, out_refs: variadic %ref, out_vals: variadic %val)
    irdl.attributes { "ref_groups" = %ref_groups }
  }

  // Value load: `vals[ref]` of its tensor operand; `N` gives 0.0.
  irdl.operation @array {
    %ref = irdl.parametric @sam::@ref<>
    %tensor = irdl.any
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    irdl.operands(ref: %ref, tensor: %tensor)
    irdl.results(val: %val)
  }

  // Arithmetic on one or two value streams, all of one `!sam.val` type.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "scalar"
  // (float).
  irdl.operation @alu {
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %op_add = irdl.is "add"
    %op_sub = irdl.is "sub"
    %op_mul = irdl.is "mul"
    %op_div = irdl.is "div"
    %op_max = irdl.is "max"
    %op_min = irdl.is "min"
    %op_neg = irdl.is "neg"
    %op_exp = irdl.is "exp"
    %op_rsqrt = irdl.is "rsqrt"
    %op_sqrt = irdl.is "sqrt"
    %op_log = irdl.is "log"
    %op_sigmoid = irdl.is "sigmoid"
    %op_tanh = irdl.is "tanh"
    %op_gelu = irdl.is "gelu"
    %op_relu = irdl.is "relu"
    %op_scalar_add = irdl.is "scalar_add"
    %op_scalar_sub = irdl.is "scalar_sub"
    %op_scalar_rsub = irdl.is "scalar_rsub"
    %op_scalar_mul = irdl.is "scalar_mul"
    %op_scalar_div = irdl.is "scalar_div"
    %op_scalar_rdiv = irdl.is "scalar_rdiv"
    %op_scalar_max = irdl.is "scalar_max"
    %op_scalar_min = irdl.is "scalar_min"
    %op_mask_fill = irdl.is "mask_fill"
    %op = irdl.any_of(%op_add, %op_sub, %op_mul, %op_div, %op_max, %op_min, %op_neg, %op_exp, %op_rsqrt, %op_sqrt, %op_log, %op_sigmoid, %op_tanh, %op_gelu, %op_relu, %op_scalar_add, %op_scalar_sub, %op_scalar_rsub, %op_scalar_mul, %op_scalar_div, %op_scalar_rdiv, %op_scalar_max, %op_scalar_min, %op_mask_fill)
    irdl.operands(lhs: %val, rhs: optional %val)
    irdl.results(out: %val)
    irdl.attributes { "op" = %op }
  }

  // Reducer: sums or maxes each innermost fiber, removing one stop level.
  irdl.operation @reduce {
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %crd = irdl.parametric @sam::@crd<>
    %kind_sum = irdl.is "sum"
    %kind_max = irdl.is "max"
    %kind = irdl.any_of(%kind_sum, %kind_max)
    irdl.operands(input: %val, outer: optional %crd)
    irdl.results(output: %val)
    irdl.attributes { "kind" = %kind }
  }

  // Sparse accumulator of order n: reduces over the index variable n levels above the innermost.
  irdl.operation @spacc {
    %crd = irdl.parametric @sam::@crd<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %order = irdl.base "#builtin.integer"
    irdl.operands(crds: variadic %crd, val: %val)
    irdl.results(out_crds: variadic %crd, out_val: %val)
    irdl.attributes { "order" = %order }
  }

  // Coordinate dropper: drops the outer coordinates whose inner fiber came out empty.
  irdl.operation @crddrop {
    %crd = irdl.parametric @sam::@crd<>
    irdl.operands(inner: %crd, outer: %crd)
    irdl.results(out_inner: %crd, out_outer: %crd)
  }

  // Coordinate hold: repeats the outer coordinate once per inner coordinate.
  irdl.operation @crdhold {
    %crd = irdl.parametric @sam::@crd<>
    irdl.operands(inner: %crd, outer: %crd)
    irdl.results(out_inner: %crd, out_outer: %crd)
  }

  // Level writer: builds storage level `level` of graph result `result` from a coordinate
  // stream.
  irdl.operation @level_write {
    %crd = irdl.parametric @sam::@crd<>
    %result = irdl.base "#builtin.integer"
    %level = irdl.base "#builtin.integer"
    irdl.operands(crd: %crd)
    irdl.attributes { "result" = %result, "level" = %level }
  }

  // Value writer: the values of graph result `result`.
  irdl.operation @value_write {
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %result = irdl.base "#builtin.integer"
    irdl.operands(val: %val)
    irdl.attributes { "result" = %result }
  }

  // Fork: deals data tokens round-robin to its lanes; control tokens go to every lane.
  irdl.operation @fork {
    %ref = irdl.parametric @sam::@ref<>
    %crd = irdl.parametric @sam::@crd<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %stream = irdl.any_of(%ref, %crd, %val)
    irdl.operands(input: %stream)
    irdl.results(lanes: variadic %stream)
  }

  // Join: merges lanes back into the order the fork dealt them.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "depth"
  // (int).
  irdl.operation @join {
    %ref = irdl.parametric @sam::@ref<>
    %crd = irdl.parametric @sam::@crd<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %stream = irdl.any_of(%ref, %crd, %val)
    irdl.operands(lanes: variadic %stream)
    irdl.results(output: %stream)
  }
  // END generated
}

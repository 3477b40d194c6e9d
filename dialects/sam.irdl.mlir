// The `sam` dialect: streaming sparse dataflow primitives (Sparse Abstract Machine).
//
// Streams are SSA values of the stream types below; a stream with several uses is
// broadcast to every consumer. A `sam.graph` holds one kernel's dataflow graph: its block
// arguments are the kernel's input tensors and its results are filled by the level and
// value writers (attribute `result`). Like `fuse.kernel`, the body ends in `gpu.yield`
// (IRDL cannot declare terminators); dialects/verify.py checks what IRDL cannot say.
// The graph op and the primitives are declared once, in dialects/containers.py and
// dialects/primitives.py; their sections below are generated from those tables (a test
// fails when they differ).
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

  // BEGIN generated from dialects/containers.py by `python -m fuseflow.dialects.generate --write`
  // One kernel's dataflow graph: inputs are tensors, results are filled by the level and value
  // writers (attribute `result`). The body is one block whose arguments match the inputs.
  // Any number of inputs and results of any types: slot k holds the k-th run of equal
  // consecutive types (IRDL binds a variable to one type per op, across a variadic's elements
  // too), so 64 input and 16 result slots cap the runs, not the values (dialects/containers.py).
  irdl.operation @graph {
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

  // Value load: `vals[ref]` of its tensor operand; an `N` reference gives an `N` value (a tile
  // of zeros for tiles).
  irdl.operation @array {
    %ref = irdl.parametric @sam::@ref<>
    %tensor = irdl.any
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    irdl.operands(ref: %ref, tensor: %tensor)
    irdl.results(val: %val)
  }

  // Arithmetic on one or two value streams: scalars, or tiles.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "scalar"
  // (float), "tile" (string).
  irdl.operation @alu {
    %e_lhs = irdl.any
    %t_lhs = irdl.any
    %val_lhs = irdl.parametric @sam::@val<%e_lhs, %t_lhs>
    %e_rhs = irdl.any
    %t_rhs = irdl.any
    %val_rhs = irdl.parametric @sam::@val<%e_rhs, %t_rhs>
    %e_out = irdl.any
    %t_out = irdl.any
    %val_out = irdl.parametric @sam::@val<%e_out, %t_out>
    %op_add = irdl.is "add"
    %op_sub = irdl.is "sub"
    %op_mul = irdl.is "mul"
    %op_div = irdl.is "div"
    %op_max = irdl.is "max"
    %op_min = irdl.is "min"
    %op_gt_select = irdl.is "gt_select"
    %op_lt_select = irdl.is "lt_select"
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
    %op_scalar_gt_select = irdl.is "scalar_gt_select"
    %op_scalar_lt_select = irdl.is "scalar_lt_select"
    %op_mask_fill = irdl.is "mask_fill"
    %op = irdl.any_of(%op_add, %op_sub, %op_mul, %op_div, %op_max, %op_min, %op_gt_select, %op_lt_select, %op_neg, %op_exp, %op_rsqrt, %op_sqrt, %op_log, %op_sigmoid, %op_tanh, %op_gelu, %op_relu, %op_scalar_add, %op_scalar_sub, %op_scalar_rsub, %op_scalar_mul, %op_scalar_div, %op_scalar_rdiv, %op_scalar_max, %op_scalar_min, %op_scalar_gt_select, %op_scalar_lt_select, %op_mask_fill)
    irdl.operands(lhs: %val_lhs, rhs: optional %val_rhs)
    irdl.results(out: %val_out)
    irdl.attributes { "op" = %op }
  }

  // Reducer: sums or maxes each innermost fiber, removing one stop level.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "tile"
  // (string).
  irdl.operation @reduce {
    %e_input = irdl.any
    %t_input = irdl.any
    %val_input = irdl.parametric @sam::@val<%e_input, %t_input>
    %crd = irdl.parametric @sam::@crd<>
    %e_output = irdl.any
    %t_output = irdl.any
    %val_output = irdl.parametric @sam::@val<%e_output, %t_output>
    %kind_sum = irdl.is "sum"
    %kind_max = irdl.is "max"
    %kind = irdl.any_of(%kind_sum, %kind_max)
    irdl.operands(input: %val_input, outer: optional %crd)
    irdl.results(output: %val_output)
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

  // Join: merges lanes back into the order the fork dealt them, led by the coordinates of the
  // forked level.
  // Optional attributes (IRDL cannot declare them; dialects/verify.py checks them): "depth"
  // (int).
  irdl.operation @join {
    %crd = irdl.parametric @sam::@crd<>
    %ref = irdl.parametric @sam::@ref<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %stream = irdl.any_of(%ref, %crd, %val)
    irdl.operands(order: %crd, lanes: variadic %stream)
    irdl.results(output: %stream)
  }
  // END generated from dialects/primitives.py
}

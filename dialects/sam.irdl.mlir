// The `sam` dialect: streaming sparse dataflow primitives (Sparse Abstract Machine).
//
// Streams are SSA values of the stream types below; a stream with several uses is
// broadcast to every consumer. A `sam.graph` holds one kernel's dataflow graph: its block
// arguments are the kernel's input tensors and its results are filled by the level and
// value writers (attribute `result`). Like `fuse.kernel`, the body ends in `gpu.yield`
// (IRDL cannot declare terminators); dialects/verify.py checks what IRDL cannot say.
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

  // Emits reference 0, then done.
  irdl.operation @root {
    %ref = irdl.parametric @sam::@ref<>
    irdl.results(ref: %ref)
  }

  // Level scanner: for each input reference, the fiber's coordinates and child references.
  // The level format (dense, compressed, singleton) and size come from the scanned tensor's
  // type; without a tensor operand it scans a dense iteration space of `size` coordinates.
  irdl.operation @scan {
    %ref = irdl.parametric @sam::@ref<>
    %crd = irdl.parametric @sam::@crd<>
    %tensor = irdl.any
    %int = irdl.base "#builtin.integer"
    irdl.operands(parent: %ref, tensor: optional %tensor)
    irdl.results(crd: %crd, ref: %ref)
    irdl.attributes { "level" = %int }
  }

  // Random access into a dense level by coordinate.
  irdl.operation @locate {
    %ref = irdl.parametric @sam::@ref<>
    %crd = irdl.parametric @sam::@crd<>
    %tensor = irdl.any
    %int = irdl.base "#builtin.integer"
    irdl.operands(crd: %crd, parent: %ref, tensor: %tensor)
    irdl.results(ref: %ref, out_crd: %crd)
    irdl.attributes { "level" = %int }
  }

  // Repeat-signal generator: data or N -> R, S_k -> S, D -> D.
  irdl.operation @repsiggen {
    %crd = irdl.parametric @sam::@crd<>
    %sig = irdl.parametric @sam::@repsig<>
    irdl.operands(crd: %crd)
    irdl.results(signal: %sig)
  }

  // Repeater: re-emits the current reference or value once per R.
  irdl.operation @repeat {
    %ref = irdl.parametric @sam::@ref<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %stream = irdl.any_of(%ref, %val)
    %sig = irdl.parametric @sam::@repsig<>
    irdl.operands(input: %stream, signal: %sig)
    irdl.results(output: %stream)
  }

  // n-ary intersecter: coordinates present in every input. `ref_groups[i]` references
  // travel with coordinate input i; all of them are emitted per output coordinate.
  // `val_groups[i]` value streams (fused intermediates) also travel with coordinate
  // input i, after its references; without `val_groups` there are none.
  irdl.operation @intersect {
    %ref = irdl.parametric @sam::@ref<>
    %crd = irdl.parametric @sam::@crd<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %groups = irdl.base "#builtin.dense_array"
    irdl.operands(crds: variadic %crd, refs: variadic %ref, vals: variadic %val)
    irdl.results(crd: %crd, out_refs: variadic %ref, out_vals: variadic %val)
    irdl.attributes { "ref_groups" = %groups }
  }

  // n-ary unioner: coordinates present in any input; N for the references of an input
  // that lacks the coordinate.
  // `val_groups[i]` value streams (fused intermediates) also travel with coordinate
  // input i, after its references; without `val_groups` there are none.
  irdl.operation @union {
    %ref = irdl.parametric @sam::@ref<>
    %crd = irdl.parametric @sam::@crd<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %groups = irdl.base "#builtin.dense_array"
    irdl.operands(crds: variadic %crd, refs: variadic %ref, vals: variadic %val)
    irdl.results(crd: %crd, out_refs: variadic %ref, out_vals: variadic %val)
    irdl.attributes { "ref_groups" = %groups }
  }

  // Value load: vals[ref]; N -> 0.0.
  irdl.operation @array {
    %ref = irdl.parametric @sam::@ref<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %tensor = irdl.any
    irdl.operands(ref: %ref, tensor: %tensor)
    irdl.results(val: %val)
  }

  // Arithmetic on one or two value streams; `scalar` (optional attribute) is the constant
  // operand of the scalar ops. `mask_fill(m, x)` is x where m != 0, else `scalar`.
  irdl.operation @alu {
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %add = irdl.is "add"
    %sub = irdl.is "sub"
    %mul = irdl.is "mul"
    %div = irdl.is "div"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %neg = irdl.is "neg"
    %exp = irdl.is "exp"
    %rsqrt = irdl.is "rsqrt"
    %sqrt = irdl.is "sqrt"
    %sigmoid = irdl.is "sigmoid"
    %tanh = irdl.is "tanh"
    %gelu = irdl.is "gelu"
    %relu = irdl.is "relu"
    %sadd = irdl.is "scalar_add"
    %ssub = irdl.is "scalar_sub"
    %srsub = irdl.is "scalar_rsub"
    %smul = irdl.is "scalar_mul"
    %sdiv = irdl.is "scalar_div"
    %srdiv = irdl.is "scalar_rdiv"
    %smax = irdl.is "scalar_max"
    %smin = irdl.is "scalar_min"
    %maskfill = irdl.is "mask_fill"
    %kind = irdl.any_of(%add, %sub, %mul, %div, %max, %min, %neg, %exp, %rsqrt, %sqrt, %sigmoid, %tanh, %gelu, %relu, %sadd, %ssub, %srsub, %smul, %sdiv, %srdiv, %smax, %smin, %maskfill)
    irdl.operands(lhs: %val, rhs: optional %val)
    irdl.results(out: %val)
    irdl.attributes { "op" = %kind }
  }

  // Reducer: sums (or maxes) each innermost fiber; removes one stop level. The optional outer
  // operand is the coordinate stream of the level above the reduced one: with it the reducer
  // tells an empty fiber (a coordinate: 0.0) from an empty outer fiber (a bare stop: no value).
  irdl.operation @reduce {
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %crd = irdl.parametric @sam::@crd<>
    %sum = irdl.is "sum"
    %max = irdl.is "max"
    %kind = irdl.any_of(%sum, %max)
    irdl.operands(input: %val, outer: optional %crd)
    irdl.results(output: %val)
    irdl.attributes { "kind" = %kind }
  }

  // Sparse accumulator of order n: reduces over the index variable n levels above the
  // innermost. Operands: the n coordinate streams below it (outer to inner) and the values;
  // results: those coordinates without the reduced level, flushed in sorted order.
  irdl.operation @spacc {
    %crd = irdl.parametric @sam::@crd<>
    %e = irdl.any
    %t = irdl.any
    %val = irdl.parametric @sam::@val<%e, %t>
    %int = irdl.base "#builtin.integer"
    irdl.operands(crds: variadic %crd, val: %val)
    irdl.results(out_crds: variadic %crd, out_val: %val)
    irdl.attributes { "order" = %int }
  }

  // Coordinate dropper: drops outer coordinates whose inner fiber is empty.
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

  // Level writer: builds level `level` of graph result `result` from a coordinate stream.
  irdl.operation @level_write {
    %crd = irdl.parametric @sam::@crd<>
    // One variable per attribute: IRDL binds a variable to a single value per op, so a shared
    // one would force `result == level`.
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
    %int = irdl.base "#builtin.integer"
    irdl.operands(val: %val)
    irdl.attributes { "result" = %int }
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

  // Join: merges lanes in lane order.
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
}

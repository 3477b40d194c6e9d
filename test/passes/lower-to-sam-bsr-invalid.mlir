// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(fuseflow-partition,fuseflow-schedule,fuseflow-lower-to-sam)'

// Tests that a compressed level over a dimension a BSR operand splits is reported, naming the
// operand, its level and the dimension (a compressed level cannot be split into blocks).
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @bsr_plus_csr(%A: tensor<4x4xf32, #BSR>, %B: tensor<4x4xf32, #CSR>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error @below {{operand #1 ('tensor<4x4xf32, #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>>') reads dimension 1 (variable d1, split into blocks of 2 by a blocked level of the kernel) with its compressed level 1; only dense levels can be split into blocks and offsets}}
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : tensor<4x4xf32, #BSR>, tensor<4x4xf32, #CSR>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Tests that two BSR operands blocking a shared dimension with different block sizes are
// reported, naming both.
#BSR2 = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#BSR3 = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 3 : dense, d1 floordiv 3 : compressed, d0 mod 3 : dense, d1 mod 3 : dense) }>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @block_mismatch(%A: tensor<6x6xf32, #BSR2>, %B: tensor<6x6xf32, #BSR3>) -> tensor<6x6xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x6xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
  // expected-error @below {{dimension variable d2 is blocked by 2 in operand #0}}
  %r = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<6x6xf32, #BSR2>, tensor<6x6xf32, #BSR3>) outs(%f : tensor<6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}

// -----

// Tests that a block size that does not divide the dimension is reported.
#BSR4 = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 4 : dense, d1 floordiv 4 : compressed, d0 mod 4 : dense, d1 mod 4 : dense) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @block_not_dividing(%A: tensor<6x8xf32, #BSR4>) -> tensor<6x8xf32> {
  %e = tensor.empty() : tensor<6x8xf32>
  // expected-error @below {{block size 4 of operand #0}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<6x8xf32, #BSR4>) outs(%e : tensor<6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<6x8xf32>
  return %r : tensor<6x8xf32>
}

// -----

// Tests that a BSR result blocked differently from its BSR operand is reported (the lowering
// writes blocked results natively, with the kernel's blocking).
#BSR2 = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#BSR4 = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 4 : dense, d1 floordiv 4 : compressed, d0 mod 4 : dense, d1 mod 4 : dense) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @result_blocking(%A: tensor<4x4xf32, #BSR2>) -> tensor<4x4xf32, #BSR4> {
  %e = tensor.empty() : tensor<4x4xf32, #BSR4>
  // expected-error @below {{and by 4 in result #0}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<4x4xf32, #BSR2>) outs(%e : tensor<4x4xf32, #BSR4>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32, #BSR4>
  return %r : tensor<4x4xf32, #BSR4>
}

// -----

// Tests that a result whose compressed level covers a split dimension is reported.
#BSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense) }>
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @csr_result(%A: tensor<4x4xf32, #BSR>) -> tensor<4x4xf32, #CSR> {
  %e = tensor.empty() : tensor<4x4xf32, #CSR>
  // expected-error @below {{result #0 ('tensor<4x4xf32, #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>>') writes dimension 1 (variable d1, split into blocks of 2 by a blocked level of the kernel) with its compressed level 1}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<4x4xf32, #BSR>) outs(%e : tensor<4x4xf32, #CSR>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32, #CSR>
  return %r : tensor<4x4xf32, #CSR>
}

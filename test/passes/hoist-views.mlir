// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=groups},fuseflow-hoist-views,fuseflow-verify-kernels)' | filecheck %s
// RUN: fuseflow-opt %s --split-input-file --pass-pipeline='builtin.module(fuseflow-normalize,fuseflow-partition{mode=groups},fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-lower-to-sam,sam-verify)' | filecheck %s --check-prefix=SAM

// Tests that a head split (slice, expand_shape, transpose) of a dense input leaves the kernel
// and runs on the host: the kernel reads the viewed tensor directly; the kernel that only
// transposed disappears.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @head_split
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 6] [8, 6] [1, 1]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [8, 2, 3]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<8x2x3xf32>) {{.*}} permutation = [1, 0, 2]
// CHECK: "fuse.kernel"(%[[T]], %arg1)
// CHECK-NOT: "fuse.kernel"
// CHECK: return
// SAM-LABEL: func.func @head_split
// SAM: linalg.transpose
// SAM-COUNT-1: "sam.graph"
// SAM-NOT: "sam.graph"
func.func @head_split(%qkv: tensor<8x12xf32>, %w: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  %s = tensor.extract_slice %qkv[0, 6] [8, 6] [1, 1] : tensor<8x12xf32> to tensor<8x6xf32>
  %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [8, 2, 3] : tensor<8x6xf32> into tensor<8x2x3xf32>
  %init = tensor.empty() : tensor<2x8x3xf32>
  %t = linalg.transpose ins(%e : tensor<8x2x3xf32>) outs(%init : tensor<2x8x3xf32>) permutation = [1, 0, 2]
  %r = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %w : tensor<2x8x3xf32>, tensor<2x8x3xf32>) outs(%init : tensor<2x8x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x3xf32>
  return %r : tensor<2x8x3xf32>
}

// -----

// Tests that views of sparse inputs stay in their kernel (one group here): the lowering reads the CSR levels
// in storage order (y[j] = sum_i A[i, j] x[i] through a sparse accumulator).
#CSR = #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @sparse_transpose_stays
// CHECK-NOT: linalg.transpose
// CHECK: "fuse.kernel"(%arg0, %arg1)
// CHECK-COUNT-2: linalg.generic
// SAM-LABEL: func.func @sparse_transpose_stays
// SAM-NOT: linalg.transpose
// SAM: "sam.spacc"
// SAM: fuseflow.einsum = "out0[d0] = sum_{d1}(mul(T0[d1,d0], T1[d1]))", fuseflow.schedule = {block = array<i64>, formats = {{.*}}, order = ["d1", "d0"]
func.func @sparse_transpose_stays(%a: tensor<4x6xf32, #CSR>, %x: tensor<4xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<6x4xf32>
  %t = linalg.generic {indexing_maps = [#tr2, #id2], iterator_types = ["parallel", "parallel"], fuseflow.group = "spmv_t"}
      ins(%a : tensor<4x6xf32, #CSR>) outs(%init : tensor<6x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<6x4xf32>
  %ye = tensor.empty() : tensor<6xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%ye : tensor<6xf32>) -> tensor<6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #out], iterator_types = ["parallel", "reduction"], fuseflow.group = "spmv_t"}
      ins(%t, %x : tensor<6x4xf32>, tensor<4xf32>) outs(%y0 : tensor<6xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %y : tensor<6xf32>
}

// -----

// Tests that the predicate `mask == 0` joins the kernel of the select reading it (an i1 tensor
// is never a kernel boundary), so masked_fill lowers to one graph in unfused mode.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @masked_fill
// CHECK: "fuse.kernel"(%arg0, %arg1)
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK-NOT: "fuse.kernel"
// SAM-LABEL: func.func @masked_fill
// SAM: "sam.alu"{{.*}} {op = "mask_fill", scalar = 0xFF800000 : f32}
func.func @masked_fill(%m: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %bi = tensor.empty() : tensor<4x4xi1>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x4xf32>) outs(%bi : tensor<4x4xi1>) {
  ^bb0(%x: f32, %o: i1):
    %c = arith.cmpf oeq, %x, %zero : f32
    linalg.yield %c : i1
  } -> tensor<4x4xi1>
  %init = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %s : tensor<4x4xi1>, tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) {
  ^bb0(%c: i1, %x: f32, %o: f32):
    %v = arith.select %c, %ninf, %x : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Tests that a view of a dense kernel result (a head merge: collapse_shape of what the kernel
// computes) is sunk: the kernel yields the 3-d value and the reshape runs after it.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @head_merge
// CHECK: %[[K:.*]] = "fuse.kernel"(%arg0, %arg1)
// CHECK: gpu.yield %{{.*}} : tensor<8x2x3xf32>
// CHECK: tensor.collapse_shape %[[K]] {{\[\[}}0], [1, 2]] : tensor<8x2x3xf32> into tensor<8x6xf32>
// SAM-LABEL: func.func @head_merge
// SAM: %[[G:.*]] = "sam.graph"
// SAM: tensor.collapse_shape %[[G]]
func.func @head_merge(%a: tensor<8x2x3xf32>, %b: tensor<8x2x3xf32>) -> tensor<8x6xf32> {
  %init = tensor.empty() : tensor<8x2x3xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"], fuseflow.group = "merge"}
      ins(%a, %b : tensor<8x2x3xf32>, tensor<8x2x3xf32>) outs(%init : tensor<8x2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.addf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<8x2x3xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2]] : tensor<8x2x3xf32> into tensor<8x6xf32>
  return %c : tensor<8x6xf32>
}

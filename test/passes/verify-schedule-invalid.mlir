// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics --fuseflow-verify-schedule

// The verifier rejects, at the kernel, every schedule that is missing, malformed or illegal.

// Tests that the verifier rejects a kernel without a schedule.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @missing(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{kernel 'k0' has no 'fuseflow.schedule' attribute; run fuseflow-schedule first}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects an order that reads B's levels out of storage order, listing the legal orders best first.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @illegal_order(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{schedule of kernel 'k0': order (d0, d1, d2) visits the levels of T1[d2,d1] out of storage order; legal orders: d0,d2,d1; d2,d0,d1}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1", "d2"], parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects an order that is not a permutation of the kernel's variables.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @not_permutation(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{schedule of kernel 'k0': order (d0, d1) must be a permutation of the kernel's index variables (d0, d1, d2); legal orders: d0,d2,d1; d2,d0,d1}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d1"], parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects a parallel variable the kernel does not have.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @parallel_variable(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{schedule of kernel 'k0': parallel variable d7 is not an index variable of the kernel (d0, d1, d2)}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = [["d7", 2]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects a parallel factor below 1.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @parallel_factor(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{schedule of kernel 'k0': parallel factor 0 of d0 must be >= 1}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = [["d0", 0]]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects a non-positive block size.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @block(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{schedule of kernel 'k0': block sizes must be positive, got (4, 0)}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64: 4, 0>, formats = ["dense"], order = ["d0", "d2", "d1"], parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects formats that are not the results'.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @formats(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{schedule of kernel 'k0': formats (csr) are not the formats of the kernel's results (dense); they are read-only}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {block = array<i64>, formats = ["csr"], order = ["d0", "d2", "d1"], parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects a schedule that is not a dictionary.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @not_dictionary(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{'fuseflow.schedule' must be a dictionary}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = ["d0", "d2", "d1"], name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects a schedule without an order.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @no_order(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{'fuseflow.schedule' has no 'order'}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {parallel = []}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects an unknown field.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @unknown_field(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{unknown 'fuseflow.schedule' field(s) tile; valid fields: block, formats, order, parallel}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {order = ["d0", "d2", "d1"], tile = 4}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

// -----

// Tests that the verifier rejects parallel entries that are not [variable, factor] pairs.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @bad_parallel(%A: tensor<4x5xf32>, %B: tensor<5x3xf32, #CSR>) -> tensor<4x3xf32> {
  // expected-error @below {{'fuseflow.schedule' field 'parallel' must be an array}}
  %k = "fuse.kernel"(%A, %B) ({
  ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x3xf32, #CSR>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32, #CSR>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    "gpu.yield"(%r) : (tensor<4x3xf32>) -> ()
  }) {fuseflow.schedule = {order = ["d0", "d2", "d1"], parallel = ["d0"]}, name = "k0", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x5xf32>, tensor<5x3xf32, #CSR>) -> tensor<4x3xf32>
  return %k : tensor<4x3xf32>
}

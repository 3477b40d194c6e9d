// RUN: fuseflow-opt %s --split-input-file --verify-diagnostics
// RUN: not fuseflow-opt %s --split-input-file 2>&1 | filecheck %s

// Tests that a '#sparse_tensor.encoding' without a 'map' entry, which crashes MLIR's parser
// (a null dereference), is reported as a located error before the text is parsed.
// CHECK: sparse-encoding-without-map.mlir:[[# @LINE + 2]]:8: error: '#sparse_tensor.encoding' needs a 'map' entry
// expected-error @below {{'#sparse_tensor.encoding' needs a 'map' entry}}
#CSR = #sparse_tensor.encoding<{}>

// -----

// Tests that other entries without 'map' are caught too, in an inline type.
// expected-error @below {{needs a 'map' entry}}
func.func @f(%a: tensor<4xf32, #sparse_tensor.encoding<{ posWidth = 32 }>>) {
  return
}

// -----

// Tests that an encoding with a map, and encodings in comments or strings, are left alone:
// #sparse_tensor.encoding<{}>
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32 }>
func.func @g(%a: tensor<4x4xf32, #CSR>) attributes {note = "#sparse_tensor.encoding<{}>"} {
  return
}

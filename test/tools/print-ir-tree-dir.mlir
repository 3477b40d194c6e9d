// RUN: rm -rf %t.dir
// RUN: fuseflow-opt %s --mlir-print-ir-after-all --mlir-print-ir-tree-dir=%t.dir/dumps --canonicalize --sam-verify -o %t 2>&1 | filecheck %s --check-prefix=STDERR --allow-empty
// RUN: filecheck %s --check-prefix=FIRST < %t.dir/dumps/builtin_module_no-symbol-name/0_canonicalize.mlir
// RUN: filecheck %s --check-prefix=SECOND < %t.dir/dumps/builtin_module_no-symbol-name/1_sam-verify.mlir
// RUN: not fuseflow-opt %s --mlir-print-ir-tree-dir=%t.dir --canonicalize 2>&1 | filecheck %s --check-prefix=ALONE

// Tests that --mlir-print-ir-tree-dir writes the dumps to one file per pass under the folder
// (created with its parents) instead of stderr, and that it needs a --mlir-print-ir-* flag.
// STDERR-NOT: IR Dump
// FIRST: func.func @f
// FIRST-NOT: arith.addi
// SECOND: func.func @f
// ALONE: fuseflow-opt: error: --mlir-print-ir-tree-dir needs one of --mlir-print-ir-after-all
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.addi %a, %a : i32
  return %b : i32
}

// RUN: fuseflow-opt %s --dump-pass-pipeline --canonicalize --fuseflow-to-kernels -o %t 2>&1 | filecheck %s

// Tests that --dump-pass-pipeline prints the pipeline that runs, named pipelines expanded and
// options that differ from their defaults shown, before running it.
// CHECK: Pass Manager with 9 passes:
// CHECK-NEXT: builtin.module(canonicalize,func.func(linalg-generalize-named-ops),canonicalize,cse,fuseflow-partition,fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-verify-schedule)
func.func @f() {
  return
}

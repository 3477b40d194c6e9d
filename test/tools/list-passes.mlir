// RUN: fuseflow-opt --list-passes | filecheck %s
// RUN: fuseflow-opt --help | filecheck %s --check-prefixes=HELP
// RUN: fuseflow-opt -h | filecheck %s --check-prefixes=HELP

// Tests that --list-passes lists every registered pass with its summary and options, and the
// named pipelines with what they expand to; --help shows the flags and the same list.
// CHECK-LABEL: FuseFlow passes:
// CHECK: --fuseflow-hoist-views {{.*}} - Moves slices, reshapes and transposes of dense kernel inputs
// CHECK: --fuseflow-partition {{.*}} - Groups linalg ops into fuse.kernel regions
// CHECK-NEXT: mode=<{{.*}}unfused{{.*}}> (default: unfused)
// CHECK: --fuseflow-schedule {{.*}} - Sets the fuseflow.schedule of every fuse.kernel
// CHECK-NEXT: kernel=<str> (default: )
// CHECK-NEXT: order=<str,...> (default: none)
// CHECK-NEXT: parallel=<str,...> (default: none)
// CHECK-NEXT: block=<int,...> (default: none)
// CHECK: --fuseflow-verify-kernels {{.*}} - Checks that every linalg op is inside a fuse.kernel
// CHECK: --fuseflow-verify-schedule {{.*}} - Checks that every fuse.kernel has a legal fuseflow.schedule
// CHECK: --sam-parallelize {{.*}} - Forks each sam.graph's schedule's parallel levels into lanes
// CHECK: --sam-verify {{.*}} - Checks that only dataflow graphs are left
// CHECK-LABEL: Named pipelines:
// CHECK: --fuseflow-kernels-to-dataflow{{ *}} - fuseflow-verify-schedule,fuseflow-lower-to-sam,sam-parallelize,sam-verify
// CHECK: --fuseflow-to-dataflow {{.*}} - fuseflow-to-kernels,fuseflow-kernels-to-dataflow
// CHECK: --fuseflow-to-kernels {{.*}} - fuseflow-normalize,fuseflow-partition,fuseflow-hoist-views,fuseflow-verify-kernels,fuseflow-schedule,fuseflow-verify-schedule
// HELP: usage: fuseflow-opt
// HELP: --pass-pipeline PIPELINE
// HELP: --split-input-file MARKER
// HELP: --verify-diagnostics
// HELP: --mlir-pass-pipeline-crash-reproducer FILE
// HELP: FuseFlow passes:
// HELP: --sam-verify

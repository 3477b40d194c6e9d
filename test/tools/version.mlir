// RUN: fuseflow-opt --version | filecheck %s

// Tests that --version prints the tool's version and the MLIR it is built on, and exits.
// CHECK: fuseflow-opt (FuseFlow) {{[0-9]+\.[0-9]+}}
// CHECK-NEXT: MLIR from torch-mlir {{[0-9]+}}

// RUN: fuseflow-opt --show-dialects | filecheck %s

// Tests that --show-dialects lists the registered dialects, FuseFlow's among them, and exits.
// CHECK: Available Dialects: {{.*}}arith{{.*}}, fuse,{{.*}} linalg,{{.*}} sam,{{.*}} sparse_tensor,{{.*}}tensor

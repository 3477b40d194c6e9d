"""FuseFlow's own fuzzers: random PyTorch models checked against PyTorch (:mod:`.models`),
random and mutated ``linalg.generic`` kernels for ``fuseflow-opt`` (:mod:`.kernels`), run in
an isolated worker (:mod:`.isolate`) and classified (:mod:`.outcome`)."""

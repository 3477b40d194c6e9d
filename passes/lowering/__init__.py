"""Lowering of fused kernels to SAM dataflow graphs: index notation, dataflow order, graph
building."""

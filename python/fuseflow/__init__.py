"""FuseFlow: cross-expression fusion of sparse ML models onto streaming dataflow hardware."""

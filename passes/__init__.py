"""FuseFlow passes: one pass per module, registered in :mod:`fuseflow.passes.registry`."""

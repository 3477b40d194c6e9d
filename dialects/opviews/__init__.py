"""Python modules of our dialects' op classes, one per namespace (``sam``, ``fuse``).

The MLIR bindings look up a Python module named after an op's dialect whenever they hand out
that op (``<search prefix>.<namespace>``) and cache only modules that import: without these,
every access to a ``sam`` or ``fuse`` op retried a failing ``import torch_mlir.dialects.sam``
(thousands of import-system searches per compile). The ops are IRDL-defined and have no
generated OpView classes, so the modules are empty; :func:`fuseflow.mlir.new_context`
registers this package as a search prefix.
"""

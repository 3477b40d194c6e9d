"""The `fuse` dialect's Python module: IRDL-defined, no OpView classes (see the package)."""

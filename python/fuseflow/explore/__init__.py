"""Design-space exploration: a static cost model of compiled kernels (``docs/costmodel.md``).

``predict(compiled, *inputs)`` predicts tokens per stream, operations, bytes and cycles of
every kernel without simulating, from statistics of the inputs measured from data or given by
a density model; ``prune(predictions)`` drops candidate configurations predicted dominated;
``explore(model, inputs, plan)`` searches fusion partitions, orders and reassociations with
the cost model and simulates the best on Dask (``docs/explore.md``).
"""

import sys
import types

from fuseflow.explore.costmodel import (
    CostModel,
    CostModelError,
    Density,
    Measured,
    MeasuredCache,
    predict,
)
from fuseflow.explore.explorer import Exploration, explore
from fuseflow.explore.kernel import predict_graph
from fuseflow.explore.prediction import BlockPrediction, KernelPrediction, Prediction
from fuseflow.explore.prune import Decision, prune
from fuseflow.explore.stats import LevelStats, TensorStats

__all__ = [
    "BlockPrediction", "CostModel", "CostModelError", "Decision", "Density", "Exploration",
    "KernelPrediction", "LevelStats", "Measured", "MeasuredCache", "Prediction", "TensorStats", "explore",
    "predict", "predict_graph", "prune",
]


class _CallablePackage(types.ModuleType):
    """``fuseflow.explore`` is this package, and ``fuseflow.explore(model, inputs, ...)``
    calls :func:`explore`: importing the subpackage makes it the ``explore`` attribute of
    ``fuseflow``, so the package itself is made callable rather than shadowed."""

    def __call__(self, *args, **kwargs) -> Exploration:
        return explore(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage

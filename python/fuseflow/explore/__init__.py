"""Design-space exploration: a static cost model of compiled kernels (``docs/costmodel.md``).

``predict(compiled, *inputs)`` predicts tokens per stream, operations, bytes and cycles of
every kernel without simulating, from statistics of the inputs measured from data or given by
a density model; ``prune(predictions)`` drops candidate configurations predicted dominated.
"""

from fuseflow.explore.costmodel import CostModel, CostModelError, Density, Measured, predict
from fuseflow.explore.kernel import predict_graph
from fuseflow.explore.prediction import BlockPrediction, KernelPrediction, Prediction
from fuseflow.explore.prune import Decision, prune
from fuseflow.explore.stats import LevelStats, TensorStats

__all__ = [
    "BlockPrediction", "CostModel", "CostModelError", "Decision", "Density", "KernelPrediction",
    "LevelStats", "Measured", "Prediction", "TensorStats", "predict", "predict_graph", "prune",
]

"""A digest of each point's repeated prediction, to compare two checkouts bit for bit: per
point, a hash of every kernel's totals and result statistics (arrays by dtype, shape and
bytes; the ``weighted`` memo of a level left out), and the predicted tokens and cycles.

    python bench/predict_digest.py gcn/cora/partial graphsage/cora/partial > this.txt
    (cd /work/main && python /path/to/bench/predict_digest.py ...) > main.txt; diff main.txt this.txt
"""

from __future__ import annotations

import hashlib
import pickle
import sys

import numpy as np


def plain(value):
    """``value`` as nested tuples of its arrays' bytes, numbers and objects' fields."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    fields = {name: getattr(value, name) for name in getattr(value, "__slots__", ()) or ()
              if hasattr(value, name)}
    fields.update(getattr(value, "__dict__", {}))
    if not fields:
        return repr(value)
    fields.pop("weighted", None)
    return (type(value).__name__, tuple(sorted((k, plain(v)) for k, v in fields.items())))


def main(points: list[str]) -> None:
    from bench_common import compiled_points

    for point, cost_model, measured in compiled_points(points):
        prediction = cost_model.predict(*measured, reuse=False)
        digest = hashlib.sha256(pickle.dumps(plain([k._values for k in prediction.kernels])))
        print(point, digest.hexdigest()[:16], repr(sum(k.tokens for k in prediction.kernels)),
              repr(prediction.cycles), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Statistics are JSON-ready whichever engine and mode counted them (a chunked fast run
summed numpy integers, and ``fuseflow run --json`` then failed on a published-size graph)."""

import json

import pytest
from test_sim_engine import spmv_graph, spmv_inputs

from fuseflow.sim.engines import run


@pytest.mark.parametrize("mode", [{"engine": "reference"}, {"engine": "fast"},
                                  {"engine": "fast", "chunk_tokens": 3}],
                         ids=["reference", "fast", "chunked"])
def test_statistics_are_plain_python_numbers(mode):
    result = run(spmv_graph(), spmv_inputs(), **mode)
    blocks = [b.to_dict() for b in result.blocks.values()]
    doc = {"summary": result.summary(), "blocks": blocks}
    assert json.loads(json.dumps(doc)) == doc

    def plain(value):
        if isinstance(value, dict):
            return all(plain(v) for v in value.values())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return type(value) in (int, float, str, bool)
    assert plain(doc)

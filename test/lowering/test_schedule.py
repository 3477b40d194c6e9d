"""The typed kernel schedule (passes/schedule.py) and result format names (dialects/types.py)."""

import pytest

from fuseflow import mlir
from fuseflow.dialects.types import format_name
from fuseflow.passes.base import PipelineError
from fuseflow.passes.schedule import KernelSchedule, ScheduleError, SchedulePass
from fuseflow.pipeline import Pipeline


def test_a_schedule_round_trips_through_its_attribute():
    schedule = KernelSchedule(("d0", "d2", "d1"), (("d0", 4), ("d1", 2)), (4, 4),
                              ("csr", "dense"))
    with mlir.new_context():
        attr = schedule.to_attr()
        assert str(attr) == ('{block = array<i64: 4, 4>, formats = ["csr", "dense"], order = '
                             '["d0", "d2", "d1"], parallel = [["d0", 4], ["d1", 2]]}')
        assert KernelSchedule.from_attr(mlir.Attribute.parse(str(attr))) == schedule
        assert KernelSchedule.from_attr(mlir.Attribute.parse('{order = ["d1"]}')) == \
            KernelSchedule(("d1",))


@pytest.mark.parametrize("text, message", [
    ('["d0"]', "must be a dictionary"),
    ('{block = array<i64>}', "has no 'order'"),
    ('{order = ["d0"], tile = 2}', "unknown 'fuseflow.schedule' field(s) tile; valid fields: "
                                   "block, formats, order, parallel"),
    ('{order = [0]}', "field 'order' must hold strings"),
    ('{order = ["d0"], parallel = [["d0"]]}', "must hold [variable, factor] pairs"),
    ('{order = ["d0"], parallel = [["d0", "x"]]}', "field 'parallel' must hold integers"),
    ('{order = ["d0"], block = [4]}', "field 'block' must be an array<i64>"),
])
def test_a_malformed_schedule_is_a_located_error(text, message):
    with mlir.new_context():
        loc = mlir.Location.file("model.py", 12, 3)
        with pytest.raises(ScheduleError) as err:
            KernelSchedule.from_attr(mlir.Attribute.parse(text), loc)
    assert message in err.value.message and err.value.location == str(loc)


def test_schedule_pass_options_parse_and_replay():
    text = "fuseflow-schedule{kernel=k1 order=d0,d2,d1 parallel=d0:4,d1:2 block=4,4}"
    (p,) = Pipeline.parse(f"builtin.module({text})").steps
    assert p == SchedulePass(kernel="k1", order=("d0", "d2", "d1"), parallel=("d0:4", "d1:2"),
                             block=(4, 4))
    assert p.overrides() == {"order": ("d0", "d2", "d1"), "parallel": (("d0", 4), ("d1", 2)),
                             "block": (4, 4)}
    assert p.pipeline_text() == text
    assert SchedulePass().pipeline_text() == "fuseflow-schedule"


@pytest.mark.parametrize("value", ["d0", "d0:x", ":4", "d0:4,d1"])
def test_a_parallel_option_that_is_not_variable_colon_factor_is_rejected(value):
    with pytest.raises(PipelineError, match="invalid value '.*' for option 'parallel' of pass "
                                            "'fuseflow-schedule'; expected <variable>:<factor>"):
        Pipeline.parse(f"builtin.module(fuseflow-schedule{{parallel={value}}})")


@pytest.mark.parametrize("encoding, name", [
    (None, "dense"),
    ("map = (d0, d1) -> (d0 : dense, d1 : compressed)", "csr"),
    ("map = (d0, d1) -> (d1 : dense, d0 : compressed)", "csc"),
    ("map = (d0, d1) -> (d0 : compressed, d1 : compressed)", "dcsr"),
    ("map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)", "coo"),
    ("map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 3 : compressed, d0 mod 2 : dense, "
     "d1 mod 3 : dense)", "bsr:2x3"),
    ("map = (d0, d1) -> (d0 : dense, d1 : dense)", "#sparse_tensor.encoding<{ map = (d0, d1) "
                                                   "-> (d0 : dense, d1 : dense) }>"),
])
def test_format_names_of_result_types(encoding, name):
    with mlir.new_context():
        enc = f", #sparse_tensor.encoding<{{ {encoding} }}>" if encoding else ""
        assert format_name(mlir.Type.parse(f"tensor<4x6xf32{enc}>")) == name

"""The MLIR location parser: names and frames of every location form, and its errors."""

import pytest

from fuseflow.viz.locations import Frame, LocationSyntaxError, parse_location


def test_callsite_lists_the_callee_frame_first():
    loc = parse_location('loc(callsite("/m/model.py":4:0 at "/f/frontend.py":60:0))')
    assert loc.frames == (Frame("/m/model.py", 4, 0), Frame("/f/frontend.py", 60, 0))
    assert loc.names == ()


def test_name_fused_and_unknown_locations():
    loc = parse_location('loc(fused<"fuseflow">["linalg.matmul"(callsite("a.py":3:5 at '
                         'unknown)), "mul_1", "b.py":7:1 to 7:9])')
    assert loc.names == ("linalg.matmul", "mul_1")
    assert loc.frames == (Frame("a.py", 3, 5), Frame("b.py", 7, 1))
    assert parse_location("loc(unknown)").frames == ()
    assert parse_location('loc("x.py":2:3 to :8)').frames == (Frame("x.py", 2, 3),)


def test_escaped_characters_in_strings():
    loc = parse_location(r'loc("say \"hi\"\0A"("f.py":1:2))')
    assert loc.names == ('say "hi"\n',)


def test_source_frame_skips_frames_of_files_that_do_not_exist():
    loc = parse_location(f'loc(callsite("fuseflow-kernel:g0":1:0 at "{__file__}":12:0))')
    assert loc.source_frame() == Frame(__file__, 12, 0)
    assert loc.source_line() == open(__file__).read().splitlines()[11].strip()


@pytest.mark.parametrize("text", ['loc(callsite("a":1:2))', 'loc("a":x:1)', "loc(unknown) x",
                                  'loc(fused["a":1:2)'])
def test_malformed_locations_are_errors_naming_the_text(text):
    with pytest.raises(LocationSyntaxError, match="location"):
        parse_location(text)

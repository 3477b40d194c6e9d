"""The reducer's optional outer-coordinate input: an empty fiber vs. an empty outer fiber."""

import pytest

from fuseflow.sim.tokens import SimulationError, StreamError
from sim_helpers import out1


def test_without_outer_a_bare_stop_reads_as_an_empty_fiber():
    # rows [1 2] and [] under one outer fiber, then an outer fiber with no rows at all
    assert out1("reduce", ["1.0 2.0 S0 S1 S1 D"]) == "3.0 0.0 S0 0.0 S0 D"


def test_with_outer_an_empty_outer_fiber_yields_no_value():
    # outer: two coordinates in the first fiber, none in the second
    got = out1("reduce", ["1.0 2.0 S0 S1 S1 D", "0 1 S0 S0 D"])
    assert got == "3.0 0.0 S0 S0 D"


def test_with_outer_empty_fibers_under_coordinates_still_give_zero():
    got = out1("reduce", ["S0 4.0 S1 D", "2 5 S0 D"], kind="max")
    assert got == "0.0 4.0 S0 D"


def test_outer_coordinates_out_of_step_with_the_values_are_an_error():
    with pytest.raises((SimulationError, StreamError), match="outer coordinates"):
        out1("reduce", ["1.0 S1 D", "S0 D"])   # a value inside an outer fiber with no coordinate

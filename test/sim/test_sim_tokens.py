"""Tokens: parsing, printing, identity."""

import pickle

import numpy as np
import pytest

from fuseflow.sim.tokens import (DONE, EMPTY, REPEAT, Stop, format_stream, is_control, is_data, is_stop,
                                 parse_token, stream)


def test_stream_round_trip():
    toks = stream("0 1 S0 S2 D N R 1.5 -2.0")
    assert toks == [0, 1, Stop(0), Stop(2), DONE, EMPTY, REPEAT, 1.5, -2.0]
    assert format_stream(toks) == "0 1 S0 S2 D N R 1.5 -2.0"


def test_bare_s_is_stop_zero_and_numpy_payloads_print_plainly():
    assert parse_token("S") == Stop(0)
    assert format_stream([np.int64(3), np.float32(0.5), np.float32(2.0)]) == "3 0.5 2.0"


def test_stops_are_interned_hashable_and_immutable():
    assert Stop(3) is Stop(3)
    assert len({Stop(1), Stop(1), DONE, EMPTY}) == 3
    assert pickle.loads(pickle.dumps(Stop(2))) is Stop(2)
    assert pickle.loads(pickle.dumps(DONE)) is DONE
    with pytest.raises(AttributeError):
        Stop(1).level = 2
    with pytest.raises(ValueError):
        Stop(-1)


def test_predicates():
    assert is_stop(Stop(0)) and not is_stop(0) and not is_stop(DONE)
    assert is_data(3) and is_data(0.5) and not is_data(EMPTY) and not is_data(Stop(0))
    assert is_control(EMPTY) and is_control(REPEAT) and not is_control(7)
    assert Stop(0) != 0 and DONE != Stop(0)


def test_parse_error_lists_the_alphabet():
    with pytest.raises(ValueError, match="S<k>, D, N or R"):
        parse_token("X1")

"""Arguments of the public entries are checked: a FuseFlowError (ArgumentError, also a
TypeError and ValueError) naming the argument and what it accepts, never a later crash."""

import pytest

import fuseflow
from fuseflow.errors import ArgumentError, FuseFlowError
from fuseflow.sim.arch import Arch


@pytest.mark.parametrize("fields, message", [
    ({"latency": 1.5}, r"^latency must be an int >= 1, got 1.5$"),
    ({"latency": 0}, r"latency must be an int >= 1"),
    ({"initiation_interval": True}, r"initiation_interval must be an int >= 0"),
    ({"fifo_depth": 2.0}, r"fifo_depth \(None: unbounded\) must be an int >= 1"),
    ({"block_costs": {"alu": (1.5, 1)}}, r"block_costs\['alu'\] latency must be an int"),
    ({"block_costs": {"alu": 3}}, r"block_costs\['alu'\] must be a pair"),
    ({"block_costs": {"scanner": (1, 1)}}, r"unknown block kind 'scanner'.*valid kinds: "),
    ({"memory": 64}, r"memory must be None or a MemoryModel"),
])
def test_arch_fields_are_checked(fields, message):
    with pytest.raises(ArgumentError, match=message) as info:
        Arch(**fields)
    assert isinstance(info.value, FuseFlowError)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_arch_of_accepts_an_arch_or_none_and_names_a_dict():
    assert Arch.of(None) == Arch()
    arch = Arch(latency=2)
    assert Arch.of(arch) is arch
    with pytest.raises(ArgumentError, match=r"fuseflow.Arch\(\*\*fields\)\), got dict"):
        Arch.of({"latency": 2})


def test_arch_is_exported():
    assert fuseflow.Arch is Arch

"""Per-kernel schedule settings: parsing and how keys find kernels."""

import pytest

from fuseflow.errors import ArgumentError
from fuseflow.kernel_settings import KernelSettings, check_kernel_keys, resolve_kernel


def test_settings_accept_the_documented_spellings():
    assert KernelSettings.of("d1, d0").order == ("d1", "d0")
    assert KernelSettings.of(("d1", "d0")).order == ("d1", "d0")
    s = KernelSettings.of({"order": "d0,d1", "parallel": {"d0": 4}, "block": 4})
    assert s == KernelSettings(("d0", "d1"), (("d0", 4),), (4, 4))
    assert KernelSettings(parallel="d0:2,d1:4").parallel == (("d0", 2), ("d1", 4))
    assert KernelSettings(block="2x8").block == (2, 8)
    assert s.pass_options() == {"order": "d0,d1", "parallel": "d0:4", "block": "4,4"}
    assert not KernelSettings()


@pytest.mark.parametrize("value, message", [
    ({"orders": "d0"}, "unknown fields \\['orders'\\]; valid fields: order, parallel, block"),
    ({"parallel": {"d0": "4"}}, "parallel must map loop names to lane counts"),
    ({"parallel": "d0"}, "'var:factor' items"),
    ({"block": "4xq"}, "tile shape"),
    (3.5, "must be a KernelSettings"),
])
def test_bad_settings_name_the_problem(value, message):
    with pytest.raises(ArgumentError, match=message):
        KernelSettings.of(value, "k0")


def test_keys_must_be_names_or_indices():
    with pytest.raises(ArgumentError, match="must map kernel names"):
        check_kernel_keys([("k0", "d0")])
    with pytest.raises(ArgumentError, match="key 1.5"):
        check_kernel_keys({1.5: "d0"})
    assert check_kernel_keys({"k0": "d0", 1: {"order": "d1"}})[1].order == ("d1",)


NAMES = ["g0:layer1", "g1:layer2+softmax", "single:relu"]
ENTRIES = {"g0:layer1": ("layer1",), "g1:layer2+softmax": ("layer2", "softmax")}


@pytest.mark.parametrize("key, kernel", [
    ("g0:layer1", "g0:layer1"), ("softmax", "g1:layer2+softmax"), (0, "g0:layer1"),
    (-1, "single:relu"), ("single:relu", "single:relu"),
])
def test_keys_resolve_by_name_entry_and_index(key, kernel):
    assert resolve_kernel(key, NAMES, ENTRIES) == kernel


def test_unknown_keys_list_the_valid_ones():
    with pytest.raises(ArgumentError, match="no kernel named 'layer3'; valid names: "
                                            "'g0:layer1', .*'layer2', 'softmax'"):
        resolve_kernel("layer3", NAMES, ENTRIES)
    with pytest.raises(ArgumentError, match="index 3 is out of range; the model has 3 kernels"):
        resolve_kernel(3, NAMES, ENTRIES)
    with pytest.raises(ArgumentError, match="entries of several kernels"):
        resolve_kernel("x", ["a", "b"], {"a": ("x",), "b": ("x",)})

"""Command-line settings of the simulator and the compiler: ``--arch`` and ``--formats``.

``--arch KEY=VALUE[,KEY=VALUE...]`` (repeatable) sets :class:`fuseflow.Arch` fields:

* ``fifo_depth=N`` (or ``none``: unbounded), ``latency=N``, ``initiation_interval=N``;
* ``cost.<kind>=LATENCY:INTERVAL``: the timing of one block kind (``alu``, ``reduce``, ...);
* ``memory=on|off`` and ``memory.<field>=VALUE`` (:class:`fuseflow.MemoryModel` fields:
  ``bandwidth_bytes_per_cycle``, ``latency_cycles``, ``overlap``, ``index_bytes``,
  ``value_bytes``); any ``memory.*`` setting turns the memory model on.

``--formats NAME=FORMAT[,NAME=FORMAT...]`` declares inputs or parameters sparse
(:class:`fuseflow.Schedule` ``formats``). Every error names the key and the valid choices.
"""

from __future__ import annotations

import dataclasses
import typing

from fuseflow.sim.arch import Arch
from fuseflow.sim.graph import BLOCK_KINDS
from fuseflow.sim.memory import MemoryModel


class OptionError(ValueError):
    """A command-line option value that cannot be used; the message names it."""


_ARCH_SCALARS = ("fifo_depth", "latency", "initiation_interval")
_MEMORY_FIELDS = {f.name: f for f in dataclasses.fields(MemoryModel)}


def split_settings(values: list[str] | None, flag: str) -> dict[str, str]:
    """``KEY=VALUE`` pairs of a repeatable, comma-separated option; later keys win."""
    settings: dict[str, str] = {}
    for value in values or ():
        for item in value.split(","):
            key, eq, text = item.partition("=")
            if not eq or not key.strip() or not text.strip():
                raise OptionError(f"{flag}: expected KEY=VALUE, got '{item}'")
            settings[key.strip()] = text.strip()
    return settings


def parse_arch(values: list[str] | None) -> Arch:
    """The :class:`Arch` of the ``--arch`` settings (the default ``Arch()`` without any)."""
    settings = split_settings(values, "--arch")
    scalars, costs, memory_fields = {}, {}, {}
    memory_on = False
    for key, text in settings.items():
        if key in _ARCH_SCALARS:
            if key == "fifo_depth" and text.lower() in ("none", "unbounded"):
                scalars[key] = None
            else:
                scalars[key] = _parse_int(text, f"--arch {key}")
        elif key.startswith("cost."):
            kind = key[len("cost."):]
            if kind not in BLOCK_KINDS:
                raise OptionError(f"--arch {key}: unknown block kind '{kind}'; valid kinds: "
                                  f"{', '.join(BLOCK_KINDS)}")
            latency, colon, interval = text.partition(":")
            if not colon:
                raise OptionError(f"--arch {key}: expected LATENCY:INTERVAL, got '{text}'")
            costs[kind] = (_parse_int(latency, f"--arch {key} latency"),
                           _parse_int(interval, f"--arch {key} interval"))
        elif key == "memory":
            memory_on = _parse_bool(text, "--arch memory", ("on", "true"), ("off", "false"))
        elif key.startswith("memory.") and key[len("memory."):] in _MEMORY_FIELDS:
            field = _MEMORY_FIELDS[key[len("memory."):]]
            memory_fields[field.name] = _parse_typed(field, text, f"--arch {key}")
            memory_on = True
        else:
            raise OptionError(f"--arch: unknown setting '{key}'; valid settings: "
                              f"{', '.join(valid_arch_keys())}")
    if memory_fields and settings.get("memory", "on").lower() in ("off", "false"):
        raise OptionError("--arch: memory=off contradicts the memory.* settings given")
    try:
        memory = MemoryModel(**memory_fields) if memory_on else None
        return Arch(**scalars, block_costs=costs, memory=memory)
    except ValueError as err:
        raise OptionError(f"--arch: {err}") from None


def valid_arch_keys() -> list[str]:
    """Every ``--arch`` key, for error messages and help."""
    return [*_ARCH_SCALARS, "cost.<kind>", "memory",
            *(f"memory.{name}" for name in _MEMORY_FIELDS)]


def parse_formats(values: list[str] | None) -> dict[str, str]:
    """The ``--formats`` settings: input or parameter name -> format name."""
    return split_settings(values, "--formats")


def _parse_int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise OptionError(f"{what}: expected an integer, got '{text}'") from None


def _parse_bool(text: str, what: str, true=("true", "on"), false=("false", "off")) -> bool:
    if text.lower() in true:
        return True
    if text.lower() in false:
        return False
    raise OptionError(f"{what}: expected one of {', '.join(true + false)}, got '{text}'")


def _parse_typed(field: dataclasses.Field, text: str, what: str):
    hint = typing.get_type_hints(MemoryModel)[field.name]
    if hint is bool:
        return _parse_bool(text, what)
    if hint is int:
        return _parse_int(text, what)
    try:
        return float(text)
    except ValueError:
        raise OptionError(f"{what}: expected a number, got '{text}'") from None

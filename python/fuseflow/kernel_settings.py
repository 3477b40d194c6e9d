"""Per-kernel schedule settings of the API and how a setting's key finds its kernel.

``Schedule(kernels={key: settings})`` sets fields of single kernels' ``fuseflow.schedule``
beside the model-wide defaults. A key is

* a kernel's name as printed on its ``fuse.kernel`` (``"g1:layer2"``, ``"k3"``);
* a group entry the kernel was formed from: a stage of the application's plan, a submodule
  name or an FX node name listed in ``Schedule.fusion`` (``"layer2"``);
* or the kernel's index in program order (``0``, ``-1``).

Settings are a :class:`KernelSettings`, a dict of its fields, or just an order (a sequence of
loop names or ``"d0,d2,d1"``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseflow.errors import ArgumentError


def _loop_names(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ArgumentError(f"{what} must be loop names like ('d0', 'd2', 'd1') or 'd0,d2,d1', "
                        f"got {value!r}")


def _parallel(value, what: str) -> tuple[tuple[str, int], ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        pairs = []
        for item in (v.strip() for v in value.split(",") if v.strip()):
            var, _, factor = item.partition(":")
            if not factor.strip().isdigit():
                raise ArgumentError(f"{what} must be 'var:factor' items like 'd0:4', got {item!r}")
            pairs.append((var.strip(), int(factor)))
        return tuple(pairs)
    items = value.items() if isinstance(value, dict) else value
    try:
        pairs = tuple((var, factor) for var, factor in items)
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or not all(isinstance(v, str) and isinstance(f, int)
                                and not isinstance(f, bool) for v, f in pairs):
        raise ArgumentError(f"{what} must map loop names to lane counts, e.g. {{'d0': 4}} or "
                            f"[('d0', 4)], got {value!r}")
    return pairs


def _block(value, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, str):
        parts = [p.strip() for p in value.replace(",", "x").split("x") if p.strip()]
        if all(p.isdigit() for p in parts):
            return tuple(int(p) for p in parts)
    elif isinstance(value, (tuple, list)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise ArgumentError(f"{what} must be a tile shape like (4, 4), 4 or '4x4', got {value!r}")


@dataclass(frozen=True)
class KernelSettings:
    """Fields of one kernel's schedule to set; empty fields keep the kernel's defaults.

    ``order``: loop names in dataflow order; ``parallel``: (loop name, lanes) pairs;
    ``block``: tile shape. The verifier (``fuseflow-verify-schedule``) checks them against
    the kernel and lists the legal orders when one is not.
    """

    order: tuple[str, ...] = ()
    parallel: tuple[tuple[str, int], ...] = ()
    block: tuple[int, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "order", _loop_names(self.order, "KernelSettings.order"))
        object.__setattr__(self, "parallel",
                           _parallel(self.parallel, "KernelSettings.parallel"))
        object.__setattr__(self, "block", _block(self.block, "KernelSettings.block"))

    @classmethod
    def of(cls, value, key=None) -> "KernelSettings":
        """Settings from a :class:`KernelSettings`, a dict of its fields or an order."""
        what = f"Schedule.kernels[{key!r}]" if key is not None else "kernel settings"
        if isinstance(value, KernelSettings):
            return value
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"order", "parallel", "block"})
            if unknown:
                raise ArgumentError(f"{what}: unknown fields {unknown}; valid fields: order, "
                                    "parallel, block")
            return cls(**value)
        if isinstance(value, (str, tuple, list)):
            return cls(order=_loop_names(value, f"{what} (an order)"))
        raise ArgumentError(f"{what} must be a KernelSettings, a dict with order/parallel/block "
                            f"or an order, got {type(value).__name__}")

    def pass_options(self) -> dict[str, str]:
        """The ``fuseflow-schedule`` options that set these fields."""
        options = {}
        if self.order:
            options["order"] = ",".join(self.order)
        if self.parallel:
            options["parallel"] = ",".join(f"{v}:{f}" for v, f in self.parallel)
        if self.block:
            options["block"] = ",".join(str(b) for b in self.block)
        return options

    def __bool__(self) -> bool:
        return bool(self.order or self.parallel or self.block)


def check_kernel_keys(kernels) -> dict:
    """``Schedule.kernels`` checked: keys are names (str) or indices (int)."""
    if kernels is None:
        return {}
    if not isinstance(kernels, dict):
        raise ArgumentError("Schedule.kernels must map kernel names, group names or indices to "
                            f"settings, got {type(kernels).__name__}")
    out = {}
    for key, value in kernels.items():
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            raise ArgumentError(f"Schedule.kernels key {key!r} must be a kernel name, a group "
                                "entry name or an index")
        out[key] = KernelSettings.of(value, key)
    return out


def resolve_kernel(key, names: list[str], entries: dict[str, tuple[str, ...]]) -> str:
    """The kernel ``key`` designates among ``names`` (program order); ``entries`` maps a
    kernel name to the group entries it was formed from. Errors list the valid keys."""
    if isinstance(key, int):
        if -len(names) <= key < len(names):
            return names[key]
        raise ArgumentError(f"Schedule.kernels: kernel index {key} is out of range; the model "
                            f"has {len(names)} kernels: {', '.join(names)}")
    if key in names:
        return key
    owners = [name for name in names if key in entries.get(name, ())]
    if len(owners) == 1:
        return owners[0]
    if len(owners) > 1:
        raise ArgumentError(f"Schedule.kernels: {key!r} names entries of several kernels: "
                            f"{', '.join(owners)}; use a kernel name or index")
    valid = list(names) + sorted({e for n in names for e in entries.get(n, ())} - set(names))
    raise ArgumentError(f"Schedule.kernels: no kernel named {key!r}; valid names: "
                        f"{', '.join(repr(v) for v in valid)} (or an index 0..{len(names) - 1})")

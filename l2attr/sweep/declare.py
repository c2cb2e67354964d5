"""What a sweep measures: its options, its points and arms, and every check that can refuse it
before the GPU is touched (one line, exit 2; never a traceback, never a half-made run dir).

The axis-specific parts (options, bounds, points, device checks) are each axis' declaration
(sweep/axes/); this module holds what every sweep shares and dispatches to the axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from l2attr.errors import UserError
from l2attr.gpu.persisting import DeviceLimits
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import FAMILIES
from l2attr.sweep import axes
from l2attr.sweep.axes.declare import OTHER_BATCHES, MiB, Point
from l2attr.measure.adaptive import AdaptiveRule
from l2attr.vocab import Family, Profile, SweepAxis

COMMON = ("axis", "families", "profiles", "repeats", "host_repeat", "spin_us", "pin_granularity", "cache_dir",
          "nvtx_ranges", "profile", "adaptive")


@dataclass(init=False)
class SweepOptions:
    """The settings of one sweep: the shared ones as attributes, each registered axis option's
    values by its key (`opts.ks`, `opts.hot_rows`, ...; defaults where not given). The manifest
    stores them flat, as the committed runs have them. A dataclass, so `dataclasses.replace`
    makes the per-unit copies the distributed runner needs."""

    axis: Any
    families: list[Family]
    profiles: list[str]
    repeats: int
    host_repeat: bool
    spin_us: float
    pin_granularity: str | None
    cache_dir: str | None
    nvtx_ranges: bool
    profile: bool
    values: dict[str, list[Any]]
    rule: AdaptiveRule | None       # adaptive repeats (sweep/measure/adaptive.py); None: `repeats` fixed

    def __init__(self, axis: Any, families: list[Family] | None = None, profiles: list[str] | None = None,
                 repeats: int = 3, host_repeat: bool = True, spin_us: float = 50.0,
                 pin_granularity: str | None = None, cache_dir: str | None = None, nvtx_ranges: bool = False,
                 profile: bool = False, values: dict[str, Any] | None = None,
                 adaptive: AdaptiveRule | dict[str, Any] | None = None, rule: AdaptiveRule | None = None,
                 **more: Any) -> None:
        values = {**(values or {}), **more}
        self.axis = axis                     # a SweepAxis, or the name of an axis registered otherwise
        self.families = list(families) if families is not None else [Family.ARTIFACT, Family.TUNED]
        self.profiles = list(profiles) if profiles is not None else list(Profile.values())
        self.repeats, self.host_repeat, self.spin_us = repeats, host_repeat, spin_us
        self.pin_granularity, self.cache_dir = pin_granularity, cache_dir
        self.nvtx_ranges = nvtx_ranges       # NVTX ranges around each unit's last pin group (the --profile child)
        self.profile = profile               # after the timing: DRAM bytes per point under ncu (sweep/measure/dram.py)
        adaptive = adaptive if adaptive is not None else rule      # `rule`: dataclasses.replace's copies
        self.rule = AdaptiveRule(**adaptive) if isinstance(adaptive, dict) else adaptive
        known = {o.key: o for o in axes.options()}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise TypeError(f"no sweep option {', '.join(unknown)} (registered: {', '.join(known)})")
        self.values = {k: o.coerce(values[k] if k in values else o.default) for k, o in known.items()}

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    @property
    def spec(self) -> axes.AxisSpec:
        return axes.axis_spec(self.axis)

    def manifest(self) -> dict[str, Any]:
        d: dict[str, Any] = {"axis": str(self.axis), "families": [f.value for f in self.families],
                             "profiles": list(self.profiles), "repeats": self.repeats,
                             "host_repeat": self.host_repeat, "spin_us": self.spin_us,
                             "pin_granularity": self.pin_granularity}
        known = {o.key: o for o in axes.options()}
        d.update({k: known[k].plain(v) for k, v in self.values.items()})
        d.update(cache_dir=self.cache_dir, nvtx_ranges=self.nvtx_ranges, profile=self.profile)
        if self.rule is not None:
            d["adaptive"] = self.rule.manifest()
        return d

    @classmethod
    def from_manifest(cls, d: dict[str, Any]) -> "SweepOptions":
        d = dict(d)
        axis = parse_axis(str(d.pop("axis")), runs_only=False)
        known = {o.key for o in axes.options()}
        stray = sorted(set(d) - set(COMMON) - known)
        if stray:
            raise UserError(f"sweep settings name no option of a registered axis: {', '.join(stray)}")
        d["families"] = [Family(f) for f in d.get("families", [])]
        return cls(axis, **d)


def parse_axis(text: str, runs_only: bool = True) -> Any:
    """The axis a name means (a SweepAxis where it is one); `runs_only`: refuse former names, saying
    which one replaced them."""
    spec = axes.axis_spec(text)
    if runs_only and spec.renamed_to is not None:
        raise UserError(f"the {text} sweep is now `{spec.renamed_to}`: {axes.axis_spec(spec.renamed_to).summary}")
    return SweepAxis(text) if text in SweepAxis.values() else text


def row_bytes(cfg: WorkloadConfig) -> int:
    return cfg.dim * cfg.element_bytes


def validate(cfg: WorkloadConfig, opts: SweepOptions) -> None:
    """Everything that can be refused from the arguments alone (no device needed)."""
    if opts.repeats <= 0:
        raise UserError(f"--repeats must be positive, got {opts.repeats}")
    if opts.spin_us < 0:
        raise UserError(f"--spin-us must be >= 0, got {opts.spin_us:g}")
    if opts.pin_granularity and not any(opts.pin_granularity in [p.value for p in FAMILIES[f].pins]
                                        for f in opts.families):
        raise UserError(f"--pin-granularity {opts.pin_granularity}: the "
                        f"{'/'.join(f.value for f in opts.families)} family pins per element only")
    spec = opts.spec
    for option in spec.options:
        option.check(opts.values[option.key])
    if spec.validate is not None:
        spec.validate(cfg, opts)


def validate_device(cfg: WorkloadConfig, opts: SweepOptions, limits: DeviceLimits) -> None:
    """What needs the device's L2 facts: refused before any allocation or kernel."""
    spec = opts.spec
    if spec.validate_device is not None:
        spec.validate_device(cfg, opts, limits)


def points(cfg: WorkloadConfig, opts: SweepOptions, limits: DeviceLimits | None = None) -> list[Point]:
    """The sweep's points in measuring order, each with its arms."""
    return opts.spec.points(cfg, opts, limits)


def recorded(manifest: dict[str, Any]) -> tuple[SweepOptions, WorkloadConfig, list[Point]] | None:
    """The settings a sweep's manifest records, read back (its options, workload and points); None
    where they cannot be (the manifest check names what is wrong with them). One reader for every check."""
    from l2attr.manifest_model import sections

    try:
        got = sections(manifest, ("sweep", "config"))      # as recorded (less what check_manifest said)
        opts = SweepOptions.from_manifest(got["sweep"])
        cfg = WorkloadConfig(**got["config"])
        return opts, cfg, points(cfg, opts)
    except (KeyError, TypeError, ValueError, UserError):
        return None


__all__ = ["MiB", "OTHER_BATCHES", "Point", "SweepOptions", "parse_axis", "points", "recorded", "row_bytes", "validate",
           "validate_device"]

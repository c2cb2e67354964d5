"""What a sweep measures: its options, its points and arms, and every check that can refuse it
before the GPU is touched (one line, exit 2; never a traceback, never a half-made run dir)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from l2attr.ladder.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.gpu.persisting import DeviceLimits
from l2attr.ladder.declare import FAMILIES
from l2attr.ladder.measure.residency import check_window_fits
from l2attr.vocab import Arm, Family, Order, Profile, SweepAxis

MiB = 1 << 20

DEFAULT_KS = (1, 2, 4, 8, 16, 32)
DEFAULT_HOT_ROWS = (0, 7_500, 15_000, 30_000, 60_000, 120_000, 240_000)
DEFAULT_HIT_RATIOS = (0.25, 0.5, 0.75, 1.0)
DEFAULT_EFFECTIVE_L2_MIB = (60.0, 50.0, 40.0, 30.0, 20.0)   # 40: the A100's L2
DEFAULT_POLLUTION_MIB = (0.0, 7.5, 15.0, 30.0, 60.0, 120.0)
# consumer calls per (point, arm, repeat) that the amortisation sweep aims at for each table: a
# point with k calls per pin gets ceil(this / k) pin groups (at least one)
AMORTISATION_CALLS = 8
OTHER_BATCHES = 4          # measured batches (x tables calls) per point, arm and repeat elsewhere


@dataclass(frozen=True)
class Point:
    """One x value of a sweep and the arms measured there."""

    point: str                 # stable id, e.g. "interleaved:k8", "hot60000", "hr0.5", "l2_40MiB"
    x: float                   # the axis value (k, hot rows, hit ratio, effective L2 MiB, MiB polluted)
    arms: tuple[Arm, ...]
    order: Order = Order.INTERLEAVED
    k: int = 1                 # consumer calls per pin
    hot_rows: int = -1         # rows pinned / in the window (-1: the workload's hot_rows)
    hit_ratio: float = 0.0     # access-policy window hitRatio (window arm only)
    occupy_bytes: int = 0      # L2 bytes held by evict_last lines of a dummy buffer (capacity)
    pollute_bytes: int = 0     # bytes of unrelated data streamed between pin and consumer
    groups: int = OTHER_BATCHES  # measured pin groups per (arm, repeat): a pin and its k calls, per table


@dataclass
class SweepOptions:
    axis: SweepAxis
    families: list[Family] = field(default_factory=lambda: [Family.ARTIFACT, Family.TUNED])
    profiles: list[str] = field(default_factory=lambda: list(Profile.values()))
    repeats: int = 3
    host_repeat: bool = True
    spin_us: float = 50.0
    pin_granularity: str | None = None
    ks: list[int] = field(default_factory=lambda: list(DEFAULT_KS))
    orders: list[Order] = field(default_factory=lambda: [Order.BACK_TO_BACK, Order.INTERLEAVED])
    hot_rows: list[int] = field(default_factory=lambda: list(DEFAULT_HOT_ROWS))
    hit_ratios: list[float] = field(default_factory=lambda: list(DEFAULT_HIT_RATIOS))
    effective_l2_mib: list[float] = field(default_factory=lambda: list(DEFAULT_EFFECTIVE_L2_MIB))
    pollution_mib: list[float] = field(default_factory=lambda: list(DEFAULT_POLLUTION_MIB))
    cache_dir: str | None = None
    nvtx_ranges: bool = False   # NVTX ranges around each unit's last pin group (the --profile child)
    profile: bool = False       # after the timing: DRAM bytes per point under ncu (sweep/dram.py)

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d["axis"] = self.axis.value
        d["families"] = [f.value for f in self.families]
        d["orders"] = [o.value for o in self.orders]
        return d

    @classmethod
    def from_manifest(cls, d: dict[str, Any]) -> "SweepOptions":
        d = dict(d)
        d["axis"] = SweepAxis(d["axis"])
        d["families"] = [Family(f) for f in d["families"]]
        d["orders"] = [Order(o) for o in d["orders"]]
        return cls(**d)


def parse_axis(text: str) -> SweepAxis:
    try:
        return SweepAxis(text)
    except ValueError:
        raise UserError(f"unknown sweep axis {text!r}; valid: {', '.join(SweepAxis.values())}") from None


def _numbers(flag: str, text: str, kind: type) -> list[Any]:
    out = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        try:
            value = kind(word)
        except ValueError:
            raise UserError(f"{flag} {text!r}: {word!r} is not {'an integer' if kind is int else 'a number'}") from None
        if kind is float and not math.isfinite(value):
            raise UserError(f"{flag} {text!r}: {word!r} is not a finite number")
        out.append(value)
    if not out:
        raise UserError(f"{flag} {text!r}: give at least one value")
    return list(dict.fromkeys(out))


def parse_ints(flag: str, text: str) -> list[int]:
    return _numbers(flag, text, int)


def parse_floats(flag: str, text: str) -> list[float]:
    return _numbers(flag, text, float)


def parse_orders(text: str) -> list[Order]:
    words = [w.strip() for w in text.split(",") if w.strip()]
    bad = [w for w in words if w not in Order.values()]
    if bad or not words:
        raise UserError(f"--orders {text!r}: use {', '.join(Order.values())} (comma-separated)")
    return [Order(w) for w in dict.fromkeys(words)]


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
    axis = opts.axis
    if axis == SweepAxis.AMORTISATION:
        for k in opts.ks:
            if k <= 0:
                raise UserError(f"--k {k}: a pin must serve at least one consumer call (k >= 1)")
        if max(opts.ks) > 4096:
            raise UserError(f"--k {max(opts.ks)}: at most 4096 consumer calls per pin")
    elif axis == SweepAxis.HOTSET:
        for n in opts.hot_rows:
            if n < 0:
                raise UserError(f"--hot-sizes {n}: a hot set cannot be negative")
            if n > cfg.rows:
                raise UserError(f"--hot-sizes {n:,}: the hot set is larger than the table "
                                f"({cfg.rows:,} rows)")
    elif axis == SweepAxis.WINDOW:
        for h in opts.hit_ratios:
            if not 0.0 < h <= 1.0:
                raise UserError(f"--hit-ratios {h:g}: a window's hitRatio must be in (0, 1]")
        if cfg.hot_rows <= 0:
            raise UserError("the window sweep needs hot rows (--hot-rows > 0): the window covers them")
    elif axis == SweepAxis.CAPACITY:
        for mib in opts.effective_l2_mib:
            if mib <= 0:
                raise UserError(f"--l2-mib {mib:g}: an effective L2 size must be positive")
    elif axis == SweepAxis.POLLUTION:
        for mib in opts.pollution_mib:
            if mib < 0:
                raise UserError(f"--pollute-mib {mib:g}: the MiB streamed between pin and consumer "
                                "cannot be negative")
        if max(opts.pollution_mib) > 1024:
            raise UserError(f"--pollute-mib {max(opts.pollution_mib):g}: at most 1024 MiB (the ring of "
                            "unrelated data is 1 GiB)")


def validate_device(cfg: WorkloadConfig, opts: SweepOptions, limits: DeviceLimits) -> None:
    """What needs the device's L2 facts: refused before any allocation or kernel."""
    if opts.axis == SweepAxis.CAPACITY:
        l2_mib = limits.l2_bytes / MiB
        for mib in opts.effective_l2_mib:
            if mib > l2_mib + 1e-9:
                raise UserError(f"--l2-mib {mib:g}: larger than this GPU's L2 ({l2_mib:g} MiB)")
    if opts.axis == SweepAxis.WINDOW:
        check_window_fits(cfg, limits)


def points(cfg: WorkloadConfig, opts: SweepOptions, limits: DeviceLimits | None = None) -> list[Point]:
    """The sweep's points in measuring order, each with its arms."""
    pinned = (Arm.OPTMT, Arm.PIN)
    axis = opts.axis
    if axis == SweepAxis.AMORTISATION:
        return [Point(f"{o.value}:k{k}", float(k), pinned, order=o, k=k,
                      groups=max(1, math.ceil(AMORTISATION_CALLS / k)))
                for o in opts.orders for k in sorted(opts.ks)]
    if axis == SweepAxis.HOTSET:
        return [Point(f"hot{n}", float(n), (Arm.OPTMT,) if n == 0 else (Arm.PIN,), hot_rows=n)
                for n in sorted(opts.hot_rows)]
    if axis == SweepAxis.WINDOW:
        return [Point("no_window", 0.0, (Arm.OPTMT, Arm.REMAP))] + [
            Point(f"hr{h:g}", float(h), (Arm.WINDOW,), hit_ratio=h) for h in sorted(opts.hit_ratios)]
    if axis == SweepAxis.CAPACITY:
        l2 = limits.l2_bytes if limits else int(max(opts.effective_l2_mib) * MiB)
        return [Point(f"l2_{mib:g}MiB", float(mib), pinned, occupy_bytes=max(0, l2 - int(mib * MiB)))
                for mib in sorted(opts.effective_l2_mib, reverse=True)]
    if axis == SweepAxis.POLLUTION:
        return [Point(f"pollute_{mib:g}MiB", float(mib), pinned, pollute_bytes=int(mib * MiB) // 16 * 16)
                for mib in sorted(opts.pollution_mib)]
    raise UserError(f"unknown sweep axis {axis!r}")  # pragma: no cover


X_LABELS: dict[SweepAxis, str] = {
    SweepAxis.AMORTISATION: "consumer calls per pin (k)",
    SweepAxis.HOTSET: "hot rows pinned",
    SweepAxis.WINDOW: "access-policy window hitRatio",
    SweepAxis.CAPACITY: "effective L2 (MiB)",
    SweepAxis.POLLUTION: "MiB streamed between pin and consumer",
}

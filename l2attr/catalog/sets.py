"""Metric sets: which Nsight Compute metrics to collect, per chip, read from `metrics/*.toml`; and
the chips l2attr has metric names for, with how a GPU's compute capability maps to one.

Why the chips live here: a chip is the key of every set's names, and a set is resolved for one.

Metric names differ between GPU generations and some exist on one chip only, so a set names each
quantity once and gives its ncu name per chip. Sets are data (TOML) so that adding a counter
needs no code change.

Hit *rates* that ncu computes from inputs collected in different replay passes can leave
[0, 100] (docs/facts.md#rates-across-passes), so l2attr also derives a rate from every hit/miss count pair collected
in the same pass: `<base>_lookup_hit.sum` + `<base>_lookup_miss.sum` ->
`derived:<base>_hit_rate.pct`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from l2attr.errors import UserError
from l2attr.source import METRICS_DIR, data_dir

# compute capability (major, minor) -> the chip name ncu uses (`--chips`, `--query-metrics`)
CHIP_BY_CC: dict[tuple[int, int], str] = {(8, 0): "ga100", (9, 0): "gh100"}
KNOWN_CHIPS: tuple[str, ...] = tuple(CHIP_BY_CC.values())
CHIP_GPUS = {"ga100": "A100 (sm_80)", "gh100": "H100 / H200 (sm_90)"}


def chip_for_compute_capability(major: int, minor: int) -> str:
    """Map a compute capability to a chip we have metric tables for.

    An unknown chip is an error, not a silent fallback: metric names differ between chips and a
    wrong guess would fail inside ncu much later with a less clear message. `--chip` overrides.
    """
    try:
        return CHIP_BY_CC[(int(major), int(minor))]
    except KeyError:
        known = ", ".join(f"{c} = {CHIP_GPUS[c]}" for c in KNOWN_CHIPS)
        raise UserError(f"no metric tables for compute capability {major}.{minor}; known chips: "
                        f"{known}. Pass --chip to use one of them anyway") from None


def check_chip(chip: str) -> str:
    chip = chip.strip().lower()
    if chip not in KNOWN_CHIPS:
        raise UserError(f"unknown chip {chip!r}; known: {', '.join(KNOWN_CHIPS)}")
    return chip


# -- metric sets ---------------------------------------------------------------------------------

DERIVED_PREFIX = "derived:"
_HIT_SUFFIX = "_lookup_hit.sum"
_MISS_SUFFIX = "_lookup_miss.sum"


@dataclass(frozen=True)
class MetricSpec:
    """One quantity of a set, resolved for one chip."""

    key: str
    name: str          # the ncu metric name on this chip
    label: str
    unit: str
    description: str
    evidence: tuple[str, ...] = ()

    @property
    def verified(self) -> bool:
        """True when a real report of some chip returned a value for this name."""
        return any(e.startswith("read:") for e in self.evidence)


@dataclass(frozen=True)
class DerivedSpec:
    """A rate computed after import from a hit and a miss count of the same kernel and pass."""

    name: str
    hits: str
    misses: str
    label: str

    def compute(self, hits: float, misses: float) -> float | None:
        total = hits + misses
        return None if total <= 0 else 100.0 * hits / total


@dataclass
class MetricSet:
    """What one profile run collects on one chip: ncu names to ask for, and rates to derive."""

    name: str
    chip: str
    description: str = ""
    specs: list[MetricSpec] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        """ncu metric names to pass to `--metrics`, in set order, without duplicates."""
        return list(dict.fromkeys(s.name for s in self.specs))

    @property
    def derived(self) -> list[DerivedSpec]:
        return derived_specs(self.metrics)

    @property
    def labels(self) -> dict[str, str]:
        out = {s.name: s.label for s in self.specs}
        out.update({d.name: d.label for d in self.derived})
        return out

    @property
    def descriptions(self) -> dict[str, str]:
        return {s.name: s.description for s in self.specs}

    def merged(self, other: "MetricSet") -> "MetricSet":
        if other.chip != self.chip:
            raise ValueError("cannot merge metric sets of different chips")
        seen = {s.name for s in self.specs}
        specs = self.specs + [s for s in other.specs if s.name not in seen]
        return MetricSet(f"{self.name}+{other.name}", self.chip,
                         "; ".join(d for d in (self.description, other.description) if d), specs)


# -- loading sets --------------------------------------------------------------------------------

def metrics_dir() -> Path:
    return data_dir(METRICS_DIR)


# A TOML file with another `kind` (e.g. "pm_sampling") lists names l2attr reads, not a `--metrics` set.
COUNTER_KIND = "counters"


def available_sets(folder: Path | None = None) -> list[str]:
    folder = folder or metrics_dir()
    return sorted(p.stem for p in folder.glob("*.toml") if read_toml(p).get("kind", COUNTER_KIND) == COUNTER_KIND)


def read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"metric set {path}: not valid TOML ({exc})") from None


def load_metric_set(name: str, chip: str, folder: Path | None = None) -> MetricSet:
    """Read `metrics/<name>.toml` and keep the names for `chip` (a quantity absent there is skipped)."""
    chip = check_chip(chip)
    folder = folder or metrics_dir()
    path = folder / f"{name}.toml"
    if not path.is_file():
        raise UserError(f"unknown metric set {name!r}; available: {', '.join(available_sets(folder))} "
                        "(or give raw ncu metric names, e.g. dram__bytes_read.sum)")
    data = read_toml(path)
    if data.get("kind", COUNTER_KIND) != COUNTER_KIND:
        raise UserError(f"{name!r} is not a metric set for --metrics: {data.get('description', data['kind'])}")
    specs = []
    for i, m in enumerate(data.get("metric", [])):
        key = m.get("key", f"#{i}")
        missing = [f for f in ("label", "unit") if f not in m]
        if missing:
            raise UserError(f"metric set {path}: metric {key!r} lacks {', '.join(missing)}")
        metric_name = m.get(chip)
        if not metric_name or not m.get("collect", True):
            continue
        specs.append(MetricSpec(key, metric_name, m["label"], m["unit"], m.get("description", ""),
                                tuple(m.get("evidence", ()))))
    if not specs:
        raise UserError(f"metric set {name!r} has no metrics for chip {chip}")
    return MetricSet(data.get("name", name), chip, data.get("description", ""), specs)


def derived_specs(metrics: Iterable[str]) -> list[DerivedSpec]:
    """Every hit/miss count pair among `metrics` gives one derived hit rate."""
    names = list(metrics)
    present = set(names)
    out = []
    for hit in names:
        if hit.endswith(_HIT_SUFFIX):
            base = hit[: -len(_HIT_SUFFIX)]
            miss = base + _MISS_SUFFIX
            if miss in present:
                out.append(DerivedSpec(f"{DERIVED_PREFIX}{base}_hit_rate.pct", hit, miss,
                                       f"hit rate from counts ({base})"))
    return out

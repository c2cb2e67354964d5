"""Metric sets: which Nsight Compute metrics to collect, per chip, read from `metrics/*.toml`.

Metric names differ between GPU generations and some exist on one chip only, so a set names each
quantity once and gives its ncu name per chip. Sets are data (TOML) so that adding a counter
needs no code change. `--metrics` takes set names and raw ncu names (anything with `__`) mixed.

Hit *rates* that ncu computes from inputs collected in different replay passes can leave
[0, 100] (NOTES trap 4), so l2attr also derives a rate from every hit/miss count pair collected
in the same pass: `<base>_lookup_hit.sum` + `<base>_lookup_miss.sum` ->
`derived:<base>_hit_rate.pct`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from l2attr.errors import UserError
from l2attr.resources import data_dir

# compute capability (major, minor) -> the chip name ncu uses (`--chips`, `--query-metrics`)
CHIP_BY_CC: dict[tuple[int, int], str] = {(8, 0): "ga100", (9, 0): "gh100"}
KNOWN_CHIPS: tuple[str, ...] = tuple(CHIP_BY_CC.values())
CHIP_GPUS = {"ga100": "A100 (sm_80)", "gh100": "H100 / H200 (sm_90)"}

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


# -- chips ---------------------------------------------------------------------------------------

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


# -- loading sets --------------------------------------------------------------------------------

def metrics_dir() -> Path:
    return data_dir("metrics")


# A TOML file with another `kind` (e.g. "pm_sampling") lists names l2attr reads, not a `--metrics` set.
COUNTER_KIND = "counters"


def available_sets(folder: Path | None = None) -> list[str]:
    folder = folder or metrics_dir()
    return sorted(p.stem for p in folder.glob("*.toml") if _read_toml(p).get("kind", COUNTER_KIND) == COUNTER_KIND)


def _read_toml(path: Path) -> dict:
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
    data = _read_toml(path)
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


@dataclass(frozen=True)
class CatalogEntry:
    """One quantity across every metric set and chip: the key code refers to, its ncu names."""

    key: str
    label: str
    unit: str
    description: str
    names: dict[str, str]            # chip -> ncu metric name


@dataclass(frozen=True)
class RateSpec:
    """A rate l2attr computes from two count keys summed over the same kernels and pass."""

    key: str
    label: str
    hits: str
    misses: str
    description: str = ""
    headline: bool = False


@dataclass(frozen=True)
class TotalSpec:
    """A count l2attr sums from other count keys of the same call, where it was not collected."""

    key: str
    label: str
    parts: tuple[str, ...]
    description: str = ""


@dataclass(frozen=True)
class Catalog:
    """Every metric key and rate of every metrics/*.toml: the one vocabulary of metric names."""

    metrics: dict[str, CatalogEntry]
    rates: dict[str, RateSpec]
    totals: dict[str, TotalSpec] = field(default_factory=dict)

    def names(self, key: str) -> set[str]:
        """The ncu names of a key on any chip (a recorded table is read whatever its chip)."""
        return set(self.metrics[key].names.values())

    def key_of(self, ncu_name: str) -> str | None:
        for entry in self.metrics.values():
            if ncu_name in entry.names.values():
                return entry.key
        return None

    @property
    def headline_rate(self) -> RateSpec:
        return next(r for r in self.rates.values() if r.headline)


def catalog(folder: Path | None = None) -> Catalog:
    """Read every metrics/*.toml once; a key defined twice must mean the same names."""
    metrics: dict[str, CatalogEntry] = {}
    rates: dict[str, RateSpec] = {}
    totals: dict[str, TotalSpec] = {}
    for path in sorted((folder or metrics_dir()).glob("*.toml")):
        data = _read_toml(path)
        for m in data.get("metric", []):
            names = {chip: m[chip] for chip in KNOWN_CHIPS if m.get(chip)}
            entry = CatalogEntry(m["key"], m.get("label", m["key"]), m.get("unit", ""),
                                 m.get("description", ""), names)
            old = metrics.get(entry.key)
            if old is not None and old.names != entry.names:
                raise UserError(f"metric key {entry.key!r} means different ncu names in two sets ({path})")
            metrics[entry.key] = entry
        for r in data.get("rate", []):
            rates[r["key"]] = RateSpec(r["key"], r.get("label", r["key"]), r["hits"], r["misses"],
                                       r.get("description", ""), bool(r.get("headline", False)))
        for t in data.get("total", []):
            totals[t["key"]] = TotalSpec(t["key"], t.get("label", t["key"]), tuple(t["parts"]),
                                         t.get("description", ""))
    for r in rates.values():
        for k in (r.hits, r.misses):
            if k not in metrics:
                raise UserError(f"rate {r.key!r} uses unknown metric key {k!r}")
    for t in totals.values():
        for k in t.parts:
            if k not in metrics:
                raise UserError(f"total {t.key!r} uses unknown metric key {k!r}")
    if sum(r.headline for r in rates.values()) != 1:
        raise UserError("metrics/*.toml must mark exactly one [[rate]] headline = true")
    return Catalog(metrics, rates, totals)


def is_raw_metric(token: str) -> bool:
    """ncu metric names always contain `__` (unit__counter); set names never do."""
    return "__" in token and not token.startswith(DERIVED_PREFIX)


def resolve_metrics(text: str, chip: str, folder: Path | None = None) -> MetricSet:
    """Turn `--metrics l2,dram__bytes.sum,...` into one MetricSet for `chip`."""
    tokens = [t.strip() for t in (text or "").split(",") if t.strip()]
    if not tokens:
        raise UserError("--metrics is empty; give a set name (e.g. l2) or ncu metric names")
    result: MetricSet | None = None
    for token in tokens:
        if token.startswith(DERIVED_PREFIX):
            raise UserError(f"{token} is computed by l2attr after import from hit and miss counts; "
                            "ask for the counts (<base>_lookup_hit.sum, <base>_lookup_miss.sum) or a set")
        if is_raw_metric(token):
            if not re.fullmatch(r"[A-Za-z0-9_.]+", token):
                raise UserError(f"metric name {token!r}: ncu names use letters, digits, '_' and '.'")
            part = MetricSet("raw", check_chip(chip), "", [MetricSpec(token, token, token, "", "raw ncu metric")])
        else:
            part = load_metric_set(token, chip, folder)
        result = part if result is None else result.merged(part)
    assert result is not None
    return result


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


# -- checking names against ncu ------------------------------------------------------------------

def parse_query_metrics(text: str) -> set[str]:
    """Base metric names from `ncu --query-metrics [--chips X]` output.

    The listing (ncu 2025.3.1) is a table: `Chip gh100`, a dashed rule, the header "Metric Name
    Metric Type  Metric Unit  Metric Description", another rule, then one metric per line with
    its base name first (older versions lack the type/unit columns). Only the first column
    matters; a base name always holds `__`, which tells data rows from headers and wrapped
    description lines.
    """
    names = set()
    for line in text.splitlines():
        first = line.strip().split(maxsplit=1)
        if not first or "__" not in first[0] or not re.fullmatch(r"[A-Za-z0-9_.]+", first[0]):
            continue
        names.add(first[0])
        # grouped entries (`CTC.TriageCompute.ctc__rx_bytes`): also accept the bare metric
        names.add(first[0].rsplit(".", 1)[-1])
    return names


def base_name(metric: str) -> str:
    """`lts__t_sector_hit_rate.pct` -> `lts__t_sector_hit_rate` (the query lists base names)."""
    return metric.split(".", 1)[0]


def unknown_metrics(metrics: Iterable[str], available: set[str]) -> list[str]:
    """Metrics whose base name the chip does not list (profiler__/launch__/device__ are not counters)."""
    skip = ("profiler__", "launch__", "device__")
    return [m for m in metrics if not m.startswith(skip) and base_name(m) not in available]


__all__ = [
    "CHIP_BY_CC", "KNOWN_CHIPS", "DERIVED_PREFIX", "MetricSpec", "DerivedSpec", "MetricSet",
    "Catalog", "CatalogEntry", "RateSpec", "catalog",
    "chip_for_compute_capability", "check_chip", "available_sets", "load_metric_set",
    "is_raw_metric", "resolve_metrics", "derived_specs", "parse_query_metrics", "base_name",
    "unknown_metrics",
]

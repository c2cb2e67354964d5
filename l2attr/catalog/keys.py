"""The key catalog: one name per quantity across every metric set and chip, and the rates and
totals l2attr computes from them (analysis refers to quantities by key, never by ncu name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from l2attr.catalog.sets import KNOWN_CHIPS, metrics_dir, read_toml
from l2attr.errors import UserError

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
        data = read_toml(path)
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

"""The default profile collects exactly what the layer-B tables and sections read.

Every ncu pass of application replay is one more run of the whole ladder child, so a metric no
reader uses is paid for in passes. "Read" is taken from the readers' code: a catalog key quoted
in l2attr/analysis, l2attr/report, l2attr/commands, l2attr/sweep or the prose templates, or a part of a rate
or total that is read (the headline rate is read wherever `headline_rate()` is called).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from l2attr.catalog.keys import catalog
from l2attr.catalog.sets import load_metric_set

ROOT = Path(__file__).resolve().parents[1]
READERS = ("l2attr/analysis/*.py", "l2attr/report/*.py", "l2attr/commands/*.py", "l2attr/sweep/**/*.py", "l2attr/ladders/**/*.py",
           "tools/docgen/prose/*.j2")
DEFAULT_SET = "l2"      # `l2attr profile`'s default --metrics
# Keys the readers show when a run collected them, kept out of the default set for a reason.
OPT_IN = {
    "fabric": ("fabric", "a fourth replay pass beside l2 (examples/logs/probe_passes_subsets.log)"),
    "ncu_hit_pct": ("l2_pct", "ncu's own rates, read only to warn when they leave [0, 100]"),
    "ncu_read_hit_pct": ("l2_pct", "ncu's own rates, read only to warn when they leave [0, 100]"),
}


def _sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for pat in READERS for p in ROOT.glob(pat)}


def _quoted(key: str, sources: dict[str, str]) -> bool:
    quote = re.compile(rf"[\"']{re.escape(key)}[\"']")
    word = re.compile(rf"\b{re.escape(key)}\b")
    return any((word if f.endswith(".j2") else quote).search(t) for f, t in sources.items())


def read_keys() -> set[str]:
    """Metric keys the readers use, directly or through a rate or total they use."""
    cat, sources = catalog(), _sources()
    out = {k for k in cat.metrics if _quoted(k, sources)}
    for r in cat.rates.values():
        if r.headline or _quoted(r.key, sources):
            out |= {r.hits, r.misses}
    for t in cat.totals.values():
        if _quoted(t.key, sources):
            out |= set(t.parts)
    return {k for k in out if k in cat.metrics}


@pytest.mark.parametrize("chip", ["gh100", "ga100"])
def test_every_collected_key_is_read(chip):
    cat = catalog()
    collected = {cat.key_of(n) for n in load_metric_set(DEFAULT_SET, chip).metrics}
    assert collected - read_keys() == set(), "collected by the default profile, read by no table or section"


@pytest.mark.parametrize("chip", ["gh100", "ga100"])
def test_every_read_key_is_collected_or_declared_opt_in(chip):
    cat = catalog()
    collected = {cat.key_of(n) for n in load_metric_set(DEFAULT_SET, chip).metrics}
    summed = {k for k in read_keys() if k in cat.totals and set(cat.totals[k].parts) <= collected}
    assert read_keys() - collected - summed - set(OPT_IN) == set(), "read but never collected by default"
    assert set(OPT_IN) & collected == set(), "an opt-in key is in the default set: take it off OPT_IN"


def test_each_opt_in_key_is_collected_by_its_set():
    cat = catalog()
    for key, (name, _why) in OPT_IN.items():
        keys = {cat.key_of(n) for n in load_metric_set(name, "gh100").metrics}
        assert key in keys, f"{key} is not in metrics/{name}.toml"


def test_the_scan_sees_a_key_only_when_it_is_quoted():
    src = {"a.py": "x = row['dram_read']\n", "b.j2": "{{ hi.fabric }}"}
    assert _quoted("dram_read", src) and _quoted("fabric", src)
    assert not _quoted("dram_write", src) and not _quoted("read", src)

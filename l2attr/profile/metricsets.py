"""Which metrics one profile run asks ncu for: `--metrics` resolved into a set for the chip, and
the names checked against `ncu --query-metrics`.

`--metrics` takes set names (metrics/*.toml, l2attr.catalog.sets) and raw ncu names (anything
with `__`) mixed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from l2attr.catalog.sets import DERIVED_PREFIX, MetricSet, MetricSpec, check_chip, load_metric_set
from l2attr.catalog.sets import derived_specs  # noqa: F401  (re-export: analysis/load.py reads it here)
from l2attr.errors import UserError


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


def check_metrics_text(text: str, folder: Path | None = None) -> None:
    """`--metrics` names known sets or well-formed ncu names for some chip l2attr knows: checked
    before the chip is detected, the user's command runs or the GPU is touched (a typo must not
    cost a run, nor be reported as a missing GPU)."""
    from l2attr.catalog.sets import KNOWN_CHIPS

    first: UserError | None = None
    for chip in KNOWN_CHIPS:
        try:
            resolve_metrics(text, chip, folder)
            return
        except UserError as exc:
            first = first or exc
    assert first is not None
    raise first


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
    "is_raw_metric", "resolve_metrics", "parse_query_metrics", "base_name", "unknown_metrics",
]

"""The quantities PM sampling reads over time (`metrics/pmsampling.toml`), when one says busy, and
the Nsight Compute section that asks for exactly them.

A sampled quantity names a hardware unit's throughput or a hit rate with candidate ncu names per
chip; the timeline reader tries them in order, the phase finder and the timeline chart read the
same busy threshold.

The section: ncu's stock `PmSampling` samples some 32 quantities on GH100 and adds a counter pass
for the range's cycles and duration; app-range replay reruns the whole profiled program once per
pass. The timeline reads the quantities below and the range's duration, so `profile --timeline`
writes a section asking for those alone, in one sampling group (docs/facts.md#pm-sampling says
what each cost). The quantities keep their names, so the report reads the same way. A chip with
no verified sampled names, or no known architecture, keeps ncu's stock section.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from l2attr.catalog.sets import KNOWN_CHIPS, metrics_dir
from l2attr.errors import UserError

QUANTITY_FILE = "pmsampling.toml"
QUANTITY_KIND = "pm_sampling"

# A hardware unit counts as busy from 1 % of its peak: outside the bursts the fixture's L2
# throughput stays below 0.4 % (except a 2-sample copy-engine blip at 3.5-4.6 %), DRAM below 0.1 %.
BUSY_PCT = 1.0
BUSY_KEYS = ("l2_throughput_pct_of_peak", "dram_read_pct_of_peak", "dram_write_pct_of_peak",
             "sm_inst_pct_of_peak")


@dataclass(frozen=True)
class SampledQuantity:
    """One sampled quantity and its candidate ncu names per chip, tried in order."""

    key: str
    label: str
    unit: str
    description: str
    candidates: dict[str, tuple[str, ...]]
    evidence: tuple[str, ...] = ()

    def names_for(self, chip: str | None) -> tuple[str, ...]:
        """Candidates for `chip`; for an unknown chip, every chip's, in file order."""
        if chip in self.candidates:
            return self.candidates[chip]
        return tuple(dict.fromkeys(n for names in self.candidates.values() for n in names))


def load_quantities(folder: Path | None = None) -> list[SampledQuantity]:
    """The quantities of `metrics/pmsampling.toml`, checked for the fields code relies on."""
    path = (folder or metrics_dir()) / QUANTITY_FILE
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"{path}: missing (it names the PM-sampling metrics)") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    if data.get("kind") != QUANTITY_KIND:
        raise UserError(f"{path}: kind must be {QUANTITY_KIND!r}")
    out = []
    for i, q in enumerate(data.get("quantity", [])):
        key = q.get("key", f"#{i}")
        missing = [f for f in ("key", "label", "unit") if f not in q]
        if missing:
            raise UserError(f"{path}: quantity {key!r} lacks {', '.join(missing)}")
        cands = {}
        for chip in KNOWN_CHIPS:
            names = q.get(chip, [])
            names = [names] if isinstance(names, str) else list(names)
            if names:
                cands[chip] = tuple(str(n) for n in names)
        out.append(SampledQuantity(key, q["label"], q["unit"], q.get("description", ""), cands,
                            tuple(q.get("evidence", ()))))
    keys = [q.key for q in out]
    if len(keys) != len(set(keys)):
        raise UserError(f"{path}: duplicate quantity keys")
    return out


def quantity_labels(folder: Path | None = None) -> dict[str, str]:
    return {q.key: q.label for q in load_quantities(folder)}


# -- the section ncu is given -------------------------------------------------------------------

IDENTIFIER = "L2attrTimeline"
# The section filter's architecture per chip (ncu's own section files name GH100's CC_90).
ARCH = {"gh100": "CC_90"}
# Read by the timeline besides the sampled series (pm_child): what the sampler was set to (the
# interval converts sample ids to time; the pass groups are recorded). The range's own duration is
# left out: it cost one more replay of the whole child, and came from that replay, not from the one
# sampled (docs/facts.md#pm-sampling); the range's span is its kernels' (pmsampling.py), and
# `--timeline-totals` records ncu's duration with the range's `l2` totals.
RANGE_METRICS: tuple[str, ...] = ()
HEADER_METRICS = ("profiler__pmsampler_interval_time", "profiler__pmsampler_pass_groups",
                  "profiler__pmsampler_buffer_size_bytes")


def sampled_names(chip: str, quantities: "Sequence[SampledQuantity] | None" = None) -> list[str]:
    """Every candidate name the chip has for the timeline's quantities, in file order."""
    qs = load_quantities() if quantities is None else quantities
    return list(dict.fromkeys(n for q in qs for n in q.candidates.get(chip, ())))


def section_text(chip: str, names: Sequence[str]) -> str:
    """The section file's text (ncu's protobuf text format) for `names` sampled on `chip`."""
    def metric(name: str) -> str:
        return f'  Metrics {{ Label: "{name}" Name: "{name}" }}\n'

    rows = "".join(f'        MetricRows {{ Metrics {{ Label: "{n}" Name: "{n}" Groups: "l2attr_sampling" }} }}\n'
                   for n in names)
    range_block = ("Metrics {\n" + "".join(metric(n) for n in RANGE_METRICS) + "}\n") if RANGE_METRICS else ""
    return (f'Identifier: "{IDENTIFIER}"\n'
            'DisplayName: "l2attr timeline"\n'
            'Description: "The PM-sampled quantities l2attr profile --timeline reads."\n'
            + range_block
            + "Header {\n" + "".join(metric(n) for n in HEADER_METRICS) + "}\n"
            "Body {\n  Items {\n"
            f"    Filter {{ MinArch: {ARCH[chip]} MaxArch: {ARCH[chip]} }}\n"
            "    Timeline {\n      MetricGroups {\n        Label: \"l2attr\"\n" + rows
            + "      }\n    }\n  }\n}\n")


def write_section(folder: Path, chip: str) -> str | None:
    """Write the section into `folder` and return its identifier; None (use ncu's stock
    section) for a chip without an architecture or without verified sampled names."""
    names = sampled_names(chip) if chip in ARCH else []
    if not names:
        return None
    from l2attr import atomic

    folder.mkdir(parents=True, exist_ok=True)
    atomic.write_text(folder / f"{IDENTIFIER}.section", section_text(chip, names))
    return IDENTIFIER

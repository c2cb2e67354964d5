"""The timeline's own Nsight Compute section: only the PM-sampled quantities l2attr reads.

ncu's stock `PmSampling` section samples some 32 quantities on GH100 and adds a counter pass
for the range's cycles and duration; app-range replay then reruns the whole profiled program
once per pass: 3 runs of the timeline's child on an H100, each paying its process start. The
timeline reads 7 of those quantities (metrics/pmsampling.toml) and the range's duration. This
module writes a section that asks for exactly those, in one sampling group, so ncu needs fewer
replays (docs/facts.md#pm-sampling says how many it took). The quantities keep their names, so
the report reads the same way (`pmsampling.read_pm_report`).

A chip with no verified sampled names, or no known architecture, keeps ncu's stock section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from l2attr.catalog.sampled import SampledQuantity, load_quantities

IDENTIFIER = "L2attrTimeline"
STOCK_SECTION = "PmSampling"
# The section filter's architecture per chip (ncu's own section files name GH100's CC_90).
ARCH = {"gh100": "CC_90"}
# Read by the timeline besides the sampled series (pm_child): the range's duration, and what the
# sampler was set to (the interval converts sample ids to time; the pass groups are recorded).
RANGE_METRICS = ("gpu__time_duration.sum",)
HEADER_METRICS = ("profiler__pmsampler_interval_time", "profiler__pmsampler_pass_groups",
                  "profiler__pmsampler_buffer_size_bytes")


def sampled_names(chip: str, quantities: Sequence[SampledQuantity] | None = None) -> list[str]:
    """Every candidate name the chip has for the timeline's quantities, in file order."""
    qs = load_quantities() if quantities is None else quantities
    return list(dict.fromkeys(n for q in qs for n in q.candidates.get(chip, ())))


def section_text(chip: str, names: Sequence[str]) -> str:
    """The section file's text (ncu's protobuf text format) for `names` sampled on `chip`."""
    def metric(name: str) -> str:
        return f'  Metrics {{ Label: "{name}" Name: "{name}" }}\n'

    rows = "".join(f'        MetricRows {{ Metrics {{ Label: "{n}" Name: "{n}" Groups: "l2attr_sampling" }} }}\n'
                   for n in names)
    return (f'Identifier: "{IDENTIFIER}"\n'
            'DisplayName: "l2attr timeline"\n'
            'Description: "The PM-sampled quantities l2attr profile --timeline reads, and the range duration."\n'
            "Metrics {\n" + "".join(metric(n) for n in RANGE_METRICS) + "}\n"
            "Header {\n" + "".join(metric(n) for n in HEADER_METRICS) + "}\n"
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
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{IDENTIFIER}.section").write_text(section_text(chip, names))
    return IDENTIFIER


__all__ = ["IDENTIFIER", "STOCK_SECTION", "sampled_names", "section_text", "write_section"]

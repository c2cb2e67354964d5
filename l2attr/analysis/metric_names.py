"""Which Nsight Compute metric answers which question: the one place to change metric names.

Each quantity the attribution needs has candidates in order of preference; the first one present
anywhere in metrics.csv is used for every cell (never a mix, so cells stay comparable). A
candidate is either a metric name or a `CountRate` computed per kernel from hit and miss counts
gathered in the same pass: NOTES-measurement.md saw a ready-made .pct rate whose hits and lookups
came from different passes exceed 100 %, so count-based rates come first.

`l2attr profile` writes such rates itself as `derived:<base>_hit_rate.pct` (see
l2attr/profile/metricsets.py); the CountRate entries cover a metrics.csv that has the counts only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CountRate:
    """A percentage computed per kernel as 100 * hits / (hits + misses)."""

    hits: str
    misses: str

    @property
    def name(self) -> str:
        return f"100*{self.hits}/({self.hits}+{self.misses})"


Candidate = str | CountRate

METRIC_CANDIDATES: dict[str, tuple[Candidate, ...]] = {
    # L2 sector hit rate of the kernel, in percent (all sector operations).
    "hit_rate_pct": (
        "derived:lts__t_sectors_hit_rate.pct",
        CountRate("lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum"),
        "lts__t_sector_hit_rate.pct",
    ),
    # L2 sector hit rate of reads only (the gather's own traffic), in percent.
    "read_hit_rate_pct": (
        "derived:lts__t_sectors_op_read_hit_rate.pct",
        CountRate("lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum"),
        "lts__t_sector_op_read_hit_rate.pct",
    ),
    "dram_read_bytes": ("dram__bytes_read.sum",),
    "dram_write_bytes": ("dram__bytes_write.sum",),
    "l2_fill_sectors": ("lts__d_sectors_fill_device.sum",),
    "fabric_sectors": ("lts__t_sectors_srcunit_ltcfabric.sum",),
    "evict_last_sectors": ("lts__t_sectors_aperture_device_evict_last.sum",),
    "duration_ns": ("gpu__time_duration.sum",),
}

# Human names for the report.
QUANTITY_LABELS: dict[str, str] = {
    "hit_rate_pct": "L2 sector hit rate",
    "read_hit_rate_pct": "L2 read hit rate",
    "dram_read_bytes": "DRAM bytes read",
    "dram_write_bytes": "DRAM bytes written",
    "l2_fill_sectors": "L2 sectors filled from DRAM",
    "fabric_sectors": "L2 sectors over the partition fabric",
    "evict_last_sectors": "evict_last sectors",
    "duration_ns": "kernel duration (ncu)",
}

# Quantities whose all-zero value means "the counter did not count", not "nothing happened".
MUST_BE_NONZERO = ("hit_rate_pct", "dram_read_bytes", "l2_fill_sectors", "duration_ns")

RATE_QUANTITIES = ("hit_rate_pct", "read_hit_rate_pct")


def candidate_name(candidate: Candidate) -> str:
    return candidate.name if isinstance(candidate, CountRate) else candidate

"""The quantities PM sampling reads over time (`metrics/pmsampling.toml`), and when one says busy.

A sampled quantity names a hardware unit's throughput or a hit rate with candidate ncu names per
chip; the timeline reader tries them in order, the phase finder and the timeline chart read the
same busy threshold.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

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

"""The headline ladder numbers of the results page (docs/study.md), recomputed from the committed CSVs by code that shares
nothing with l2attr: plain pandas and the definitions in the README's own words, no import of
l2attr. A wrong join, basis, charge or rounding in the analysis or the renderer fails here.

Per family table (artifact, element pin; tuned, line pin) of `examples/20261130T231356Z-bench`:
consumer medians of the four rungs, the pin kernel, the pin step's launch + sync (per host-repeat
call: whole call - the artifact's consumer timer, median; L2P+OptMT's minus OptMT's, minus the pin
kernel's median), the five speedups of L2P+OptMT over the baseline and the two break-evens against
OptMT (the smallest whole k with k * T_OptMT >= T_charge + k * T_L2P, existing only where the two
consumer intervals are disjoint: the README's significance rule within one process).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from l2attr.rundir import RunDir
from l2attr.schema import SAMPLES

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "examples" / "20261130T231356Z-bench"
TABLES = {"artifact": ("element", "**artifact kernels, element pin** (L2 state natural)"),
          "tuned": ("line", "**tuned kernels, line pin** (L2 state natural)")}
PROFILES = ["reuse_high", "reuse_medium", "reuse_low", "random"]
pytestmark = pytest.mark.skipif(not (RUN / "cells.csv").is_file(), reason=f"{RUN} not committed")


def readme_table(title: str) -> pd.DataFrame:
    text = (ROOT / "docs" / "study.md").read_text()     # the results block's page (tools/docgen/doc_pages.py)
    lines = text[text.index(title):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return pd.DataFrame(rows[2:], columns=rows[0]).set_index("profile")


@pytest.fixture(scope="module")
def cells() -> pd.DataFrame:
    return pd.read_csv(RUN / "cells.csv")


@pytest.fixture(scope="module")
def samples() -> pd.DataFrame:
    # large tables are committed compressed, .csv.gz or .csv.xz (RunDir finds which; pandas reads either)
    return pd.read_csv(RunDir(RUN).table_file(SAMPLES))


def cell(cells: pd.DataFrame, family: str, rung: str, profile: str, quantity: str, timer: str) -> pd.Series:
    hit = cells[(cells.family == family) & (cells.rung == rung) & (cells.profile == profile)
                & (cells.quantity == quantity) & (cells.timer == timer) & (cells.l2_state == "natural")]
    assert len(hit) == 1, (family, rung, profile, quantity, timer)
    return hit.iloc[0]


def excess(samples: pd.DataFrame, family: str, rung: str, profile: str) -> float:
    host = samples[(samples.family == family) & (samples.rung == rung) & (samples.profile == profile)
                   & (samples.l2_state == "natural") & samples.call_wall_time_us.notna()]
    return float((host.call_wall_time_us - host.consumer_artifact_time_us).median())


def smallest_k(t_ref: float, t_cons: float, charge: float) -> int:
    k = max(1, math.ceil(charge / (t_ref - t_cons) - 1e-9))
    while k * t_ref < charge + k * t_cons - 1e-9:
        k += 1
    return k


def expected(cells: pd.DataFrame, samples: pd.DataFrame, family: str, profile: str) -> dict[str, str]:
    med = {r: float(cell(cells, family, r, profile, "consumer", "kernel").median_us)
           for r in ("baseline", "optmt", "rpf_optmt", "l2p_optmt")}
    pin = float(cell(cells, family, "l2p_optmt", profile, "pin", "kernel").median_us)
    kern = {r: float(cell(cells, family, r, profile, "kernels", "kernel").median_us) for r in ("baseline", "l2p_optmt")}
    art = {r: float(cell(cells, family, r, profile, "consumer", "artifact").median_us) for r in ("baseline", "l2p_optmt")}
    wall = {r: float(cell(cells, family, r, profile, "call", "wall").median_us) for r in ("baseline", "l2p_optmt")}
    host = excess(samples, family, "l2p_optmt", profile) - excess(samples, family, "optmt", profile) - pin
    ref, new = (cell(cells, family, r, profile, "consumer", "kernel") for r in ("optmt", "l2p_optmt"))
    disjoint = ref.ci95_lo_us > new.ci95_hi_us or ref.ci95_hi_us < new.ci95_lo_us
    x = lambda v: f"{v:.2f}×"  # noqa: E731
    out = {rung: f"{med[key]:.1f} µs" for rung, key in (("baseline", "baseline"), ("OptMT", "optmt"),
                                                        ("RPF+OptMT", "rpf_optmt"), ("L2P+OptMT", "l2p_optmt"))}
    out.update({
        "pin": f"{pin:.1f} µs", "pin step's launch + sync": f"{host:.1f} µs",
        "L2P vs base, artifact's timer": x(art["baseline"] / art["l2p_optmt"]),
        "… consumer kernel": x(med["baseline"] / med["l2p_optmt"]),
        "… pin + consumer": x(kern["baseline"] / kern["l2p_optmt"]),
        "… + launch + sync": x(kern["baseline"] / (kern["l2p_optmt"] + host)),
        "… whole call (wall)": x(wall["baseline"] / wall["l2p_optmt"]),
    })
    if disjoint and med["l2p_optmt"] < med["optmt"]:
        out["break-even vs OptMT, kernel-charged"] = str(smallest_k(med["optmt"], med["l2p_optmt"], pin))
        out["… wall-charged"] = str(smallest_k(med["optmt"], med["l2p_optmt"], pin + host))
    else:
        out["break-even vs OptMT, kernel-charged"] = "within noise" if not disjoint else "never"
    return out


@pytest.mark.parametrize("family", list(TABLES))
def test_headline_table_recomputed_with_pandas_alone(cells, samples, family) -> None:
    pin, title = TABLES[family]
    table = readme_table(title)
    assert list(table.index) == PROFILES
    for profile in PROFILES:
        row = table.loc[profile]
        for column, value in expected(cells, samples, family, profile).items():
            header = f"pin ({pin})" if column == "pin" else column
            shown = row[header].replace(" (within noise)", "")
            assert shown == value, f"{family}/{profile} {header}: README {row[header]!r}, recomputed {value!r}"


def test_the_recomputation_is_not_trivially_equal(cells, samples) -> None:
    """Different profiles give different figures: the comparison above is between distinct numbers."""
    a = expected(cells, samples, "artifact", "reuse_high")
    b = expected(cells, samples, "artifact", "random")
    assert a["break-even vs OptMT, kernel-charged"] != b["break-even vs OptMT, kernel-charged"]
    assert a["pin step's launch + sync"] != expected(cells, samples, "artifact", "reuse_low")["pin step's launch + sync"]

"""Write examples/reproduction/README.md from the runs it names: does a fresh H200 run of the
default ladder and the default profile reproduce the committed ones?

    python tools/docgen reproduction           # print
    python tools/docgen reproduction --write   # examples/reproduction/README.md

Every figure is computed here by l2attr.analysis.reproduce from the committed run dirs;
tests/test_reproduction.py fails when the README and the runs disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from l2attr.analysis.reproduce import ladder_diff, layer_b_definition, layer_b_values  # noqa: E402
from l2attr.rundir import RunDir  # noqa: E402
from l2attr.schema import CELLS, METRICS, SAMPLES  # noqa: E402

EX = ROOT / "examples"
NEW = EX / "reproduction"
# committed: two default ladder processes on one GPU and the default profile, made after the engine
# redesign (2026-12-01 17:29); fresh: the same three after the ladder became its own package and the
# house's last moves (tools/device_final.sh at d1021aa, 2026-12-01 20:51), on another machine
OLD_LADDER, OLD_LADDER_2 = NEW / "20261201T172917Z-blocking", NEW / "20261201T173003Z-blocking-2"
OLD_PROFILE = NEW / "20261201T173035Z-profile"
NEW_LADDER, NEW_LADDER_2 = NEW / "20261201T205108Z-blocking", NEW / "20261201T205136Z-blocking-2"
NEW_PROFILE = NEW / "20261201T205212Z-profile"


def _read(path: Path, table):
    return RunDir.open(path).read(table)


def _uuid(path: Path) -> str:
    return (RunDir.open(path).manifest().get("gpu") or {}).get("uuid") or "not recorded"


def _diff(a: Path, b: Path):
    """ladder_diff of run b against run a (consumer kernel-timer cells)."""
    return ladder_diff(_read(a, CELLS), _read(a, SAMPLES), _read(b, CELLS), _read(b, SAMPLES))


def text() -> str:
    d = _diff(OLD_LADDER, NEW_LADDER)
    cross_old = float(_diff(OLD_LADDER, OLD_LADDER_2)["diff_pct"].abs().max())
    cross_new = float(_diff(NEW_LADDER, NEW_LADDER_2)["diff_pct"].abs().max())
    beyond_spread = d[d["diff_pct"].abs() > d["spread_pct"]]
    beyond_committed = d[d["diff_pct"].abs() > cross_old + d["spread_pct"]]
    worst = d.loc[d["diff_pct"].abs().idxmax()]
    same_machine = _uuid(OLD_LADDER) == _uuid(NEW_LADDER) != "not recorded"
    lines = [
        "# Reproduction: a fresh H200 run against the committed ones (generated)",
        "",
        "Made by `python tools/docgen reproduction --write` from the run dirs below; "
        "`tests/test_reproduction.py` fails when this page and the runs disagree. The committed runs were made "
        "by `bash tools/device_engine.sh` (at d1021aa) with `LADDER_TWICE=1 PROFILE=1` after the engine redesign; the fresh "
        "ones by `bash tools/device_final.sh` (at d1021aa) after the ladder moved into its own package (`l2attr/dlrm/`), both "
        "with the default blocking timer; large tables are stored compressed (`*.csv.gz`, the largest `*.csv.xz`, read by l2attr like the "
        "plain files). The two default processes of the fresh call are also set side by side by `l2attr report` "
        "in `compare-two-processes.md` (its compare section).",
        "",
        f"- the committed spread: two committed processes on one GPU (`{OLD_LADDER.name}`, `{OLD_LADDER_2.name}`, "
        f"{_uuid(OLD_LADDER_2)}) are at most {cross_old:.2f} % apart over their consumer kernel-timer cells; the two "
        f"fresh processes (`{NEW_LADDER.name}`, `{NEW_LADDER_2.name}`, {_uuid(NEW_LADDER_2)}) at most {cross_new:.2f} %.",
        f"- committed `{OLD_LADDER.name}` against fresh `{NEW_LADDER.name}`: {len(d)} consumer kernel-timer cells, "
        f"|difference| median {d['diff_pct'].abs().median():.2f} %, at most {abs(worst['diff_pct']):.2f} % "
        f"({worst['family']}/{worst['rung']}/{worst['profile']}); {len(beyond_spread)} of {len(d)} beyond the larger of "
        f"the two runs' repeat spreads, {len(beyond_committed)} of {len(d)} beyond the committed spread (the committed "
        "cross-process difference plus the larger repeat spread)"
        + (f": {', '.join(f'{r.family}/{r.rung}/{r.profile} {r.diff_pct:+.2f} %' for r in beyond_committed.itertuples())}"
           if len(beyond_committed) else "") + "."
        + ("" if same_machine else " The two calls ran on different machines (GPU uuids differ), so this is a "
           "comparison of two machines: its differences include the machine's."),
    ]
    old_c, new_c = _read(OLD_LADDER, CELLS), _read(NEW_LADDER, CELLS)
    host = {}
    for q, t in (("consumer", "artifact"), ("call", "wall")):
        a = new_c[(new_c.quantity == q) & (new_c.timer == t)]
        b = old_c[(old_c.quantity == q) & (old_c.timer == t)]
        m = a.merge(b, on=["family", "rung", "pin", "profile", "l2_state"], suffixes=("_n", "_o"))
        host[q] = float(((m["median_us_n"] / m["median_us_o"] - 1) * 100).median())
    lines.append(
        f"- host clocks (the artifact's timer and the whole call) depend on the machine: fresh against committed "
        f"{host['consumer']:+.1f} % / {host['call']:+.1f} % (median over cells); host-clock figures are compared "
        "within one process only.")
    old_m, new_m = _read(OLD_PROFILE, METRICS), _read(NEW_PROFILE, METRICS)
    defn = layer_b_definition(old_m, new_m)
    vals = layer_b_values(old_m, new_m)
    lines += [
        f"- layer B, committed `{OLD_PROFILE.name}` against fresh `{NEW_PROFILE.name}`: "
        f"{'identical in definition' if defn.identical else 'NOT identical in definition'} (same metric names: "
        f"{defn.same_metrics}, same cell/table/batch keys: {defn.same_keys}, rows {defn.rows_old} and {defn.rows_new}); "
        f"per consumer cell the headline hit rate moved by at most {vals['hit_rate_diff_points'].abs().max():.2f} points "
        f"and DRAM read by at most {vals['dram_read_diff_pct'].abs().max():.2f} % over {len(vals)} cells.",
        "",
        "| family | rung | profile | committed µs | fresh µs | difference | larger repeat spread |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {r.family} | {r.rung} | {r.profile} | {r.median_us_old:.2f} | {r.median_us_new:.2f} | "
              f"{r.diff_pct:+.2f} % | {r.spread_pct:.2f} % |" for r in d.itertuples()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    if ap.parse_args().write:
        (NEW / "README.md").write_text(text())
    else:
        print(text())

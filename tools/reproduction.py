"""Write examples/reproduction/README.md from the runs it names: does a fresh H200 run of the
default ladder and the default profile reproduce the committed ones?

    python tools/reproduction.py           # print
    python tools/reproduction.py --write   # examples/reproduction/README.md

Every figure is computed here by l2attr.analysis.reproduce from the committed run dirs;
tests/test_reproduction.py fails when the README and the runs disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from l2attr.analysis.reproduce import ladder_diff, layer_b_definition, layer_b_values  # noqa: E402
from l2attr.rundir import RunDir  # noqa: E402
from l2attr.schema import CELLS, METRICS, SAMPLES  # noqa: E402

EX = ROOT / "examples"
OLD_LADDER, OLD_PROFILE = EX / "20261130T231356Z-bench", EX / "20261130T231541Z-profile"
NEW = EX / "reproduction"
NEW_LADDER, NEW_LADDER_2 = NEW / "20261201T172917Z-blocking", NEW / "20261201T173003Z-blocking-2"
NEW_PROFILE = NEW / "20261201T173035Z-profile"


def _read(path: Path, table):
    return RunDir.open(path).read(table)


def text() -> str:
    old_c, old_s = _read(OLD_LADDER, CELLS), _read(OLD_LADDER, SAMPLES)
    new_c, new_s = _read(NEW_LADDER, CELLS), _read(NEW_LADDER, SAMPLES)
    two_c, two_s = _read(NEW_LADDER_2, CELLS), _read(NEW_LADDER_2, SAMPLES)
    uuid = lambda p: (RunDir.open(p).manifest().get("gpu") or {}).get("uuid") or "not recorded"  # noqa: E731
    d = ladder_diff(old_c, old_s, new_c, new_s)
    two = ladder_diff(two_c, two_s, new_c, new_s)
    cross = float(two["diff_pct"].abs().max())
    beyond_spread = d[d["diff_pct"].abs() > d["spread_pct"]]
    beyond_cross = d[d["diff_pct"].abs() > max(cross, 0.0) + d["spread_pct"]]
    worst = d.loc[d["diff_pct"].abs().idxmax()]
    lines = [
        "# Reproduction: a fresh H200 run against the committed ones (generated)",
        "",
        "Made by `python tools/reproduction.py --write` from the run dirs below; "
        "`tests/test_reproduction.py` fails when this page and the runs disagree. The fresh runs were made "
        "by `bash tools/device_engine.sh` with `LADDER_TWICE=1 PROFILE=1` (two default `l2attr ladder` "
        "processes, then `benchmarks/bench_profile.py`) on the code after the engine redesign; their "
        "large tables are stored gzipped (`*.csv.gz`, read by l2attr like the plain files).",
        "",
        f"- committed ladder `{OLD_LADDER.name}` (GPU {uuid(OLD_LADDER)}, spin 50 µs timer) against fresh "
        f"`{NEW_LADDER.name}` (GPU {uuid(NEW_LADDER)}, blocking timer): {len(d)} consumer kernel-timer cells, "
        f"|difference| median {d['diff_pct'].abs().median():.2f} %, at most {abs(worst['diff_pct']):.2f} % "
        f"({worst['family']}/{worst['rung']}/{worst['profile']}); {len(beyond_spread)} of {len(d)} beyond the "
        f"larger of the two runs' repeat spreads.",
        f"- two fresh processes on one GPU (`{NEW_LADDER.name}`, `{NEW_LADDER_2.name}`, both {uuid(NEW_LADDER_2)}): "
        f"{len(two)} cells, at most {cross:.2f} % apart — the cross-process spread.",
        f"- committed against fresh, judged by that cross-process spread plus the larger repeat spread: "
        f"{len(beyond_cross)} of {len(d)} cells beyond it"
        + (f" ({', '.join(f'{r.family}/{r.rung}/{r.profile} {r.diff_pct:+.2f} %' for r in beyond_cross.itertuples())})"
           if len(beyond_cross) else "") + ". The committed run's machine recorded no GPU UUID, so this is "
        "a comparison of two machines.",
    ]
    pre = EX / "timer" / "20261201T163552Z-blocking"          # same day, before the ladder moved onto cell.py
    host = {}
    for tag, path in (("committed", OLD_LADDER), ("pre-refactor", pre)):
        other = _read(path, CELLS)
        for q, t in (("consumer", "artifact"), ("call", "wall")):
            a = new_c[(new_c.quantity == q) & (new_c.timer == t)]
            b = other[(other.quantity == q) & (other.timer == t)]
            m = a.merge(b, on=["family", "rung", "pin", "profile", "l2_state"], suffixes=("_n", "_o"))
            host[(tag, q)] = float(((m["median_us_n"] / m["median_us_o"] - 1) * 100).median())
    lines.append(
        f"- host clocks (the artifact's timer and the whole call) depend on the machine: fresh against committed "
        f"{host[('committed', 'consumer')]:+.1f} % / {host[('committed', 'call')]:+.1f} % (median over cells), "
        f"fresh against `{pre.name}` (GPU {uuid(pre)}, the same day, before the ladder moved onto the one cell "
        f"protocol) {host[('pre-refactor', 'consumer')]:+.1f} % / {host[('pre-refactor', 'call')]:+.1f} %. All three ran "
        "on different machines, so no part of these shifts can be laid on the redesign or on the machine; host-clock "
        "figures are compared within one process only.")
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

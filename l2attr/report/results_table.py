"""The study's results tables (the docs' results block) declared once, as columns (report/columns.py).

One row per profile of a series: the rungs' consumer medians, the pin, then the pin rung against
the baseline (or, for a family without the baseline rungs, against its own unpinned consumer) read
four ways, and the break-even. A record joins the profile's ladder rows (`med`, by rung) with its
verdict row (`v`) and, for the pin-only family, its family row (`fam`); every cell is read from one
of them by name, so a column is one line here and each printer draws the same table.
"""

from __future__ import annotations

from typing import Any, Callable

from l2attr.analysis.common import ordered_profiles, rung_label, why
from l2attr.study.study import Analysis
from l2attr.report import fmt
from l2attr.report.columns import Cell, Column, Record, Table, dash, key, missing, num, table
from l2attr.vocab import Judgement, RungId

# the rungs whose consumer medians the table shows, in its column order
LADDER_RUNGS = (RungId.BASELINE, RungId.OPTMT, RungId.RPF_OPTMT, RungId.L2P_OPTMT)


def _from(part: str, field: str, formatter: Callable[[Any], str], rung: str | None = None) -> Callable[[Record], Cell]:
    """A number read from the record's `part` (a rung's ladder row when `rung` is given)."""
    def cell(rec: Record) -> Cell:
        row = rec[part].get(rung) if rung is not None else rec[part]
        if row is None:
            return dash(f"{rung_label(rung)} not measured on this profile", "num")
        return num(row, field, formatter)
    return cell


def judged(header: str, field: str, judgement: str) -> Column:
    """A verdict speedup, '(within noise)' after it where the significance rule says so."""
    def cell(rec: Record) -> Cell:
        c = num(rec["v"], field, fmt.times)
        return c.but(text=f"{c.text} (within noise)") if c.missing is None and \
            rec["v"].get(judgement) == Judgement.WITHIN_NOISE else c
    return Column(header, cell, "num")


def break_even(header: str, field: str) -> Column:
    """The verdict's break-even text ('9', 'never', 'within noise'), n/a with the analysis' reason."""
    reason_field = "break_even_calls_wall" if field == "break_even_wall" else "break_even_calls"

    def cell(rec: Record) -> Cell:
        value = rec["v"].get(field)
        if value in (None, "n/a"):
            return missing(why(rec["v"], reason_field), "num")
        return Cell(str(value), "num")
    return Column(header, cell, "num")


def ladder_columns(pin: str) -> tuple[Column, ...]:
    """A family with the baseline rungs: consumer medians, the pin, L2P+OptMT vs baseline."""
    return (key("profile"),
            *(Column(rung_label(r), _from("med", "consumer_us", fmt.us, r), "num") for r in LADDER_RUNGS),
            Column(f"pin ({pin})", _from("med", "pin_us", fmt.us, RungId.L2P_OPTMT), "num"),
            Column("pin step's launch + sync", _from("v", "pin_host_us", fmt.us), "num"),
            judged("L2P vs base, artifact's timer", "speedup_artifact", "judgement_artifact"),
            judged("… consumer kernel", "speedup_consumer", "judgement_consumer"),
            judged("… pin + consumer", "speedup_kernels", "judgement_kernels"),
            judged("… + launch + sync", "speedup_host", "judgement_host"),
            judged("… whole call (wall)", "speedup_wall", "judgement_wall"),
            break_even("break-even vs OptMT, kernel-charged", "break_even"),
            break_even("… wall-charged", "break_even_wall"))


def pin_only_columns(pin: str, unpinned: str, pinned: str) -> tuple[Column, ...]:
    """A family without the baseline rungs (the fast one): its consumer with and without the pin."""
    return (key("profile"),
            Column(unpinned, _from("fam", "consumer_us", fmt.us), "num"),
            Column(pinned, _from("fam", "pinned_consumer_us", fmt.us), "num"),
            Column(f"pin ({pin})", _from("fam", "pin_us", fmt.us), "num"),
            Column("pin step's launch + sync", _from("v", "pin_host_us", fmt.us), "num"),
            Column("× tuned OptMT consumer", _from("fam", "vs_tuned", fmt.times), "num"),
            Column("DRAM, % of read-only HBM", _from("fam", "dram_fraction", lambda x: fmt.pct(100 * x)), "num"),
            judged(f"{pinned} vs {unpinned}, pin free", "pin_speedup_consumer", "pin_judgement_consumer"),
            judged("… pin kernel charged", "pin_speedup_charged", "pin_judgement_charged"),
            judged("… + launch + sync", "pin_speedup_host", "pin_judgement_host"),
            break_even(f"break-even vs {unpinned}, kernel-charged", "break_even"),
            break_even("… wall-charged", "break_even_wall"))


def _verdict_of(view: Analysis) -> Callable[[str], dict[str, Any]]:
    verdict = view.verdict.set_index("profile") if not view.verdict.empty else None
    return lambda p: verdict.loc[p].to_dict() if verdict is not None and p in verdict.index else {}


def ladder_results(view: Analysis, pin: str) -> Table:
    """One row per profile of a series with the baseline rungs."""
    lad = view.state_rows(view.ladder)
    verdict = _verdict_of(view)
    recs = [{"profile": p, "med": {r["rung"]: r for r in lad[lad["profile"] == p].to_dict("records")},
             "v": verdict(p)} for p in ordered_profiles(lad["profile"])]
    return table(ladder_columns(pin), recs)


def pin_only_results(an: Analysis, view: Analysis, series: Any) -> Table:
    """One row per profile of a pin-only family (study.families' rows of the series)."""
    from l2attr.study.families import rung_name

    fam = an.families[an.families["series"] == series.name] if not an.families.empty else an.families
    verdict = _verdict_of(view)
    recs = [{"profile": r["profile"], "fam": r, "v": verdict(r["profile"])} for r in fam.to_dict("records")]
    columns = pin_only_columns(series.pin, rung_name(series.family, RungId.OPTMT),
                               rung_name(series.family, RungId.L2P_OPTMT))
    return table(columns, recs)

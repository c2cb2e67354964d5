"""Read `.ncu-rep` reports into the tidy METRICS table (one row per kernel and metric), and name
a report's kernels by the order they were launched in (`label_medians`, for benchmarks).

The rows come from a child process (ncu_rows: ncu_report must load before numpy); here they get
their condition, the METRICS columns and the warnings a reader must see: how the report was
recorded (ncu_file) and what looks wrong in the numbers. Range names are built and parsed by
l2attr.vocab (`range_name`, `parse_range_name`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from l2attr.catalog.sets import derived_specs
from l2attr.errors import UserError
from l2attr.profile.ncu_child import run_reader
from l2attr.profile.ncu_file import check_report_file, recorded_settings, recorded_warnings
from l2attr.schema import METRICS
from l2attr.vocab import Condition, L2Condition

if TYPE_CHECKING:
    import pandas as pd

EXTRA_COLUMNS = tuple(METRICS.optional)   # beyond the required columns, kept for traceability
CSV_FIRST = ("kernel", "nvtx_range", "metric", "value", "unit")


@dataclass
class ImportResult:
    """The tidy table plus what looked wrong, as data the report can show."""

    table: "pd.DataFrame"
    warnings: list[str] = field(default_factory=list)
    chip: str | None = None
    partial: list[str] = field(default_factory=list)   # damaged results left out (allow_partial)


def control_condition(l2_state: str) -> str:
    """A control run's arm from the L2 state its child ran with: after the pin, after pin + flush
    (the 'no pin effect' arm), after pin + persisting-L2 reset (evict-last priority removed)."""
    if l2_state in (L2Condition.FLUSH.value, L2Condition.FLUSH_AFTER_PIN.value):
        return Condition.CONTROL_AFTER_FLUSH.value
    if l2_state == L2Condition.RESET_AFTER_PIN.value:
        return Condition.CONTROL_AFTER_RESET.value
    return Condition.CONTROL_AFTER_PIN.value


def _read_rows_isolated(path: Path, keep_all: bool, keep: Iterable[str], nvtx_include: Iterable[str] = (),
                        kernel_name: str | None = None, allow_partial: bool = False) -> dict[str, Any]:
    """ncu_rows.read_rows in a fresh interpreter that loads ncu_report before numpy."""
    args = [str(path), "--keep", ",".join(keep)]
    if keep_all:
        args.append("--keep-all")
    if allow_partial:
        args.append("--allow-partial")
    for inc in nvtx_include:
        args += ["--nvtx-include", inc]
    if kernel_name:
        args += ["--kernel-name", kernel_name]
    return run_reader("l2attr.profile.ncu_rows", args, path)


def read_report(path: Path | str, *, condition: str | Callable[[str], str] = Condition.LADDER.value,
                keep_all: bool = False, keep: Iterable[str] = (), isolate: bool = True,
                nvtx_include: Iterable[str] = (), kernel_name: str | None = None,
                allow_partial: bool = False) -> ImportResult:
    """One row per (kernel launch, metric) of a report, in the METRICS schema plus extras.

    `condition` is a label for every row, or a function of the row's l2_state (control runs).
    `keep_all` keeps the device/launch/profiler attributes and rollups skipped by default; names
    in `keep` are kept whatever their prefix (a user who asked for `launch__grid_size` gets it).
    `isolate=False` reads in this process (safe only where ncu_report and numpy coexist).
    A result ncu_report reads as empty (damaged bytes) refuses the report; with `allow_partial` the
    intact kernels are kept and `partial` says what was left out.
    """
    path = check_report_file(Path(path))
    keep, includes = list(keep), list(nvtx_include)
    if isolate:
        data = _read_rows_isolated(path, keep_all, keep, includes, kernel_name, allow_partial)
    else:
        from l2attr.profile.ncu_rows import read_rows

        data = read_rows(path, keep_all, keep, includes, kernel_name, allow_partial)
    rows = data["rows"]
    for row in rows:
        row["condition"] = condition(row["l2_state"]) if callable(condition) else condition
    df = _frame(rows)
    if (includes or kernel_name) and df.empty:
        raise UserError(f"{path}: no kernel matches the filter "
                        f"({', '.join([*includes, *([kernel_name] if kernel_name else [])])})")
    warnings = recorded_warnings(recorded_settings(path), df) + quality_warnings(df, keep)
    return ImportResult(df, warnings, data.get("chip"), list(data.get("partial") or []))


def _frame(rows: list[dict[str, Any]]) -> "pd.DataFrame":
    import pandas as pd

    cols = list(METRICS.columns) + list(EXTRA_COLUMNS)
    df = pd.DataFrame(rows, columns=cols)
    for c in ("table", "batch", "launch"):
        df[c] = df[c].astype("Int64")
    df["value"] = df["value"].astype(float)
    for c in ("cell", "condition", "role", "family", "rung", "pin", "profile", "kernel", "nvtx_range",
              "metric", "unit", "l2_state"):
        df[c] = df[c].fillna("").astype(str)
    return df


def csv_order(df: "pd.DataFrame") -> "pd.DataFrame":
    """The friendlier column order for `--csv`: what and how much first, identity after."""
    first = [c for c in CSV_FIRST if c in df.columns]
    return df[first + [c for c in df.columns if c not in first]]


# -- checks --------------------------------------------------------------------------------------

def quality_warnings(df: "pd.DataFrame", expected: Iterable[str] = ()) -> list[str]:
    """What a reader must know before trusting the numbers (never a silent zero).

    * an expected metric missing from every kernel, or zero on every kernel;
    * a percentage outside [0, 100] (inputs from different passes: docs/facts.md#rates-across-passes);
    * a hit/miss pair that is zero on every kernel, so no rate could be derived.
    """
    warnings: list[str] = []
    if df.empty:
        return ["the report holds no profiled kernels"]
    present = set(df["metric"])
    for m in expected:
        if m not in present:
            warnings.append(f"{m}: missing from every kernel (not collected on this chip/ncu?)")
        elif (df.loc[df["metric"] == m, "value"] == 0).all():
            warnings.append(f"{m}: zero on every kernel; check that it counts this traffic")
    pct = df[(df["unit"] == "%") | df["metric"].str.endswith(".pct")]
    bad = pct[(pct["value"] < 0) | (pct["value"] > 100)]
    for _, row in bad.iterrows():
        where = row["nvtx_range"] or row["kernel"]
        warnings.append(f"{row['metric']} = {row['value']:.2f} % for {where}: outside [0, 100] "
                        "(its inputs came from different replay passes); prefer the rate from counts")
    derived = {d.hits: d for d in derived_specs(present)}
    for hit, d in derived.items():
        if d.name not in present:
            warnings.append(f"{d.name}: not derived, {d.hits} and {d.misses} are zero on every kernel")
    return warnings


def import_reports(paths: Iterable[tuple[Path, str | Callable[[str], str]]], expected: Iterable[str] = (),
                   keep_all: bool = False) -> ImportResult:
    """Import several reports into one table; warnings cover the union."""
    import pandas as pd

    frames, chip = [], None
    keep = list(expected)
    for path, condition in paths:
        res = read_report(path, condition=condition, keep_all=keep_all, keep=keep)
        frames.append(res.table)
        chip = chip or res.chip
    df = pd.concat(frames, ignore_index=True) if frames else _frame([])
    return ImportResult(df, quality_warnings(df, expected), chip)


# -- kernels named by launch order ---------------------------------------------------------------
# A benchmark that launches many variants of one kernel (same function name, different compile
# options or launch shapes) cannot tell them apart in the report by name; it can write down, launch
# by launch, which variant it started, and ncu records the profiled kernels in launch order. This
# joins the two and gives per-name medians, refusing (rather than mislabelling) when the counts
# differ.

def label_medians(table: pd.DataFrame, labels: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per label: the median of each metric over that label's launches.

    `table` is `read_report(...).table` (one row per launch and metric, `launch` the
    position among the report's kernels); `labels[i]` names the i-th profiled launch."""
    wide = table[table["metric"].isin(metrics)].pivot_table(
        index="launch", columns="metric", values="value", aggfunc="first").sort_index()
    if len(wide) != len(labels):
        raise UserError(f"{len(wide)} kernels in the report, {len(labels)} launches labelled: "
                        "the report does not match the launch list")
    missing = [m for m in metrics if m not in wide.columns]
    if missing:
        raise UserError(f"the report has no {', '.join(missing)}")
    wide = wide.assign(label=list(labels))
    return wide.groupby("label", sort=False)[list(metrics)].median()

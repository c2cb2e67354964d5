"""The row contract of every table a run dir holds, built from the typed schema.

Why here and not in each loader: the ladder's cells, the profile's metrics, the timeline's
phases and the five sweeps' points break in the same ways (a repeated key, an interval upside
down, an index of 1.5, a word no writer uses, a time of 1e300 us), so each table states which of
the shared rules (rules.py) it obeys, and the loaders call `check_table` after parsing numbers.
Presence, finiteness and sign of the numeric columns stay with the loaders' own column lists
(analysis/load.py NUMERIC_COLUMNS, sweep/load.py NUMERIC).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import pandas as pd

from l2attr.errors import Damage
from l2attr.integrity import rules
from l2attr.dlrm.declare import APW, RUNG_BY_NAME
from l2attr.schema import CELLS, EXP_CELLS, EXP_METRICS, EXP_SAMPLES, METRICS, PHASES, SAMPLES, TIMELINE, Table
from l2attr.vocab import (Condition, Discard, Family, Phase, Pin, RepeatMode, Role, Timer, CELL_CONDITIONS,
    CELL_QUANTITIES, LADDER_STATES, RANGE_ROLES, condition_words)

# No kernel call l2attr times lasts 10 s: a larger "time" is a damaged number (1e300 is finite).
MAX_TIME_US = 1e7
MAX_TIME_WHY = "10 s per call: not a kernel time"
MAX_COUNT = 1e18           # bytes, sectors, requests, cycles or ns of one kernel: beyond any GPU's
RUNGS = (*RUNG_BY_NAME, APW.name)
PHASE_NAMES = Phase.values()
TIMES = ("median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us")


@dataclass(frozen=True)
class Contract:
    """What every row of one table obeys, beyond its columns being there and numeric."""

    table: Table
    whole: tuple[str, ...] = ()                       # counts and indices
    ordered: tuple[tuple[str, ...], ...] = ()         # per row, values that do not decrease
    known: dict[str, Iterable[str]] = field(default_factory=dict)     # column -> the writers' words
    may_be_empty: tuple[str, ...] = ()                # known-word columns a writer may leave empty
    times: tuple[str, ...] = ()                       # at most MAX_TIME_US
    at_least: dict[str, float] = field(default_factory=dict)
    together: tuple[tuple[str, ...], ...] = ()        # empty only all at once
    numbers: tuple[str, ...] = ()                     # left as written, but numbers >= 0
    filled: tuple[str, ...] = ()                      # words no row leaves empty (a key's name)


SPREAD = (("p10_us", "median_us", "p90_us"), ("ci95_lo_us", "ci95_hi_us"))

CONTRACTS: dict[str, Contract] = {c.table.name: c for c in (
    # the optional host times and the discard flag too (issue 38: a negative set-aside time and a
    # timer_discard of 'maybe' were read as they stood)
    Contract(SAMPLES, whole=("repeat", "batch", "table"), filled=("profile",),
             numbers=("launch_lag_us", "window_setaside_us", "window_reset_us", "prepare_wall_time_us",
                      "pin_wall_time_us", "sm_clock_mhz", "mem_clock_mhz", "power_w"),
             known={"family": Family.values(), "rung": RUNGS, "pin": Pin.values(), "l2_state": condition_words(LADDER_STATES),
                    "timer_discard": Discard.values()}, may_be_empty=("timer_discard",),
             times=("pin_time_us", "consumer_time_us", "consumer_artifact_time_us", "call_wall_time_us")),
    Contract(CELLS, whole=("n_samples", "bytes_per_call"), ordered=SPREAD, filled=("profile",),
             known={"family": Family.values(), "rung": RUNGS, "pin": Pin.values(), "l2_state": condition_words(LADDER_STATES),
                    "quantity": CELL_QUANTITIES, "timer": Timer.values()},
             times=TIMES),
    Contract(METRICS, whole=("table", "batch", "launch"), together=(("family", "rung"),), numbers=("launch",),
             filled=("metric", "report"),
             known={"condition": Condition.values(), "role": RANGE_ROLES, "family": Family.values(),
                    "rung": RUNGS, "pin": (*Pin.values(), "")},
             may_be_empty=("family", "rung", "pin")),
    Contract(TIMELINE, at_least={"t_us": 0.0}),
    Contract(PHASES, whole=("samples",), ordered=(("start_us", "end_us"),), known={"phase": PHASE_NAMES},
             at_least={"start_us": 0.0}),
    Contract(EXP_SAMPLES, whole=("repeat", "call"),
             known={"condition": condition_words(CELL_CONDITIONS), "mode": (RepeatMode.DEVICE.value, RepeatMode.HOST.value),
                    "discard": Discard.values()}, may_be_empty=("discard",),
             times=("producer_time_us", "consumer_time_us", "producer_wall_us", "consumer_wall_us",
                    "call_wall_us", "producer_enqueue_us", "consumer_enqueue_us")),
    Contract(EXP_CELLS, whole=("n_samples", "n_discarded"), ordered=SPREAD,
             known={"condition": condition_words(CELL_CONDITIONS), "quantity": CELL_QUANTITIES, "timer": Timer.values()},
             times=TIMES),
    Contract(EXP_METRICS, whole=("call", "launch"), filled=("metric", "experiment"),
             known={"condition": (*condition_words(CELL_CONDITIONS), ""), "role": (Role.PRODUCER.value, Role.CONSUMER.value)},
             may_be_empty=("condition",)),
)}


def check_table(df: pd.DataFrame, name: str, source: str, damage: Damage,
                contracts: Mapping[str, Contract] = CONTRACTS) -> pd.DataFrame:
    """The rows of table `name` that obey its contract; each broken rule goes to `damage` (strict:
    the first one raises). Call after the numeric columns are parsed. A kind that states its own
    tables' contracts hands them in `contracts` (the sweep's: sweep/check/tables.py)."""
    contract = contracts[name]
    df = df.reset_index(drop=True)
    bad = rules.unique_keys(df, contract.table.key, source, damage)
    bad |= rules.whole_numbers(df, contract.whole, source, damage)
    for columns in contract.ordered:
        bad |= rules.ordered(df, columns, source, damage)
    for column, words in contract.known.items():
        bad |= rules.known_words(df, column, words, source, damage, may_be_empty=column in contract.may_be_empty)
    for column in contract.times:
        bad |= rules.at_most(df, column, MAX_TIME_US, MAX_TIME_WHY, source, damage)
    for column, limit in contract.at_least.items():
        bad |= rules.at_least(df, column, limit, source, damage)
    bad |= rules.numbers(df, contract.numbers, source, damage)
    bad |= rules.filled(df, contract.filled, source, damage)
    for columns in contract.together:
        bad |= rules.together(df, columns, source, damage)
    if name in (METRICS.name, EXP_METRICS.name):
        bad |= metric_ranges(df, source, damage)
    if name == METRICS.name:
        bad |= range_identity(df, source, damage)
    return df[~bad].reset_index(drop=True) if bad.any() else df


def metric_ranges(df: pd.DataFrame, source: str, damage: Damage) -> pd.Series:
    """A count (bytes, sectors, passes, ns) is never negative; a percentage lies in [0, 100]."""
    value = pd.to_numeric(df["value"], errors="coerce")
    unit = df["unit"].astype(str)
    pct = unit == "%"
    count = ~pct & (unit.isin(("byte", "sector", "pass", "ns", "request", "inst", "cycle"))
                    | df["metric"].astype(str).str.endswith(".sum"))
    shown = lambda row: f"{df['metric'].iloc[row]} = {value.iloc[row]:g}"  # noqa: E731
    bad = rules.flag(damage, source, count & (value < 0), "a count must not be negative", shown)
    bad |= rules.flag(damage, source, count & (value > MAX_COUNT), f"a count above {MAX_COUNT:g} (no kernel moves "
                      "or counts that much)", shown)
    return bad | rules.flag(damage, source, pct & ((value < 0) | (value > 100.0 + 1e-9)),
                            "a percentage must lie in [0, 100]", shown)


IDENTITY = ("role", "family", "rung", "pin", "profile", "l2_state", "cell", "table", "batch")


def range_identity(df: pd.DataFrame, source: str, damage: Damage) -> pd.Series:
    """A kernel's identity columns are what its NVTX range name says (the importer split them from
    it, names.parse_range_name): a family, pin or profile edited apart from its range names a cell
    the kernel never ran in."""
    from l2attr.names import parse_range_name

    none = pd.Series(False, index=df.index)
    if "nvtx_range" not in df.columns or df.empty:
        return none
    parsed = {r: parse_range_name(r) for r in df["nvtx_range"].dropna().astype(str).unique()}
    columns = [c for c in IDENTITY if c in df.columns]

    def said(value: object) -> str:
        if value is None or (isinstance(value, float) and value != value):
            return ""
        return f"{float(value):g}" if isinstance(value, (int, float)) else str(value)

    def differs(rng: object, *values: object) -> bool:
        ident = parsed.get(str(rng)) if isinstance(rng, str) else None
        if not ident or not ident["family"]:
            return False
        return any(said(v) != said(ident[c]) for c, v in zip(columns, values))

    # one answer per distinct row (a kernel's metrics repeat its identity columns row after row)
    memo: dict[tuple, bool] = {}
    wrong = [memo[row] if row in memo else memo.setdefault(row, differs(*row))
             for row in df[["nvtx_range", *columns]].itertuples(index=False, name=None)]
    mask = pd.Series(wrong, index=df.index)
    return rules.flag(damage, source, mask, "the kernel's identity columns (" + ", ".join(columns)
                      + ") must be what its nvtx_range names", lambda row: df["nvtx_range"].iloc[row])

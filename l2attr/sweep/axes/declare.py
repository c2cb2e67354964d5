"""What one sweep axis declares (sweep/axes/<axis>.py, one module each): its options and
their checks, its points and arms, its table, its chart and the judgement that reads it.

Why declarations: a new axis is then one module plus its registration (axes/__init__.py). The
CLI builds its flags from the options, the run loop its units from `points`, the analysis its
table and judgement from `table` / `judgement` (sweep/load.py, sweep/analyse/), the report its chart and
text from `chart` and the columns. Pure data and small functions: nothing here imports the
analysis or the report (the ladder sits below both).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from l2attr.errors import UserError
from l2attr.vocab import (Arm, DeviceLimit, LineStyle, Order, RefPoint, SweepJudgement, Quantity, Role, Timer,
    Vocab)

MiB = 1 << 20
OTHER_BATCHES = 4          # measured batches (x tables calls) per point, arm and repeat (amortisation aims itself)


@dataclass(frozen=True)
class Point:
    """One x value of a sweep and the arms measured there."""

    point: str                 # stable id, e.g. "interleaved:k8", "hot60000", "hr0.5", "occupy_20MiB"
    x: float                   # the axis value (k, hot rows, hit ratio, MiB held, MiB polluted)
    arms: tuple[Arm, ...]
    order: Order = Order.INTERLEAVED
    k: int = 1                 # consumer calls per pin
    hot_rows: int = -1         # rows pinned / in the window (-1: the workload's hot_rows)
    hit_ratio: float = 0.0     # access-policy window hitRatio (window arm only)
    occupy_bytes: int = 0      # L2 bytes held by evict_last lines of a dummy buffer before each call
    pollute_bytes: int = 0     # bytes of unrelated data streamed between pin and consumer
    groups: int = OTHER_BATCHES  # measured pin groups per (arm, repeat): a pin and its k calls, per table


# -- options ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    """One check of every value of an option: lo <= v (lo < v when lo_open) and v <= hi.
    `message` is formatted with {flag} and {v}."""

    message: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False

    def holds(self, v: float) -> bool:
        if self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo):
            return False
        return self.hi is None or v <= self.hi


@dataclass(frozen=True)
class Option:
    """A comma-list option of one axis: `l2attr sweep AXIS FLAG a,b,c`, kept in the manifest's
    sweep settings under `key` (the names the committed runs use)."""

    key: str
    flag: str
    kind: type        # int, float, or a vocabulary (a Vocab enum: its words)
    default: tuple[Any, ...]
    help: str
    bounds: tuple[Bound, ...] = ()

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def text(self, values: list[Any]) -> str:
        """The values as the flag takes them (the --profile child's argv, the help's default)."""
        return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)

    def parse(self, text: str) -> list[Any]:
        """Comma list -> values (duplicates dropped, order kept); a bad word is one line."""
        words = [w.strip() for w in text.split(",") if w.strip()]
        if issubclass(self.kind, Vocab):
            if not words or any(w not in self.kind.values() for w in words):
                raise UserError(f"{self.flag} {text!r}: use {', '.join(self.kind.values())} (comma-separated)")
            return [self.kind(w) for w in dict.fromkeys(words)]
        kind = self.kind
        out = []
        for word in words:
            try:
                value = kind(word)
            except ValueError:
                raise UserError(f"{self.flag} {text!r}: {word!r} is not "
                                f"{'an integer' if kind is int else 'a number'}") from None
            if kind is float and not math.isfinite(value):
                raise UserError(f"{self.flag} {text!r}: {word!r} is not a finite number")
            out.append(value)
        if not out:
            raise UserError(f"{self.flag} {text!r}: give at least one value")
        return list(dict.fromkeys(out))

    def coerce(self, values: Any) -> list[Any]:
        """Values from a caller or a manifest -> the option's types (words -> their enum)."""
        return [self.kind(v) for v in values]

    def plain(self, values: list[Any]) -> list[Any]:
        """The manifest's form: words as their plain value."""
        return [v.value if isinstance(v, Vocab) else v for v in values]

    def check(self, values: list[Any]) -> None:
        for v in values:
            for b in self.bounds:
                if not b.holds(v):
                    raise UserError(b.message.format(flag=self.flag, v=v))


# -- the table the analysis builds ----------------------------------------------------------------

@dataclass(frozen=True)
class Ref:
    """Where a reference median sits: an arm, at the row's point or at the axis' smallest x."""

    arm: Arm = Arm.OPTMT
    at: RefPoint = RefPoint.SAME


@dataclass(frozen=True)
class Median:
    """A median of sweep_points.csv: the row's arm (or `arm`), at the row's point (or `ref`)."""

    quantity: Quantity
    timer: Timer = Timer.KERNEL
    arm: Arm | None = None
    ref: Ref | None = None
    zero_if_absent: bool = False     # a step the row's arm does not take reads 0, not "not measured"


@dataclass(frozen=True)
class Speedup:
    """reference median / the row's median, with its interval and the rule's word (analysis)."""

    quantity: Quantity
    timer: Timer = Timer.KERNEL
    over: Ref | None = None                    # None: the table's reference
    ref_quantity: Quantity | None = None  # the reference's quantity when it is another one


@dataclass(frozen=True)
class Fact:
    """A column of the point's own rows (x, k, order, arm, hot_rows, hit_ratio, occupy_bytes, ...)."""

    column: str
    bytes_to_mib: bool = False
    rows_to_mib: bool = False        # hot rows x the workload's row bytes, in MiB


@dataclass(frozen=True)
class FromJudgement:
    """A column the axis' judgement fills (the formula's speedup, the share of the gain left)."""


@dataclass(frozen=True)
class Column:
    name: str
    header: str
    value: Median | Speedup | Fact | FromJudgement
    fmt: str = ".1f"                 # format spec of the shown value; "" = text
    shown: bool = True               # False: in the analysis table, not in the report's


def series_columns() -> tuple[Column, Column]:
    """The family and profile columns every sweep table starts with (a series is one of each)."""
    return (Column("family", "family", Fact("family"), ""), Column("profile", "profile", Fact("profile"), ""))


@dataclass(frozen=True)
class TableSpec:
    """One row per (family, profile, point, arm in `row_arms`), sorted by (family, profile, *sort)."""

    columns: tuple[Column, ...]
    spread: Median                   # whose 95 % interval is the row's "±" column
    reference: Ref = Ref()
    row_arms: tuple[Arm, ...] | None = None     # None: every arm of every point
    sort: tuple[str, ...] = ("x",)
    descending: bool = False
    dram: tuple[tuple[str, Arm | None, Role], ...] = ()   # (column, arm or None = the row's, role)


@dataclass(frozen=True)
class JudgementSpec:
    """Which judgement reads the table, on which speedup column(s), per which series."""

    kind: SweepJudgement
    on: str                          # a Speedup column of the table
    also: tuple[str, ...] = ()       # further Speedup columns judged the same way (e.g. the wall clock)
    by: tuple[str, ...] = ()         # series split beyond (family, profile), e.g. ("order",)
    arm: Arm | None = None           # BEST_VS_REFERENCE: the arm whose best point is judged
    formula: bool = False            # BREAK_EVEN: the k = 1 formula's prediction beside it
    what: str = ""                   # the reading's first words
    at: str = "x = {x:g}"            # how the reading names a row (formatted with the table row)


# -- the chart the report draws -----------------------------------------------------------------

@dataclass(frozen=True)
class Series:
    column: str
    label: str                       # "" for a split's main line (the split value names it)
    style: LineStyle = LineStyle.PRIMARY
    only: str | None = None          # drawn for this split value only


@dataclass(frozen=True)
class ChartSpec:
    """One figure per family: a line per (profile, series[, split value]) over `x`."""

    title: str                       # "{family}" is replaced by the figure's family
    x: str
    x_title: str
    series: tuple[Series, ...]
    y_title: str = "speedup over OptMT (×)"
    log_x: bool = False
    ticks_at_x: bool = False         # a tick at every measured x (a log axis of k)
    reference: tuple[float, str] = (1.0, "OptMT")
    split: str | None = None         # a column whose values are drawn as separate lines
    split_styles: tuple[tuple[str, LineStyle], ...] = ()
    arms: tuple[Arm, ...] | None = None          # rows drawn (None: every row)
    limits: tuple[DeviceLimit, ...] = ()         # vertical lines at recorded device limits (MiB)
    mark_judged: bool = False        # a diamond where the judgement places its x (break-even)
    height: int = 440


# -- the axis -----------------------------------------------------------------------------------

Points = Callable[[Any, Any, Any], list[Point]]          # (cfg, opts, limits or None) -> points
Check = Callable[..., None]


@dataclass(frozen=True)
class AxisSpec:
    axis: str                        # a SweepAxis for the shipped axes; any registered name works
    summary: str                     # one line: what it varies (CLI help, README table)
    title: str                       # the report chapter's title
    note: str                        # what is measured, under each chart
    answers: str                     # what it answers (README table)
    arms: tuple[Arm, ...]
    options: tuple[Option, ...]
    points: Points
    table: TableSpec
    chart: ChartSpec
    judgement: JudgementSpec
    validate: Check | None = None              # (cfg, opts): beyond the options' bounds
    validate_device: Check | None = None       # (cfg, opts, limits): needs the device's L2 facts
    check_file: str | None = None              # a recorded check in the run dir (occupy: ncu retention)
    renamed_to: str | None = None              # a former name: its runs are read, new ones refused

    def option(self, key: str) -> Option:
        return next(o for o in self.options if o.key == key)

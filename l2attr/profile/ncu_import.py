"""Read `.ncu-rep` reports into the tidy METRICS table (one row per kernel and metric).

Values come from NVIDIA's `ncu_report` module in base units (`as_double()`, `unit()`): ncu's
CSV export rescales and formats numbers (NOTES trap 3). A kernel's identity comes from its
innermost l2attr NVTX push/pop range, never from kernel order, which replay and filters change.
Range names are built and parsed by l2attr.vocab (`range_name`, `parse_range_name`).

The report is read in a child process by default (`python -m l2attr.profile.ncu_import`): the
`ncu_report` that ships in Nsight Compute 2025.3.1's extras/python crashed (SIGSEGV in
`IMetric.unit()`) on the H200 image whenever numpy had been imported before it, and l2attr
always has numpy loaded. The child imports ncu_report before anything else and sends plain
rows back as JSON; this module therefore imports no numpy/pandas at module level.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from l2attr.errors import UserError
from l2attr.catalog.chips import CHIP_BY_CC
from l2attr.catalog.sets import DERIVED_PREFIX, derived_specs
from l2attr.vocab import NVTX_DOMAIN, Condition, L2State, Role, parse_range_name

if TYPE_CHECKING:
    import pandas as pd

ROLES = Role.values()
L2_STATES = L2State.values()
CONDITIONS = Condition.values()

# Attribute metrics that describe the device, the launch or the profiler, not the kernel's work.
NOISE_PREFIXES = ("device__", "launch__", "numa__", "nvlink__", "c2clink__", "profiler__",
                  "sm__maximum_warps", "smsp__maximum_warps")
# ... except these, which the run needs (how many passes each kernel took).
ALWAYS_KEEP = ("profiler__replayer_passes",)

# Columns beyond the schema's, kept in metrics.csv for traceability.
EXTRA_COLUMNS = ("l2_state", "report", "launch")
CSV_FIRST = ("kernel", "nvtx_range", "metric", "value", "unit")
REPORT_MAGIC = b"NVR\x00"


@dataclass
class ImportResult:
    """The tidy table plus what looked wrong, as data the report can show."""

    table: "pd.DataFrame"
    warnings: list[str] = field(default_factory=list)
    chip: str | None = None


# -- NVTX range names ----------------------------------------------------------------------------

def control_condition(l2_state: str) -> str:
    """A control run's arm from the L2 state its child ran with: after the pin, after pin + flush
    (the 'no pin effect' arm), after pin + persisting-L2 reset (evict-last priority removed)."""
    if l2_state in (L2State.FLUSH.value, L2State.FLUSH_AFTER_PIN.value):
        return Condition.CONTROL_AFTER_FLUSH.value
    if l2_state == L2State.RESET_AFTER_PIN.value:
        return Condition.CONTROL_AFTER_RESET.value
    return Condition.CONTROL_AFTER_PIN.value


def innermost_range(action: Any) -> str:
    """The innermost push/pop range of a kernel launch, preferring l2attr's own ranges.

    `nvtx_state()` lists domains; each domain's `push_pop_ranges()` runs outermost to innermost.
    A range of l2attr's own NVTX domain comes back as `l2attr@<name>`; before l2attr had a domain
    its names carried an `l2attr:` prefix in the default domain, and those are read too.
    """
    state = action.nvtx_state()
    if state is None:
        return ""
    ours: list[str] = []
    legacy: list[str] = []
    others: list[str] = []
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        if domain is None:
            continue
        ranges = [str(r) for r in domain.push_pop_ranges()]
        if domain.name() == NVTX_DOMAIN:
            ours.extend(f"{NVTX_DOMAIN}@{r}" for r in ranges)
        else:
            legacy.extend(r for r in ranges if r.startswith(f"{NVTX_DOMAIN}:"))
            others.extend(ranges)
    for found in (ours, legacy, others):
        if found:
            return found[-1]
    return ""


# -- metric values -------------------------------------------------------------------------------

def _is_noise(name: str) -> bool:
    """Attributes and source-level counters (`inst_executed`: no `unit__` prefix) are not kernel metrics."""
    if name in ALWAYS_KEEP:
        return False
    return name.startswith(NOISE_PREFIXES) or "__" not in name


_ROLLUPS = (".avg", ".min", ".max")


def _drop_extra_rollups(values: dict[str, tuple[float, str]], keep: set[str]) -> None:
    """ncu adds .avg/.min/.max (over L2 slices, DRAM channels, ...) to every .sum it collects.

    They describe the spread across hardware units, not the kernel's total, and would triple the
    table; they are dropped when the .sum is there, unless asked for by name.
    """
    for name in list(values):
        for suffix in _ROLLUPS:
            if name.endswith(suffix) and name not in keep and name[: -len(suffix)] + ".sum" in values:
                del values[name]


def _numeric_value(metric: Any, string_kind: int) -> float | None:
    """A number in base units, or None for strings and metrics without a value."""
    if metric is None or metric.kind() == string_kind:
        return None
    try:
        if hasattr(metric, "has_value") and not metric.has_value():
            return None
        value = float(metric.as_double())
    except (TypeError, ValueError, RuntimeError):
        return None
    return value if math.isfinite(value) else None


def check_report_file(path: Path) -> Path:
    """One-line errors for the usual mistakes, before any reader is started."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"report not found: {path}")
    if not path.is_file():
        raise UserError(f"{path} is not a file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    if head != REPORT_MAGIC:
        raise UserError(f"{path} is not an Nsight Compute report (.ncu-rep)")
    check_complete_report(path)
    return path


# -- truncation ----------------------------------------------------------------------------------
# ncu_report reads a cut report without complaint and returns the kernels before the cut. The
# file is the magic, then size-prefixed protobuf messages: a file header (uint32 size + message),
# then blocks of [uint32 header size][block header][payload]; the block header's field 5 is the
# payload size. A whole report's blocks end exactly at the end of the file.

_PAYLOAD_SIZE_FIELD = 5


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("varint runs past its message")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if byte < 0x80:
            return value, pos


def _payload_size(header: bytes) -> int:
    """Field 5 (varint) of a block header; 0 when absent. Other fields are skipped by wire type."""
    pos, size = 0, 0
    while pos < len(header):
        key, pos = _varint(header, pos)
        field_no, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(header, pos)
            if field_no == _PAYLOAD_SIZE_FIELD:
                size = value
        elif wire == 2:
            length, pos = _varint(header, pos)
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return size


def check_complete_report(path: Path) -> None:
    """Raise when the report's own sizes run past the end of the file (it was cut short).

    A block header this reader cannot parse is let through (ncu_report then judges the file);
    only sizes that provably exceed the file are refused.
    """
    data = Path(path).read_bytes()
    pos, end, first = len(REPORT_MAGIC), len(data), True
    while pos < end:
        need = pos + 4
        if need <= end:
            size = int.from_bytes(data[pos:pos + 4], "little")
            need += size
        if need <= end and not first:
            try:
                need += _payload_size(data[pos + 4:need])
            except ValueError:
                return
        if need > end:
            raise UserError(f"{path}: the report is cut short (a block ends at byte {need:,}, the "
                            f"file has {end:,} bytes); copy it again or re-run ncu")
        pos, first = need, False


def _extras_candidates() -> list[Path]:
    """Where Nsight Compute keeps ncu_report.py, for machines without the PyPI package."""
    out: list[Path] = []
    ncu = shutil.which("ncu")
    if ncu:
        real = Path(ncu).resolve().parent
        out += [real / "extras" / "python", real.parent / "extras" / "python"]
    for root in (Path("/opt/nvidia"), Path("/usr/local/cuda")):
        out += sorted(root.glob("nsight-compute*/extras/python"), reverse=True)
        out += sorted(root.glob("nsight-compute/*/extras/python"), reverse=True)
    return out


def ensure_ncu_report() -> Any:
    """Import ncu_report: the PyPI package, else Nsight Compute's own copy."""
    try:
        import ncu_report

        return ncu_report
    except ImportError:
        pass
    for folder in _extras_candidates():
        if (folder / "ncu_report.py").is_file():
            sys.path.insert(0, str(folder))
            try:
                import ncu_report

                return ncu_report
            except ImportError:
                sys.path.remove(str(folder))
    raise UserError("the ncu_report module is missing: `pip install ncu-report`, or put Nsight "
                    "Compute's extras/python folder on PYTHONPATH")


def _name_matcher(kernel_name: str | None) -> Callable[[str], bool]:
    if not kernel_name:
        return lambda name: True
    if kernel_name.startswith("regex:"):
        try:
            pattern = re.compile(kernel_name[len("regex:"):])
        except re.error as exc:
            raise UserError(f"--kernel-name {kernel_name!r}: not a valid regular expression ({exc})") from None
        return lambda name: bool(pattern.search(name))
    return lambda name: name == kernel_name


def _chip_of(action: Any) -> str | None:
    try:
        major = action.metric_by_name("device__attribute_compute_capability_major").as_uint64()
        minor = action.metric_by_name("device__attribute_compute_capability_minor").as_uint64()
    except Exception:
        return None
    return CHIP_BY_CC.get((int(major), int(minor)))



def open_report(path: Path | str) -> tuple[Any, Any, Path]:
    """(ncu_report module, report context, checked path): the one place a report is opened, so a
    cut file and ncu_report's own failure read the same from every command."""
    ncu_report = ensure_ncu_report()
    path = check_report_file(Path(path))
    try:
        ctx = ncu_report.load_report(str(path))
    except Exception as exc:  # ncu_report raises plain exceptions with a message
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: ncu_report could not read it ({first})") from None
    return ncu_report, ctx, path

def read_rows(path: Path | str, keep_all: bool = False, keep: Iterable[str] = (),
              nvtx_include: Iterable[str] = (), kernel_name: str | None = None) -> dict[str, Any]:
    """The report as plain rows (no pandas): identity from NVTX, metric, value, unit.

    Rows carry no condition; derived hit rates are appended per kernel. `nvtx_include` selects
    kernels with ncu's own NVTX filter syntax (ncu_report's `actions_by_nvtx`, the same matcher
    `ncu --nvtx-include` uses); `kernel_name` is a function name or `regex:<pattern>`.
    """
    includes = list(nvtx_include)
    name_match = _name_matcher(kernel_name)
    ncu_report, ctx, path = open_report(path)
    if ctx.num_ranges() == 0:
        raise UserError(f"{path}: no profiled kernels in it (empty or truncated report?)")
    string_kind = ncu_report.IMetric.ValueKind_STRING
    keep = set(keep)
    rows: list[dict[str, Any]] = []
    chip = None
    launch = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        wanted = set(rng.actions_by_nvtx(includes, [])) if includes else None
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            chip = chip or _chip_of(action)
            if (wanted is not None and a not in wanted) or not name_match(action.name()):
                launch += 1
                continue
            nvtx = innermost_range(action)
            ident = parse_range_name(nvtx)
            base = {"cell": ident["cell"], "role": ident["role"], "family": ident["family"],
                    "rung": ident["rung"], "pin": ident["pin"],
                    "profile": ident["profile"], "table": ident["table"], "batch": ident["batch"],
                    "kernel": action.name(), "nvtx_range": nvtx, "l2_state": ident["l2_state"],
                    "report": path.name, "launch": launch}
            values: dict[str, tuple[float, str]] = {}
            for name in action.metric_names():
                if not keep_all and name not in keep and _is_noise(name):
                    continue
                metric = action.metric_by_name(name)
                value = _numeric_value(metric, string_kind)
                if value is None:
                    continue
                values[name] = (value, metric.unit())
            if not keep_all:
                _drop_extra_rollups(values, keep)
            for name, (value, unit) in sorted(values.items()):
                rows.append({**base, "metric": name, "value": value, "unit": unit})
            for d in derived_specs(values):
                rate = d.compute(values[d.hits][0], values[d.misses][0])
                if rate is not None:
                    rows.append({**base, "metric": d.name, "value": rate, "unit": "%"})
            launch += 1
    return {"rows": rows, "chip": chip}


def _read_rows_isolated(path: Path, keep_all: bool, keep: Iterable[str], nvtx_include: Iterable[str] = (),
                        kernel_name: str | None = None) -> dict[str, Any]:
    """read_rows in a fresh interpreter that loads ncu_report before numpy (see module doc)."""
    import l2attr

    argv = [sys.executable, "-m", "l2attr.profile.ncu_import", str(path), "--keep", ",".join(keep)]
    if keep_all:
        argv.append("--keep-all")
    for inc in nvtx_include:
        argv += ["--nvtx-include", inc]
    if kernel_name:
        argv += ["--kernel-name", kernel_name]
    env = dict(os.environ)
    root = str(Path(l2attr.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    res = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    try:
        data = json.loads(res.stdout) if res.stdout.strip() else {}
    except json.JSONDecodeError:
        data = {}
    if "error" in data:
        raise UserError(data["error"])
    if res.returncode != 0 or "rows" not in data:
        why = f"signal {-res.returncode}" if res.returncode < 0 else f"status {res.returncode}"
        tail = (res.stderr.strip().splitlines() or [""])[-1][:200]
        raise UserError(f"{path}: the ncu_report reader failed ({why}) {tail}".rstrip())
    return data


def read_report(path: Path | str, *, condition: str | Callable[[str], str] = "ladder",
                keep_all: bool = False, keep: Iterable[str] = (), isolate: bool = True,
                nvtx_include: Iterable[str] = (), kernel_name: str | None = None) -> ImportResult:
    """One row per (kernel launch, metric) of a report, in the METRICS schema plus extras.

    `condition` is a label for every row, or a function of the row's l2_state (control runs).
    `keep_all` keeps the device/launch/profiler attributes and rollups skipped by default; names
    in `keep` are kept whatever their prefix (a user who asked for `launch__grid_size` gets it).
    `isolate=False` reads in this process (safe only where ncu_report and numpy coexist).
    """
    path = check_report_file(Path(path))
    keep, includes = list(keep), list(nvtx_include)
    data = (_read_rows_isolated(path, keep_all, keep, includes, kernel_name) if isolate
            else read_rows(path, keep_all, keep, includes, kernel_name))
    rows = data["rows"]
    for row in rows:
        row["condition"] = condition(row["l2_state"]) if callable(condition) else condition
    df = _frame(rows)
    if (includes or kernel_name) and df.empty:
        raise UserError(f"{path}: no kernel matches the filter "
                        f"({', '.join([*includes, *([kernel_name] if kernel_name else [])])})")
    warnings = recorded_warnings(recorded_settings(path), df) + quality_warnings(df, keep)
    return ImportResult(df, warnings, data.get("chip"))


def _frame(rows: list[dict[str, Any]]) -> "pd.DataFrame":
    import pandas as pd

    from l2attr.schema import METRICS

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


# -- how the report was recorded ----------------------------------------------------------------
# An .ncu-rep stores the ncu command line that made it (seen in every report of ncu 2025.3.1 we
# hold). Options absent from it took ncu's defaults: kernel replay, cache control all, clocks base.
NCU_DEFAULTS = {"--replay-mode": "kernel", "--cache-control": "all", "--clock-control": "base"}
_NCU_COMMAND = re.compile(rb"[^\x00-\x1f]*?\bncu(?: [^\x00-\x1f]*)")


def recorded_settings(path: Path | str) -> dict[str, Any]:
    """The replay mode, cache and clock control a report was recorded with, from the command line
    stored in it; `command` is None when none was found (the settings are then unknown)."""
    data = Path(path).read_bytes()
    m = _NCU_COMMAND.search(data)
    if not m:
        return {"command": None}
    command = m.group(0).decode("utf-8", "replace")
    tokens = command.split()
    out: dict[str, Any] = {"command": command}
    for option, default in NCU_DEFAULTS.items():
        value = default
        for i, tok in enumerate(tokens):
            if tok == option and i + 1 < len(tokens):
                value = tokens[i + 1]
            elif tok.startswith(option + "="):
                value = tok.split("=", 1)[1]
        out[option.lstrip("-").replace("-", "_")] = value
    return out


def recorded_warnings(settings: dict[str, Any], df: "pd.DataFrame") -> list[str]:
    """Say so when the report cannot show cross-kernel L2 state (kernel or range replay restore
    memory between passes; cache control `all` flushes caches before every profiled kernel)."""
    out = []
    replay, cache = settings.get("replay_mode"), settings.get("cache_control")
    backed_up = (not df.empty and (df["metric"] == "profiler__replayer_bytes_mem_backed_up.sum").any()
                 and (df.loc[df["metric"] == "profiler__replayer_bytes_mem_backed_up.sum", "value"] > 0).any())
    if replay in ("kernel", "range") or backed_up:
        out.append(f"recorded with --replay-mode {replay or 'kernel (device memory was backed up between passes)'}: "
                   "memory is saved and restored between replay passes, so this report cannot show L2 state "
                   "left by an earlier kernel (NOTES trap 1)")
    if cache == "all":
        out.append("recorded with --cache-control all (ncu's default): caches are flushed before every "
                   "profiled kernel, so this report cannot show L2 state left by an earlier kernel")
    if settings.get("command") is None:
        out.append("the report holds no ncu command line: how it was recorded (replay mode, cache control) "
                   "is unknown")
    return out


# -- checks --------------------------------------------------------------------------------------

def quality_warnings(df: "pd.DataFrame", expected: Iterable[str] = ()) -> list[str]:
    """What a reader must know before trusting the numbers (never a silent zero).

    * an expected metric missing from every kernel, or zero on every kernel;
    * a percentage outside [0, 100] (inputs from different passes, NOTES trap 4);
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


def is_derived(metric: str) -> bool:
    return metric.startswith(DERIVED_PREFIX)


def _main(argv: list[str]) -> int:
    """Child entry: `python -m l2attr.profile.ncu_import REPORT [--keep a,b] [--keep-all]` -> JSON."""
    try:
        ensure_ncu_report()  # first, before anything can load numpy
    except UserError as exc:
        print(json.dumps({"error": str(exc)}))
        return 3
    import argparse

    ap = argparse.ArgumentParser(prog="python -m l2attr.profile.ncu_import")
    ap.add_argument("report")
    ap.add_argument("--keep", default="")
    ap.add_argument("--keep-all", action="store_true")
    ap.add_argument("--nvtx-include", action="append", default=[])
    ap.add_argument("--kernel-name")
    a = ap.parse_args(argv)
    try:
        data = read_rows(a.report, a.keep_all, [k for k in a.keep.split(",") if k], a.nvtx_include,
                         a.kernel_name)
    except UserError as exc:
        print(json.dumps({"error": str(exc)}))
        return 3
    json.dump(data, sys.stdout)
    return 0


__all__ = [
    "ImportResult", "parse_range_name", "control_condition", "innermost_range", "read_report",
    "read_rows", "import_reports", "quality_warnings", "csv_order", "is_derived", "ensure_ncu_report",
    "check_report_file", "EXTRA_COLUMNS", "recorded_settings", "recorded_warnings",
]

if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
